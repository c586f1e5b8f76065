// Checks of the arguments custom code passes to the `data` service (parsed JSON from the guest): names, keys,
// objects, arrays, integers, with refusals that name the argument's path (`where.age.gt: expected ...`) and show
// what was sent briefly. `__proto__` is refused anywhere in a value headed for the datastore. Pure.

import { MAX_BATCH } from "../../datastore/datastore.ts";
import { badRequest } from "../../errors.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import { NAME_RE, RESERVED, isObjectKey, schemaNameOf } from "./data-names.ts";

export type Obj = Record<string, unknown>;
export type Scalar = string | number | boolean;

/** A problem with an argument: `<path>: <what is wrong>` (the op is prefixed once, where calls are dispatched). */
export const bad = (path: string, message: string) => badRequest(`${path}: ${message}`);

export const isScalar = (v: unknown): v is Scalar =>
  typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
/** Absent: JSON has no undefined, so an omitted optional argument or property may arrive as null. */
export const absent = (v: unknown) => v === undefined || v === null;

/** What was sent, briefly (never rendering a whole large or deep value). */
export function got(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

/** `.name` for plain names, `["odd name"]` (cut) for anything else, so injected text stays visibly quoted. */
export function member(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && key.length <= 64
    ? `.${key}`
    : `[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}]`;
}

/** A field name as a key of `where`, `set`, `increment`, or an argument: letters, digits and _, not a reserved name. */
export function fieldName(path: string, key: unknown): string {
  if (typeof key !== "string") throw bad(path, `expected a field name, got ${got(key)}`);
  if (RESERVED.has(key)) throw bad(path, `"${key}" is not allowed as a field name`);
  if (!NAME_RE.test(key)) throw bad(path, "not a field name (1 to 64 letters, digits and _)");
  return key;
}

export function schemaName(v: unknown): string {
  if (typeof v !== "string") throw bad("schema", `expected a schema name, got ${got(v)}`);
  const name = schemaNameOf(v);
  if (name === null) throw bad("schema", `${got(v)} is not a schema name`);
  return name;
}

export function objectKey(path: string, v: unknown): string {
  if (!isObjectKey(v)) throw bad(path, `expected an object key (a string of 1 to 256 characters, no control characters), got ${got(v)}`);
  return v;
}

export function plainObject(path: string, v: unknown): Obj {
  if (!isObj(v)) throw bad(path, `expected an object, got ${got(v)}`);
  return v;
}

/** Properties of an options object outside `allowed` are refused (a typo must not be ignored). */
export function onlyKeys(path: string, o: Obj, allowed: readonly string[]): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) throw bad(`${path}${member(k)}`, `unknown property; expected ${allowed.join(", ")}`);
}

/** Refuse `__proto__` anywhere inside a value headed for the datastore (walked without recursion). */
export function noProtoKeys(path: string, v: unknown): void {
  const stack: unknown[] = [v];
  while (stack.length) {
    const x = stack.pop();
    if (typeof x !== "object" || x === null) continue;
    if (Array.isArray(x)) {
      for (const item of x) stack.push(item);
      continue;
    }
    for (const k of Object.keys(x)) {
      if (k === "__proto__") throw bad(path, `"__proto__" is not allowed as a property name`);
      stack.push((x as Obj)[k]);
    }
  }
}

export function integerIn(path: string, v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max)
    throw bad(path, `expected an integer from ${min} to ${max}, got ${got(v)}`);
  return v;
}

export function arrayOf(path: string, v: unknown, min: number, max: number): unknown[] {
  if (!Array.isArray(v)) throw bad(path, `expected an array, got ${got(v)}`);
  if (v.length < min || v.length > max) throw bad(path, `expected ${min} to ${max} elements, got ${v.length}`);
  return v;
}

export function objects(path: string, v: unknown): Obj[] {
  const list = arrayOf(path, v, 0, MAX_BATCH);
  for (const [i, o] of list.entries()) plainObject(`${path}[${i}]`, o);
  noProtoKeys(path, list);
  return list as Obj[];
}

export function scalars(path: string, v: unknown): Scalar[] {
  const list = arrayOf(path, v, 1, MAX_BATCH);
  list.forEach((x, i) => {
    if (!isScalar(x)) throw bad(`${path}[${i}]`, `expected a string, number or boolean, got ${got(x)}`);
  });
  return list as Scalar[];
}

/** The REST text of a scalar: numbers as JavaScript writes them, booleans as true/false. */
export const text = (v: Scalar) => (typeof v === "string" ? v : String(v));
