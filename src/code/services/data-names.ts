// The checks a `data` service argument passes before anything reads with it: schema names and object keys.
// Pure; shared by the service on the main thread and by the code threads' local reads (local-reads.ts), so a
// read answered on either side accepts exactly the same arguments.

/** Names that could reach Object.prototype in a careless lookup; never a field or schema name. */
export const RESERVED = new Set(["__proto__", "constructor", "prototype"]);
export const NAME_RE = /^[A-Za-z0-9_]{1,64}$/;
const SCHEMA_RE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** The schema a name addresses (names are case-insensitive, as in REST paths), or null when it is not a name. */
export function schemaNameOf(v: unknown): string | null {
  if (typeof v !== "string" || !SCHEMA_RE.test(v) || RESERVED.has(v.toLowerCase())) return null;
  return v.toLowerCase();
}

/** An object key: a string of 1 to 256 characters without control characters. */
export function isObjectKey(v: unknown): v is string {
  return typeof v === "string" && v.length > 0 && v.length <= 256 && !/[\u0000-\u001f]/.test(v);
}
