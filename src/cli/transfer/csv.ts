// CSV for imports: a streaming RFC 4180 parser (quoted fields, doubled quotes, line breaks inside quotes, CRLF)
// that reports each record's first line number, the conversion of a cell to a field's type, and the type a
// column's values imply when development infers a schema. Pure.

import type { FieldDef } from "../../schema/definition.ts";

export interface CsvRecord {
  /** 1-based line number where the record starts. */
  line: number;
  cells: string[];
}

/** Longest field accepted (a runaway quote would otherwise swallow the rest of the file). */
const MAX_FIELD = 16 * 1024 * 1024;

/** Feed text chunks; complete records come out of push() and end(). */
export class CsvParser {
  private field = "";
  private cells: string[] = [];
  private quoted = false;
  /** Inside quotes, the last character was a quote (either the closing one or the first of a doubled pair). */
  private quoteSeen = false;
  private line = 1;
  private start = 1;
  private pendingCr = false;
  private any = false;

  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.pendingCr) {
        this.pendingCr = false;
        if (c === 10) continue; // the \n of \r\n
      }
      if (this.quoted) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (c === 34) {
            this.field += '"';
            continue;
          }
          this.quoted = false; // the quote closed the field; fall through to the unquoted handling of c
        } else if (c === 34) {
          this.quoteSeen = true;
          continue;
        } else {
          if (c === 10) this.line++;
          this.field += text[i];
          if (this.field.length > MAX_FIELD) throw new CsvError(this.start, "a quoted field runs past 16 MB (an unclosed quote?)");
          continue;
        }
      }
      if (c === 44) {
        this.cells.push(this.field);
        this.field = "";
        this.any = true;
      } else if (c === 10 || c === 13) {
        if (c === 13) this.pendingCr = true;
        this.finish(out);
        this.line++;
        this.start = this.line;
      } else if (c === 34 && this.field === "") {
        this.quoted = true;
        this.any = true;
      } else {
        this.field += text[i];
        this.any = true;
      }
    }
    return out;
  }

  end(): CsvRecord[] {
    if (this.quoted && !this.quoteSeen) throw new CsvError(this.start, "the file ends inside a quoted field");
    this.quoted = false;
    this.quoteSeen = false;
    const out: CsvRecord[] = [];
    this.finish(out);
    return out;
  }

  private finish(out: CsvRecord[]): void {
    if (this.any || this.field !== "") {
      this.cells.push(this.field);
      out.push({ line: this.start, cells: this.cells });
    }
    this.cells = [];
    this.field = "";
    this.any = false;
  }
}

export class CsvError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** Parse a whole CSV text (tests and small files). */
export function parseCsv(text: string): CsvRecord[] {
  const p = new CsvParser();
  return [...p.push(text), ...p.end()];
}

const INT_RE = /^[-+]?\d+$/;
const FLOAT_RE = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const TRUE = new Set(["true", "1", "yes", "y", "t"]);
const FALSE = new Set(["false", "0", "no", "n", "f"]);

/** A cell's value as the JSON a create body would carry; undefined for an empty cell (the field stays unset). */
export function csvValue(def: FieldDef, cell: string): unknown {
  if (cell === "") return undefined;
  switch (def.type) {
    case "integer": {
      const t = cell.trim();
      if (!INT_RE.test(t)) throw new Error(`"${clip(cell)}" is not an integer`);
      const n = Number(t);
      if (!Number.isSafeInteger(n)) throw new Error(`${clip(cell)} is out of the integer range`);
      return n;
    }
    case "float": {
      const t = cell.trim();
      if (!FLOAT_RE.test(t)) throw new Error(`"${clip(cell)}" is not a number`);
      return Number(t);
    }
    case "boolean": {
      const t = cell.trim().toLowerCase();
      if (TRUE.has(t)) return true;
      if (FALSE.has(t)) return false;
      throw new Error(`"${clip(cell)}" is not a boolean (true/false, 1/0, yes/no)`);
    }
    case "array":
      return listOf(cell, (s) => csvValue({ type: def.items! }, s));
    case "relationship":
      return def.many ? listOf(cell, (s) => s) : cell;
    case "geopoint":
      return geopointOf(cell);
    default:
      return cell; // string, password (hashed on import), binary (its URL, kept)
  }
}

/** A JSON array, or a comma-separated list (items trimmed). */
function listOf(cell: string, item: (s: string) => unknown): unknown[] {
  const t = cell.trim();
  if (t.startsWith("[")) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      throw new Error(`"${clip(cell)}" is not a JSON array`);
    }
    if (!Array.isArray(v)) throw new Error(`"${clip(cell)}" is not a JSON array`);
    return v;
  }
  return t
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(item);
}

/** `lat,lon`, `lat lon` or `{"lat": .., "lon": ..}`. */
function geopointOf(cell: string): unknown {
  const t = cell.trim();
  if (t.startsWith("{")) {
    try {
      return JSON.parse(t);
    } catch {
      throw new Error(`"${clip(cell)}" is not a geopoint (lat,lon)`);
    }
  }
  const parts = t.split(/[\s,;]+/);
  if (parts.length !== 2 || !parts.every((p) => FLOAT_RE.test(p))) throw new Error(`"${clip(cell)}" is not a geopoint (lat,lon)`);
  return { lat: Number(parts[0]), lon: Number(parts[1]) };
}

/** createddate/lastmoddate from a cell: UTC milliseconds or an ISO 8601 date. */
export function csvDate(cell: string): number | undefined {
  const t = cell.trim();
  if (t === "") return undefined;
  if (INT_RE.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (!Number.isFinite(ms)) throw new Error(`"${clip(cell)}" is neither UTC milliseconds nor an ISO 8601 date`);
  return ms;
}

/** The type the non-empty values of a new column imply: integer, float, boolean, or string. */
export function inferCsvColumn(values: readonly string[]): FieldDef {
  const seen = values.map((v) => v.trim()).filter((v) => v !== "");
  if (seen.length === 0) return { type: "string" };
  if (seen.every((v) => INT_RE.test(v) && Number.isSafeInteger(Number(v)))) return { type: "integer" };
  if (seen.every((v) => FLOAT_RE.test(v))) return { type: "float" };
  if (seen.every((v) => /^(true|false)$/i.test(v))) return { type: "boolean" };
  return { type: "string" };
}

export function clip(s: string, n = 40): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
