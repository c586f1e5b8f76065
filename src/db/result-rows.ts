// Result rows shaped like libsql's: named enumerable columns plus non-enumerable index getters and `length`, built
// from bun:sqlite's value arrays (BLOBs become ArrayBuffers, big integers follow the client's intMode).
import type { IntMode, Row } from "@libsql/core/api";

/** A value as bun:sqlite binds or returns it. */
export type SqlValue = string | number | bigint | null | Uint8Array;

export type RowShape = { proto: object; names: (string | undefined)[] };
const shapes = new Map<string, RowShape>();

/**
 * Rows own only their named, enumerable properties; one prototype per column list carries the non-enumerable `length`
 * and index getters. A repeated column name (or `length`/`__proto__`) keeps its value in a non-enumerable own index
 * property instead, and the name refers to the first such column, as in libsql.
 */
export function rowShape(columns: string[]): RowShape {
  const key = columns.join("\0");
  let shape = shapes.get(key);
  if (shape) return shape;
  const proto = Object.defineProperty({}, "length", { value: columns.length });
  const seen = new Set(["length", "__proto__"]);
  const names = columns.map((name, i) => {
    if (seen.has(name)) return undefined;
    seen.add(name);
    Object.defineProperty(proto, i, {
      get(this: Record<string, unknown>) {
        return this[name];
      },
    });
    return name;
  });
  if (shapes.size >= 1000) shapes.clear();
  shapes.set(key, (shape = { proto, names }));
  return shape;
}

export function toRows({ proto, names }: RowShape, values: SqlValue[][], intMode: IntMode): Row[] {
  return values.map((vals) => {
    const row = Object.create(proto);
    for (let i = 0; i < vals.length; i++) {
      let v: unknown = vals[i];
      if (typeof v === "object" && v !== null) {
        const b = v as Uint8Array; // BLOB: libsql returns an ArrayBuffer
        v = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer;
      } else if (intMode === "string" && typeof v === "bigint") {
        v = String(v);
      }
      const name = names[i];
      if (name === undefined) Object.defineProperty(row, i, { value: v });
      else row[name] = v;
    }
    return row as Row;
  });
}
