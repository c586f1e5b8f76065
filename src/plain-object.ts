// The one test for "a JSON object" (not null, not an array) that input checks across the server share.

export type PlainObject = Record<string, unknown>;

export function isPlainObject(v: unknown): v is PlainObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
