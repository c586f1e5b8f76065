// Field values between the data grid's text inputs and the API's JSON, by field type: parsing what an admin
// types (with the same words the API would use to refuse it) and showing stored values as short text. Pure: the
// unit tests run these functions directly.

export interface FieldDef {
  type: "string" | "integer" | "float" | "boolean" | "array" | "geopoint" | "binary" | "relationship" | "password";
  items?: "string" | "integer" | "float" | "boolean";
  schema?: string;
  many?: boolean;
}

export interface SchemaDef {
  name: string;
  fields: Record<string, FieldDef>;
  permissions: Record<string, unknown>;
  indexes: string[][];
  user?: { key: string; password: string; email?: string; forgotPassword?: boolean; singleSession?: boolean };
}

export const AUTO_FIELDS = ["createddate", "lastmoddate", "sm_owner"] as const;

export function primaryKeyOf(def: Pick<SchemaDef, "name" | "user">): string {
  return def.user ? def.user.key : `${def.name}_id`;
}

export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

const fail = (error: string): Parsed => ({ ok: false, error });

function scalar(type: "string" | "integer" | "float" | "boolean", text: string): Parsed {
  switch (type) {
    case "string":
      return { ok: true, value: text };
    case "integer":
      if (!/^\s*-?\d{1,16}\s*$/.test(text) || !Number.isSafeInteger(Number(text))) return fail(`"${text}" is not an integer`);
      return { ok: true, value: Number(text) };
    case "float": {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n)) return fail(`"${text}" is not a number`);
      return { ok: true, value: n };
    }
    case "boolean": {
      const t = text.trim().toLowerCase();
      if (t === "true") return { ok: true, value: true };
      if (t === "false") return { ok: true, value: false };
      return fail(`"${text}" is not true or false`);
    }
  }
}

/** Split a list the way an admin writes it: a JSON array, or values separated by commas. */
function listOf(text: string): string[] | Parsed {
  const t = text.trim();
  if (t === "") return [];
  if (t.startsWith("[")) {
    try {
      const v = JSON.parse(t);
      if (!Array.isArray(v)) return fail("not a JSON array");
      return v.map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
    } catch (e) {
      return fail(`not valid JSON: ${(e as Error).message}`);
    }
  }
  return t.split(",").map((s) => s.trim());
}

/**
 * The JSON value of what was typed into a field of this type. An empty input clears the field (null) except for
 * strings, where it is the empty string; the literal `null` clears any field.
 */
export function parseInput(field: FieldDef, text: string): Parsed {
  if (text.trim() === "null") return { ok: true, value: null };
  if (text === "" && field.type !== "string") return { ok: true, value: null };
  switch (field.type) {
    case "string":
    case "password":
      return { ok: true, value: text };
    case "integer":
    case "float":
    case "boolean":
      return scalar(field.type, text);
    case "array": {
      const items = listOf(text);
      if (!Array.isArray(items)) return items;
      const out: unknown[] = [];
      for (const item of items) {
        const p = scalar(field.items ?? "string", item);
        if (!p.ok) return fail(`item ${out.length + 1}: ${p.error}`);
        out.push(p.value);
      }
      return { ok: true, value: out };
    }
    case "geopoint": {
      const m = /^\s*(-?\d+(?:\.\d+)?)\s*[,; ]\s*(-?\d+(?:\.\d+)?)\s*$/.exec(text);
      if (!m) return fail(`"${text}" is not "latitude, longitude"`);
      const lat = Number(m[1]);
      const lon = Number(m[2]);
      if (lat < -90 || lat > 90) return fail(`latitude ${lat} is not from -90 to 90`);
      if (lon < -180 || lon > 180) return fail(`longitude ${lon} is not from -180 to 180`);
      return { ok: true, value: { lat, lon } };
    }
    case "relationship": {
      if (!field.many) return { ok: true, value: text.trim() };
      const keys = listOf(text);
      return Array.isArray(keys) ? { ok: true, value: keys.filter((k) => k !== "") } : keys;
    }
    case "binary":
      return fail("choose a file to upload");
  }
}

/** A stored value as the grid and its editor show it. */
export function showValue(field: FieldDef | undefined, v: unknown): string {
  if (v === null || v === undefined) return "";
  if (field?.type === "geopoint" && typeof v === "object" && v !== null && "lat" in v) {
    const g = v as { lat: number; lon: number };
    return `${g.lat}, ${g.lon}`;
  }
  if (Array.isArray(v) && (field?.type === "array" || field?.type === "relationship"))
    return v.every((x) => typeof x !== "object") ? v.join(", ") : JSON.stringify(v);
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

const IMAGE_RE = /\.(png|jpe?g|gif|webp|avif|svg|bmp|ico)(\?|$)/i;

export function isImageUrl(v: unknown): v is string {
  return typeof v === "string" && IMAGE_RE.test(v);
}

/** The upload format of a binary field (docs/api/datastore.md#binary-fields): headers, a blank line, then base64. */
export function uploadValue(contentType: string, filename: string, bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  const safeName = filename.replace(/[\r\n";]/g, "_") || "file";
  return `Content-Type: ${contentType || "application/octet-stream"}\nContent-Disposition: attachment; filename=${safeName}\nContent-Transfer-Encoding: base64\n\n${btoa(binary)}`;
}

export interface Filter {
  field: string;
  op: string;
  value: string;
}

/** Operators the filter row offers, as the API spells them ("eq" is the bare field). */
export const FILTER_OPS: { op: string; label: string; needsValue: boolean }[] = [
  { op: "eq", label: "=", needsValue: true },
  { op: "ne", label: "≠", needsValue: true },
  { op: "lt", label: "<", needsValue: true },
  { op: "lte", label: "≤", needsValue: true },
  { op: "gt", label: ">", needsValue: true },
  { op: "gte", label: "≥", needsValue: true },
  { op: "in", label: "in", needsValue: true },
  { op: "nin", label: "not in", needsValue: true },
  { op: "null", label: "is null", needsValue: false },
  { op: "empty", label: "is empty", needsValue: false },
  { op: "near", label: "near", needsValue: true },
  { op: "within", label: "within", needsValue: true },
];

/** The query string of a list of filters (the API's syntax: field=v, field[op]=v). */
export function filtersToQuery(filters: Filter[]): string {
  const q = new URLSearchParams();
  for (const f of filters) {
    if (!f.field) continue;
    const needs = FILTER_OPS.find((o) => o.op === f.op)?.needsValue ?? true;
    if (needs && f.value === "") continue;
    q.append(f.op === "eq" ? f.field : `${f.field}[${f.op}]`, needs ? f.value : "true");
  }
  return q.toString();
}

/** The total a Content-Range header gives: a number, "unknown" (`/*`), or null when absent. */
export function totalOf(contentRange: string | null): number | "unknown" | null {
  if (!contentRange) return null;
  const m = /\/(\d+|\*)\s*$/.exec(contentRange);
  if (!m) return null;
  return m[1] === "*" ? "unknown" : Number(m[1]);
}
