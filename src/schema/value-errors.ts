// Type mismatches of field values in words: where, what the field expects and what was sent, e.g.
// `tags[2]: expected string, got number 5`. Pure; the datastore wraps the detail in the legacy wording.

import type { FieldDef, ItemType } from "./definition.ts";

/** Longest rendering of a sent value in a message. */
const MAX_SHOWN = 40;
const SAFE_INTEGER = `an integer within ±${Number.MAX_SAFE_INTEGER}`;
const KEY = "(a string of 1 to 256 characters)";
export const GEOPOINT = 'geopoint {"lat": number, "lon": number}';
export const UPLOAD = "binary upload (Content-Type, Content-Disposition, Content-Transfer-Encoding: base64, a blank line, base64)";

/** A value that does not fit its field; `at` locates it inside the field's value ("[2]", ".lat"). */
export class ValueTypeError extends Error {
  constructor(
    readonly expected: string,
    readonly got: string,
    readonly at = "",
  ) {
    super(`value${at}: expected ${expected}, got ${got}`);
  }

  /** `<field><at>: expected <type>, got <what was sent>`. */
  detail(field: string): string {
    return `${field}${this.at}: expected ${this.expected}, got ${this.got}`;
  }
}

function shown(text: string): string {
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

/** What was sent: its JSON type and a short rendering (`string "high"`, `number 5`, `object {"a":1}`). */
export function describeValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "number" && !Number.isFinite(v)) return "a number beyond the float range";
  const type = Array.isArray(v) ? "array" : typeof v;
  return `${type} ${shown(JSON.stringify(v) ?? String(v))}`;
}

/** Whether a number is integral but beyond the safe range (1e20, 2^64, or an integer literal too large to hold). */
function isUnsafeInteger(v: unknown): v is number {
  return typeof v === "number" && (Number.isInteger(v) || !Number.isFinite(v)) && !Number.isSafeInteger(v);
}

/** A non-integer for an integer field: integers past ±2^53-1 are named as such, not as "number". */
export function integerMismatch(v: unknown, at = ""): ValueTypeError {
  if (isUnsafeInteger(v)) return new ValueTypeError(SAFE_INTEGER, `${shown(String(v))} (beyond the integer range)`, at);
  return new ValueTypeError("integer", describeValue(v), at);
}

/** What a field of this definition takes, in words. */
export function expectedOf(def: FieldDef): string {
  switch (def.type) {
    case "array":
      return `array of ${def.items}`;
    case "relationship":
      return def.many ? `array of ${def.schema} keys` : keyOf(def.schema);
    case "geopoint":
      return GEOPOINT;
    case "binary":
      return UPLOAD;
    case "password":
      return "non-empty string";
    default:
      return def.type;
  }
}

/** A key of a related object (or the primary key itself when no schema is named). */
export function keyOf(schema?: string): string {
  return `${schema ? `${schema} key` : "key"} ${KEY}`;
}

/** A whole value of the wrong type for its field. */
export function valueMismatch(def: FieldDef, v: unknown): ValueTypeError {
  return def.type === "integer" ? integerMismatch(v) : new ValueTypeError(expectedOf(def), describeValue(v));
}

/** An item of an array field that does not fit the item type. */
export function itemMismatch(items: ItemType, v: unknown, index: number): ValueTypeError {
  return items === "integer" ? integerMismatch(v, `[${index}]`) : new ValueTypeError(items, describeValue(v), `[${index}]`);
}

const TEXT_EXPECTED: Record<ItemType, string> = { string: "string", integer: "integer", float: "float", boolean: "true or false" };

/** A value written as text (a query condition, a URL segment) that does not convert to `type`. */
export function textMismatch(type: ItemType, raw: string): ValueTypeError {
  const trimmed = raw.trim();
  if (type === "integer" && /^[-+]?\d+$/.test(trimmed))
    return new ValueTypeError(SAFE_INTEGER, `${shown(trimmed)} (beyond the integer range)`);
  return new ValueTypeError(TEXT_EXPECTED[type], shown(JSON.stringify(raw)));
}
