// Custom code's `data` service, host side: checks each call's arguments (parsed JSON from the guest) and turns
// the structured queries of sandbox/burrow.d.ts into the datastore's QueryTree, with the REST string forms of
// values, so the datastore validates and compiles them exactly as it does for the REST API. Objects go back as
// the JSON text SQLite rendered (RawJson), never parsed and serialized again.

import { type Datastore, MAX_BATCH } from "../../datastore/datastore.ts";
import * as L from "../../datastore/query/limits.ts";
import type { ReadShape } from "../../datastore/query/parse.ts";
import type { Clause, Conditions, Op, OrderKey, QueryTree, Range } from "../../datastore/query/tree.ts";
import { ApiError, badRequest, notFound } from "../../errors.ts";
import type { ApiContext } from "../../request-context.ts";
import { RawJson } from "../raw-json.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import { NAME_RE, RESERVED, isObjectKey, schemaNameOf } from "./data-names.ts";

export const DATA_OPS: readonly string[] = [
  "create",
  "createMany",
  "read",
  "query",
  "count",
  "update",
  "updateWhere",
  "delete",
  "deleteWhere",
  "addRelated",
  "createRelated",
  "removeRelated",
  "schemas",
  "userSchema",
];

type Obj = Record<string, unknown>;
type Scalar = string | number | boolean;

const OPERATORS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "null", "empty", "near", "within"] as const;
const QUERY_KEYS = ["where", "or", "select", "expand", "orderBy", "start", "end", "limit"] as const;
const CONDITION_KEYS = ["where", "or"] as const;

// ---------------------------------------------------------------- argument checks

/** A problem with an argument: `<path>: <what is wrong>` (the op is prefixed once, where calls are dispatched). */
const bad = (path: string, message: string) => badRequest(`${path}: ${message}`);

const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
/** Absent: JSON has no undefined, so an omitted optional argument or property may arrive as null. */
const absent = (v: unknown) => v === undefined || v === null;

/** What was sent, briefly (never rendering a whole large or deep value). */
function got(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

/** `.name` for plain names, `["odd name"]` (cut) for anything else, so injected text stays visibly quoted. */
function member(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && key.length <= 64 ? `.${key}` : `[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}]`;
}

/** A field name as a key of `where`, `set`, `increment`, or an argument: letters, digits and _, not a reserved name. */
function fieldName(path: string, key: unknown): string {
  if (typeof key !== "string") throw bad(path, `expected a field name, got ${got(key)}`);
  if (RESERVED.has(key)) throw bad(path, `"${key}" is not allowed as a field name`);
  if (!NAME_RE.test(key)) throw bad(path, "not a field name (1 to 64 letters, digits and _)");
  return key;
}

function schemaName(v: unknown): string {
  if (typeof v !== "string") throw bad("schema", `expected a schema name, got ${got(v)}`);
  const name = schemaNameOf(v);
  if (name === null) throw bad("schema", `${got(v)} is not a schema name`);
  return name;
}

function objectKey(path: string, v: unknown): string {
  if (!isObjectKey(v)) throw bad(path, `expected an object key (a string of 1 to 256 characters, no control characters), got ${got(v)}`);
  return v;
}

function plainObject(path: string, v: unknown): Obj {
  if (!isObj(v)) throw bad(path, `expected an object, got ${got(v)}`);
  return v;
}

/** Properties of an options object outside `allowed` are refused (a typo must not be ignored). */
function onlyKeys(path: string, o: Obj, allowed: readonly string[]): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw bad(`${path}${member(k)}`, `unknown property; expected ${allowed.join(", ")}`);
}

/** Refuse `__proto__` anywhere inside a value headed for the datastore (walked without recursion). */
function noProtoKeys(path: string, v: unknown): void {
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

function integerIn(path: string, v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) throw bad(path, `expected an integer from ${min} to ${max}, got ${got(v)}`);
  return v;
}

function arrayOf(path: string, v: unknown, min: number, max: number): unknown[] {
  if (!Array.isArray(v)) throw bad(path, `expected an array, got ${got(v)}`);
  if (v.length < min || v.length > max) throw bad(path, `expected ${min} to ${max} elements, got ${v.length}`);
  return v;
}

function objects(path: string, v: unknown): Obj[] {
  const list = arrayOf(path, v, 0, MAX_BATCH);
  list.forEach((o, i) => plainObject(`${path}[${i}]`, o));
  noProtoKeys(path, list);
  return list as Obj[];
}

function scalars(path: string, v: unknown): Scalar[] {
  const list = arrayOf(path, v, 1, MAX_BATCH);
  list.forEach((x, i) => {
    if (!isScalar(x)) throw bad(`${path}[${i}]`, `expected a string, number or boolean, got ${got(x)}`);
  });
  return list as Scalar[];
}

/** The REST text of a scalar: numbers as JavaScript writes them, booleans as true/false. */
const text = (v: Scalar) => (typeof v === "string" ? v : String(v));

// ---------------------------------------------------------------- structured query → QueryTree

/** Clauses counted against MAX_CLAUSES across a whole query (where and every OR alternative). */
interface Budget {
  clauses: number;
}

function scalarText(path: string, v: unknown): string {
  if (!isScalar(v)) throw bad(path, `expected a string, number or boolean, got ${got(v)}`);
  const s = text(v);
  if (s.length > L.MAX_VALUE_LENGTH) throw bad(path, `at most ${L.MAX_VALUE_LENGTH} characters`);
  return s;
}

function booleanText(path: string, v: unknown): string {
  if (typeof v !== "boolean") throw bad(path, `expected true or false, got ${got(v)}`);
  return String(v);
}

/** `in`/`nin`: the values joined with commas, so a string value cannot hold one. */
function listText(path: string, v: unknown): string {
  const list = arrayOf(path, v, 1, L.MAX_IN_VALUES);
  const parts = list.map((x, i) => {
    const s = scalarText(`${path}[${i}]`, x);
    if (s.includes(",")) throw bad(`${path}[${i}]`, `a value of in/nin cannot contain a comma (the values are joined with commas), got ${got(s)}`);
    return s;
  });
  const joined = parts.join(",");
  if (joined.length > L.MAX_VALUE_LENGTH * 16) throw bad(path, `the values are too long together (at most ${L.MAX_VALUE_LENGTH * 16} characters)`);
  return joined;
}

function coordinate(path: string, v: unknown): string {
  if (typeof v !== "number" || !Number.isFinite(v)) throw bad(path, `expected a number, got ${got(v)}`);
  return String(v);
}

/** near: {lat, lon, radius?} → "lat,lon[,radius]". */
function nearText(path: string, v: unknown): string {
  const o = plainObject(path, v);
  onlyKeys(path, o, ["lat", "lon", "radius"]);
  const point = `${coordinate(`${path}.lat`, o.lat)},${coordinate(`${path}.lon`, o.lon)}`;
  return absent(o.radius) ? point : `${point},${coordinate(`${path}.radius`, o.radius)}`;
}

/** within: {lat, lon, radius} → "lat,lon,radius", or {box: [latLL, lonLL, latUR, lonUR]} → the four joined. */
function withinText(path: string, v: unknown): string {
  const o = plainObject(path, v);
  if (Object.hasOwn(o, "box")) {
    onlyKeys(path, o, ["box"]);
    const box = arrayOf(`${path}.box`, o.box, 4, 4);
    return box.map((x, i) => coordinate(`${path}.box[${i}]`, x)).join(",");
  }
  onlyKeys(path, o, ["lat", "lon", "radius"]);
  if (absent(o.radius)) throw bad(path, "expected {lat, lon, radius} (radius in radians) or {box: [latLL, lonLL, latUR, lonUR]}");
  return `${coordinate(`${path}.lat`, o.lat)},${coordinate(`${path}.lon`, o.lon)},${coordinate(`${path}.radius`, o.radius)}`;
}

function operandText(op: Op, path: string, v: unknown): string {
  switch (op) {
    case "in":
    case "nin":
      return listText(path, v);
    case "null":
    case "empty":
      return booleanText(path, v);
    case "near":
      return nearText(path, v);
    case "within":
      return withinText(path, v);
    default:
      return scalarText(path, v);
  }
}

/** One condition on a field: a scalar (equality) or an object of operators, ANDed. `label` prefixes REST keys. */
function conditionClauses(path: string, field: string, cond: unknown, label: string, budget: Budget): Clause[] {
  const clause = (op: Op, value: string): Clause => {
    if (++budget.clauses > L.MAX_CLAUSES) throw bad(path, `at most ${L.MAX_CLAUSES} conditions per query`);
    return { field, op, value, key: `${label}${field}${op === "eq" ? "" : `[${op}]`}` };
  };
  if (isScalar(cond)) return [clause("eq", scalarText(path, cond))];
  if (cond === null) throw bad(path, "null is not a condition; use {null: true} to match objects where the field is unset");
  if (Array.isArray(cond)) throw bad(path, "an array is not a condition; use {in: [...]} to match any of several values");
  if (!isObj(cond)) throw bad(path, `expected a value or an object of operators, got ${got(cond)}`);
  const ops = Object.keys(cond);
  if (ops.length === 0) throw bad(path, `no operator given; operators: ${OPERATORS.join(", ")}`);
  return ops.map((name) => {
    if (!(OPERATORS as readonly string[]).includes(name)) throw bad(`${path}${member(name)}`, `unknown operator; operators: ${OPERATORS.join(", ")}`);
    const op = name as Op;
    return clause(op, operandText(op, `${path}.${op}`, cond[name]));
  });
}

/** A Where (fields to conditions, ANDed) as clauses. */
function whereClauses(path: string, where: unknown, label: string, budget: Budget): Clause[] {
  const o = plainObject(path, where);
  return Object.keys(o).flatMap((key) => {
    const at = `${path}${member(key)}`;
    return conditionClauses(at, fieldName(at, key), o[key], label, budget);
  });
}

/** `where` and `or` of a query: A AND (B OR C ...), the one OR block of the tree. */
function conditionsOf(q: Obj, budget: Budget): Conditions {
  const where = absent(q.where) ? [] : whereClauses("where", q.where, "", budget);
  if (absent(q.or)) return { where, or: null };
  const alternatives = arrayOf("or", q.or, 1, L.MAX_OR_ALTERNATIVES);
  const or = alternatives.map((alt, i) => {
    const group = whereClauses(`or[${i}]`, alt, `or[${i}].`, budget);
    if (group.length === 0) throw bad(`or[${i}]`, "an alternative needs at least one condition");
    return group;
  });
  return { where, or };
}

function selectPaths(path: string, v: unknown): string[][] {
  const list = arrayOf(path, v, 1, L.MAX_SELECT_PATHS);
  return list.map((p, i) => {
    const at = `${path}[${i}]`;
    if (typeof p !== "string") throw bad(at, `expected a field path, got ${got(p)}`);
    const parts = p.split(".");
    const ok = parts.length <= L.MAX_EXPAND + 1 && parts.every((s, j) => (NAME_RE.test(s) && !RESERVED.has(s)) || (s === "*" && j === parts.length - 1));
    if (!ok) throw bad(at, `${got(p)} is not a field, a dotted path into an expanded relationship, or <path>.*`);
    return parts;
  });
}

function expandDepth(path: string, v: unknown): number {
  return absent(v) ? 0 : integerIn(path, v, 0, L.MAX_EXPAND);
}

function orderKeys(path: string, v: unknown): OrderKey[] {
  const list = arrayOf(path, v, 0, L.MAX_ORDER_KEYS);
  return list.map((k, i) => {
    const at = `${path}[${i}]`;
    let field: unknown = k;
    let dir: unknown = "asc";
    if (typeof k === "string" && k.split(":").length <= 2) {
      const [name, direction] = k.split(":");
      field = name!.trim();
      dir = direction === undefined ? "asc" : direction.trim().toLowerCase();
    } else if (Array.isArray(k) && k.length === 2) [field, dir] = k;
    else throw bad(at, `expected "field", "field:desc" or ["field", "asc" | "desc"], got ${got(k)}`);
    if (dir !== "asc" && dir !== "desc") throw bad(at, `the direction is "asc" or "desc", got ${got(dir)}`);
    return { field: fieldName(at, field), desc: dir === "desc" };
  });
}

/** start/end/limit → a Range (end inclusive); `limit` 0 asks for nothing. */
function rangeOf(q: Obj): { range: Range | null; nothing: boolean } {
  const index = (name: "start" | "end" | "limit") => (absent(q[name]) ? null : integerIn(name, q[name], 0, L.MAX_RANGE_INDEX));
  const start = index("start");
  const end = index("end");
  const limit = index("limit");
  if (end !== null && limit !== null) throw bad("limit", "give either end or limit, not both");
  if (end !== null && start !== null && end < start) throw bad("end", `the last index (${end}) is before the first (${start})`);
  if (limit === 0) return { range: null, nothing: true };
  const first = start ?? 0;
  if (limit !== null) return { range: { start: first, end: Math.min(first + limit - 1, L.MAX_RANGE_INDEX) }, nothing: false };
  if (end !== null) return { range: { start: first, end }, nothing: false };
  return { range: start === null ? null : { start, end: null }, nothing: false };
}

/** The whole query of `query`: the tree, or `nothing` when `limit` is 0. Combinations refused as by parseQuery. */
function queryTree(v: unknown): { tree: QueryTree; nothing: boolean } {
  const q = absent(v) ? {} : plainObject("query", v);
  onlyKeys("query", q, QUERY_KEYS);
  const { where, or } = conditionsOf(q, { clauses: 0 });
  const { range, nothing } = rangeOf(q);
  const tree: QueryTree = {
    where,
    or,
    select: absent(q.select) ? null : selectPaths("select", q.select),
    expand: expandDepth("expand", q.expand),
    orderBy: absent(q.orderBy) ? [] : orderKeys("orderBy", q.orderBy),
    range,
  };
  if (or) {
    if (tree.orderBy.length) throw bad("or", "an OR block cannot be combined with orderBy");
    const geo = [...where, ...or.flat()].find((c) => c.op === "near" || c.op === "within");
    if (geo) throw bad("or", `an OR block cannot be combined with geo conditions (${geo.key})`);
  }
  return { tree, nothing };
}

/** `{where, or}` of count, updateWhere and deleteWhere. */
function conditionsArg(v: unknown, required: boolean): Conditions {
  if (absent(v) && !required) return { where: [], or: null };
  const q = plainObject("query", v);
  onlyKeys("query", q, CONDITION_KEYS);
  return conditionsOf(q, { clauses: 0 });
}

function shapeArg(v: unknown): ReadShape | null {
  if (absent(v)) return null;
  const o = plainObject("shape", v);
  onlyKeys("shape", o, ["select", "expand"]);
  const shape = { select: absent(o.select) ? null : selectPaths("shape.select", o.select), expand: expandDepth("shape.expand", o.expand) };
  return shape.select === null && shape.expand === 0 ? null : shape;
}

/** Changes {set, increment} as the REST update body: set fields as they are, increments as `<field>[inc]`. */
function changesBody(v: unknown): Obj {
  const c = plainObject("changes", v);
  onlyKeys("changes", c, ["set", "increment"]);
  const entries: [string, unknown][] = [];
  const set = absent(c.set) ? {} : plainObject("changes.set", c.set);
  for (const key of Object.keys(set)) {
    const at = `changes.set${member(key)}`;
    fieldName(at, key);
    noProtoKeys(at, set[key]);
    entries.push([key, set[key]]);
  }
  const inc = absent(c.increment) ? {} : plainObject("changes.increment", c.increment);
  for (const key of Object.keys(inc)) {
    const at = `changes.increment${member(key)}`;
    fieldName(at, key);
    if (Object.hasOwn(set, key)) throw bad(at, "a field cannot be set and incremented at once");
    const by = inc[key];
    if (typeof by !== "number" || !Number.isSafeInteger(by)) throw bad(at, `expected an integer amount (counters are integer fields), got ${got(by)}`);
    entries.push([`${key}[inc]`, by]);
  }
  // fromEntries defines own properties, so no name (even a refused one) could reach a prototype.
  return Object.fromEntries(entries);
}

function optionsArg(v: unknown): Conditions | null {
  if (absent(v)) return null;
  const o = plainObject("options", v);
  onlyKeys("options", o, ["where"]);
  if (absent(o.where)) return null;
  const where = whereClauses("options.where", o.where, "", { clauses: 0 });
  return where.length ? { where, or: null } : null;
}

function cascadeArg(v: unknown): boolean {
  if (absent(v)) return false;
  const o = plainObject("options", v);
  onlyKeys("options", o, ["cascade"]);
  if (absent(o.cascade)) return false;
  if (typeof o.cascade !== "boolean") throw bad("options.cascade", `expected true or false, got ${got(o.cascade)}`);
  return o.cascade;
}

function arity(args: unknown[], names: readonly string[], required: number): void {
  if (args.length > names.length) throw badRequest(`takes at most ${names.length} argument${names.length === 1 ? "" : "s"} (${names.join(", ")}), got ${args.length}`);
  for (let i = 0; i < required; i++) if (absent(args[i])) throw bad(names[i]!, "missing");
}

// ---------------------------------------------------------------- the service

/** The 404 of a missing object answered as a value (the schema's existence is checked before). */
async function orIfMissing<T, U>(p: Promise<T>, missing: U): Promise<T | U> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return missing;
    throw e;
  }
}

/** The op named once in front of every refusal: `data.query: where.age.gt: expected ...`. */
function named(op: string, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  return new ApiError(e.status, `data.${op}: ${e.message}`, { description: e.description, headers: e.headers, debug: e.debug, cause: e });
}

/** Runs one data operation for a method call; `ctx` is the call's ApiContext (already with a system principal, so permissions are ignored). */
export function dataService(data: Datastore, ctx: ApiContext): (op: string, args: unknown[]) => Promise<unknown> {
  const existing = (name: string) => {
    if (!ctx.schemas.schemas.has(name)) throw notFound(`schema "${name}" does not exist`);
    return name;
  };

  async function run(op: string, args: unknown[]): Promise<unknown> {
    switch (op) {
      case "create": {
        arity(args, ["schema", "object"], 2);
        const object = plainObject("object", args[1]);
        noProtoKeys("object", object);
        return new RawJson(await data.create(ctx, schemaName(args[0]), object));
      }
      case "createMany": {
        arity(args, ["schema", "objects"], 2);
        return data.create(ctx, schemaName(args[0]), objects("objects", args[1]));
      }
      case "read": {
        arity(args, ["schema", "id", "shape"], 2);
        const schema = existing(schemaName(args[0]));
        const id = objectKey("id", args[1]);
        const json = await orIfMissing(data.get(ctx, schema, id, shapeArg(args[2])), null);
        return json === null ? null : new RawJson(json);
      }
      case "query": {
        arity(args, ["schema", "query"], 1);
        const schema = existing(schemaName(args[0]));
        const { tree, nothing } = queryTree(args[1]);
        if (nothing) return [];
        return new RawJson((await data.list(ctx, schema, tree)).body);
      }
      case "count": {
        arity(args, ["schema", "query"], 1);
        return data.count(ctx, existing(schemaName(args[0])), conditionsArg(args[1], false));
      }
      case "update": {
        arity(args, ["schema", "id", "changes", "options"], 3);
        const schema = existing(schemaName(args[0]));
        const id = objectKey("id", args[1]);
        const body = changesBody(args[2]);
        const where = optionsArg(args[3]);
        const json = where ? await data.updateIf(ctx, schema, id, body, where) : await orIfMissing(data.update(ctx, schema, id, body), null);
        return json === null ? null : new RawJson(json);
      }
      case "updateWhere": {
        arity(args, ["schema", "query", "changes"], 3);
        const schema = existing(schemaName(args[0]));
        const conditions = conditionsArg(args[1], true);
        return data.updateWhere(ctx, schema, conditions, changesBody(args[2]));
      }
      case "delete": {
        arity(args, ["schema", "id"], 2);
        const schema = existing(schemaName(args[0]));
        const id = objectKey("id", args[1]);
        return orIfMissing(data.remove(ctx, schema, id).then(() => true), false);
      }
      case "deleteWhere": {
        arity(args, ["schema", "query"], 2);
        const schema = existing(schemaName(args[0]));
        const conditions = conditionsArg(args[1], true);
        if (conditions.where.length === 0 && !conditions.or) throw bad("query", "at least one condition is needed; deleting every object is refused");
        return data.removeWhere(ctx, schema, conditions, { missingKeyIs404: false });
      }
      case "addRelated": {
        arity(args, ["schema", "id", "field", "values"], 4);
        const schema = existing(schemaName(args[0]));
        const id = objectKey("id", args[1]);
        const field = fieldName("field", args[2]);
        return new RawJson(await data.append(ctx, schema, id, field, scalars("values", args[3])));
      }
      case "createRelated": {
        arity(args, ["schema", "id", "field", "objects"], 4);
        const schema = existing(schemaName(args[0]));
        const id = objectKey("id", args[1]);
        const field = fieldName("field", args[2]);
        const list = objects("objects", args[3]);
        if (list.length === 0) throw bad("objects", "expected at least one object");
        return data.createRelated(ctx, schema, id, field, list);
      }
      case "removeRelated": {
        arity(args, ["schema", "id", "field", "values", "options"], 4);
        const schema = existing(schemaName(args[0]));
        const id = objectKey("id", args[1]);
        const field = fieldName("field", args[2]);
        const values = scalars("values", args[3]).map(text);
        await data.pull(ctx, schema, id, field, values, cascadeArg(args[4]));
        return undefined;
      }
      case "schemas":
        arity(args, [], 0);
        return [...ctx.schemas.schemas.keys()].sort();
      case "userSchema": {
        arity(args, [], 0);
        const users = [...ctx.schemas.schemas.values()].filter((s) => s.def.user).map((s) => s.name).sort();
        return users[0] ?? null;
      }
    }
    throw badRequest("not implemented"); // unreachable: every name of DATA_OPS has its case
  }

  return async (op, args) => {
    if (typeof op !== "string" || !DATA_OPS.includes(op)) {
      const shown = typeof op === "string" ? JSON.stringify(op.length > 40 ? `${op.slice(0, 40)}…` : op) : got(op);
      throw badRequest(`data has no operation ${shown}; operations: ${DATA_OPS.join(", ")}`);
    }
    try {
      if (!Array.isArray(args)) throw badRequest(`the arguments are an array, got ${got(args)}`);
      return await run(op, args);
    } catch (e) {
      throw named(op, e);
    }
  };
}
