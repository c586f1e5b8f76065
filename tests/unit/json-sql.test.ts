// Object rendering inside SQLite (src/schema/json-sql.ts): NULL fields are left out, every type keeps its
// value, members keep definition order, and wide schemas (past SQLite's function-argument cap) still render.

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import type { FieldDef, SchemaDef } from "../../src/schema/definition.ts";
import { objectJsonSql } from "../../src/schema/json-sql.ts";
import { columnsOf, createTableSql } from "../../src/schema/layout.ts";
import { encodeValue } from "../../src/schema/values.ts";

const TYPES: FieldDef[] = [
  { type: "string" },
  { type: "integer" },
  { type: "float" },
  { type: "boolean" },
  { type: "array", items: "integer" },
  { type: "relationship", schema: "x", many: false },
  { type: "relationship", schema: "x", many: true },
  { type: "binary" },
];
const SAMPLES: unknown[] = ['a "q" \\ ✓ 😀\n', Number.MAX_SAFE_INTEGER, 1 / 3, false, [1, -2, 3], "k1", ["k1", "k2"], "http://h/_files/f"];

/** A table of `n` fields (types cycling, plus one geopoint) and an insert of one row; null where `isNull(i)`. */
function setup(n: number, isNull: (i: number) => boolean) {
  const fields: Record<string, FieldDef> = { at: { type: "geopoint" } };
  for (let i = 0; i < n; i++) fields[`f${i}`] = TYPES[i % TYPES.length]!;
  const def = {
    name: "wide",
    fields,
    permissions: { create: "open", read: "open", update: "open", delete: "open" },
    indexes: [],
  } as unknown as SchemaDef;
  const db = new Database(":memory:");
  db.run(createTableSql(def));
  const cols: string[] = ["wide_id"];
  const args: (string | number | null)[] = ["w1"];
  const expected: Record<string, unknown> = { wide_id: "w1", at: { lat: 1.5, lon: -2.25 } };
  cols.push(...columnsOf("at", fields.at!));
  args.push(...(encodeValue(fields.at!, { lat: 1.5, lon: -2.25 }) as number[]));
  for (let i = 0; i < n; i++) {
    const value = isNull(i) ? null : SAMPLES[i % SAMPLES.length]!;
    cols.push(`f${i}`);
    const def = fields[`f${i}`]!;
    // A binary field stores its file's URL (uploads are decoded before encodeValue would see them).
    args.push(value === null ? null : def.type === "binary" ? (value as string) : (encodeValue(def, value)[0] as string | number));
    if (value !== null) expected[`f${i}`] = value;
  }
  cols.push("createddate", "lastmoddate", "sm_owner");
  args.push(1, 2, null);
  Object.assign(expected, { createddate: 1, lastmoddate: 2 });
  db.query(`INSERT INTO o_wide (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...args);
  const render = (opts?: Parameters<typeof objectJsonSql>[3]) =>
    (db.query(`SELECT ${objectJsonSql("wide_id", Object.entries(fields), "t", opts).sql} AS j FROM o_wide AS t`).get() as { j: string }).j;
  return { render, expected };
}

describe("objectJsonSql", () => {
  test("leaves out NULL fields and keeps the others' values and definition order", () => {
    const { render, expected } = setup(16, (i) => i >= 8);
    const text = render();
    expect(text).not.toContain("null");
    expect(JSON.parse(text)).toEqual(expected);
    expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(expected));
    expect(text).toContain(`"f1":${Number.MAX_SAFE_INTEGER}`);
    expect(JSON.parse(text).f2).toBe(1 / 3);
  });

  test("every field NULL: only the key and the dates", () => {
    const { render } = setup(8, () => true);
    expect(JSON.parse(render())).toEqual({ wide_id: "w1", at: { lat: 1.5, lon: -2.25 }, createddate: 1, lastmoddate: 2 });
  });

  test("wide schemas render in chunks (past SQLite's argument cap), NULLs left out in every chunk", () => {
    for (const n of [59, 60, 61, 200, 600]) {
      const { render, expected } = setup(n, (i) => i % 3 === 1);
      const parsed = JSON.parse(render());
      expect(parsed).toEqual(expected);
      expect(Object.keys(parsed)).toEqual(Object.keys(expected));
    }
  });

  test("select narrows (NULL selected fields left out too); a near distance joins the geopoint", () => {
    const { render } = setup(8, (i) => i === 1);
    expect(JSON.parse(render({ only: new Set(["f0", "f1"]) }))).toEqual({ wide_id: "w1", f0: SAMPLES[0] });
    expect(JSON.parse(render({ only: new Set(["at"]), distance: { field: "at", sql: "0.5" } }))).toEqual({
      wide_id: "w1",
      at: { lat: 1.5, lon: -2.25, distance: 0.5 },
    });
  });
});
