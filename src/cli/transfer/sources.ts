// What an import reads, as sources: one input file bound for one schema, yielding records (a body, or the
// reason the line could not become one) with their line numbers. The export format's JSON Lines, CSV with a
// header row, and Parse Server class files (parse-import.ts builds those).

import { basename } from "node:path";
import type { SavedFile } from "../../files/files.ts";
import type { FieldDef } from "../../schema/definition.ts";
import type { CompiledSchema } from "../../schema/compiled.ts";
import { CsvError, CsvParser, type CsvRecord, clip, csvDate, csvValue, inferCsvColumn } from "./csv.ts";
import { readChunks, readLines } from "./line-reader.ts";

/**
 * One record: its number in the source, a body or why there is none, the position a resumed read starts after (a
 * live pull's objectId; files resume by line) and files already stored for it (their rows go in with the object).
 */
export type SourceRecord = ({ body: Record<string, unknown> } | { error: string }) & { line: number; cursor?: string; files?: SavedFile[] };

export interface Source {
  /** Input path (absolute) and the name shown in reports. */
  path: string;
  file: string;
  schema: string;
  /** "line" (text files) or "object" (the n-th object of a JSON document). */
  unit: "line" | "object";
  /** Field definitions implied by the data (Parse: relationships, binary, geopoints), for development inference. */
  declared: Map<string, FieldDef>;
  /**
   * Read over the network rather than from a file (a live pull): nothing to stat, progress counts objects out of
   * `total`, records resume after the checkpoint's cursor, and stored files are tied to objects by `pk`.
   */
  remote?: { total: number; pk: string };
  /** Batches of records; `bytes` is how far into the file the reader got (a remote source: objects read). */
  records(resume?: { line: number; cursor: string | null }): AsyncGenerator<{ records: SourceRecord[]; bytes: number }>;
}

/** One JSON Lines line (export format) as a body; empty lines are skipped. Pure. */
export function jsonlRecord(line: number, text: string): SourceRecord | null {
  if (text.trim() === "") return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { line, error: `not valid JSON (${(e as Error).message})` };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return { line, error: "not a JSON object" };
  return { line, body: v as Record<string, unknown> };
}

/** A JSON Lines file for `schema`. */
export function jsonlSource(path: string, schema: string): Source {
  return {
    path,
    file: basename(path),
    schema,
    unit: "line",
    declared: new Map(),
    async *records() {
      for await (const b of readLines(path)) {
        const out: SourceRecord[] = [];
        for (let i = 0; i < b.lines.length; i++) {
          const r = jsonlRecord(b.first + i, b.lines[i]!);
          if (r) out.push(r);
        }
        yield { records: out, bytes: b.bytes };
      }
    },
  };
}

/** Columns of a CSV header: the key, the automatic dates and sm_owner, or fields. */
export interface CsvColumns {
  names: string[];
  defs: (FieldDef | "key" | "date" | "owner")[];
}

/**
 * The header's columns against the schema (null when it does not exist yet); columns the schema lacks get the
 * type their sample values imply. Throws naming a column that is not a valid field name. Pure.
 */
export function csvColumns(
  header: readonly string[],
  schemaName: string,
  schema: CompiledSchema | null,
  sample: readonly CsvRecord[],
): { columns: CsvColumns; additions: Record<string, FieldDef> } {
  const pk = schema?.pk ?? `${schemaName}_id`;
  const names = header.map((h) => h.trim());
  const additions: Record<string, FieldDef> = {};
  const defs = names.map((n, i) => {
    if (names.indexOf(n) !== i) throw new Error(`column "${clip(n)}" appears twice in the header`);
    if (n === pk) return "key" as const;
    if (n === "createddate" || n === "lastmoddate") return "date" as const;
    if (n === "sm_owner") return "owner" as const;
    const known = schema?.fields.get(n);
    if (known) return known;
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(n))
      throw new Error(`column "${clip(n)}" is not a valid field name (lowercase letters, digits and _, starting with a letter)`);
    const def = inferCsvColumn(sample.map((r) => r.cells[i] ?? ""));
    additions[n] = def;
    return def;
  });
  return { columns: { names, defs }, additions };
}

/** One CSV record as a body by the columns' types; the reason when a cell does not convert. Pure. */
export function csvRecord(rec: CsvRecord, columns: CsvColumns): SourceRecord {
  if (rec.cells.length !== columns.names.length)
    return { line: rec.line, error: `${rec.cells.length} cells where the header has ${columns.names.length}` };
  const body: Record<string, unknown> = {};
  for (let i = 0; i < rec.cells.length; i++) {
    const name = columns.names[i]!;
    const def = columns.defs[i]!;
    const cell = rec.cells[i]!;
    try {
      const v = def === "key" || def === "owner" ? (cell === "" ? undefined : cell) : def === "date" ? csvDate(cell) : csvValue(def, cell);
      if (v !== undefined) body[name] = v;
    } catch (e) {
      return { line: rec.line, error: `${name}: ${(e as Error).message}` };
    }
  }
  return { line: rec.line, body };
}

/** The first records of a CSV file (the header and a sample to infer new columns from). */
export async function csvHead(path: string, n: number): Promise<CsvRecord[]> {
  const p = new CsvParser();
  const out: CsvRecord[] = [];
  for await (const c of readChunks(path)) {
    out.push(...p.push(c.text));
    if (out.length > n) return out.slice(0, n + 1);
  }
  out.push(...p.end());
  return out.slice(0, n + 1);
}

/** A CSV file for `schema` whose columns are known (csvColumns). */
export function csvSource(path: string, schema: string, columns: () => CsvColumns): Source {
  return {
    path,
    file: basename(path),
    schema,
    unit: "line",
    declared: new Map(),
    async *records() {
      const p = new CsvParser();
      let header = true;
      const convert = (recs: CsvRecord[]) => {
        const out: SourceRecord[] = [];
        for (const r of recs) {
          if (header) header = false;
          else out.push(csvRecord(r, columns()));
        }
        return out;
      };
      let bytes = 0;
      for await (const c of readChunks(path)) {
        bytes = c.bytes;
        try {
          yield { records: convert(p.push(c.text)), bytes };
        } catch (e) {
          if (e instanceof CsvError) throw new Error(`${basename(path)} line ${e.line}: ${e.message}`);
          throw e;
        }
      }
      try {
        yield { records: convert(p.end()), bytes };
      } catch (e) {
        if (e instanceof CsvError) throw new Error(`${basename(path)} line ${e.line}: ${e.message}`);
        throw e;
      }
    },
  };
}
