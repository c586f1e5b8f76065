// The structured queries of custom code's `data` service (sandbox/burrow.d.ts: where, or, select, expand, orderBy,
// start/end/limit, changes, options) turned into the datastore's QueryTree with the REST string forms of values, so
// the datastore validates and compiles them exactly as it does for the REST API. Pure.

import * as L from "../../datastore/query/limits.ts";
import type { ReadShape } from "../../datastore/query/parse.ts";
import type { Clause, Conditions, Op, OrderKey, QueryTree, Range } from "../../datastore/query/tree.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import {
  type Obj,
  absent,
  arrayOf,
  bad,
  fieldName,
  got,
  integerIn,
  isScalar,
  member,
  noProtoKeys,
  onlyKeys,
  plainObject,
  text,
} from "./data-args.ts";
import { NAME_RE, RESERVED } from "./data-names.ts";

const OPERATORS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "null", "empty", "near", "within"] as const;
const QUERY_KEYS = ["where", "or", "select", "expand", "orderBy", "start", "end", "limit"] as const;
const CONDITION_KEYS = ["where", "or"] as const;

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
    if (s.includes(","))
      throw bad(`${path}[${i}]`, `a value of in/nin cannot contain a comma (the values are joined with commas), got ${got(s)}`);
    return s;
  });
  const joined = parts.join(",");
  if (joined.length > L.MAX_VALUE_LENGTH * 16)
    throw bad(path, `the values are too long together (at most ${L.MAX_VALUE_LENGTH * 16} characters)`);
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
    if (!(OPERATORS as readonly string[]).includes(name))
      throw bad(`${path}${member(name)}`, `unknown operator; operators: ${OPERATORS.join(", ")}`);
    const op = name as Op;
    return clause(op, operandText(op, `${path}.${op}`, cond[name]));
  });
}

/** A Where (fields to conditions, ANDed) as clauses. */
export function whereClauses(path: string, where: unknown, label: string, budget: Budget): Clause[] {
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
    const ok =
      parts.length <= L.MAX_EXPAND + 1 &&
      parts.every((s, j) => (NAME_RE.test(s) && !RESERVED.has(s)) || (s === "*" && j === parts.length - 1));
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
export function queryTree(v: unknown): { tree: QueryTree; nothing: boolean } {
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
export function conditionsArg(v: unknown, required: boolean): Conditions {
  if (absent(v) && !required) return { where: [], or: null };
  const q = plainObject("query", v);
  onlyKeys("query", q, CONDITION_KEYS);
  return conditionsOf(q, { clauses: 0 });
}

export function shapeArg(v: unknown): ReadShape | null {
  if (absent(v)) return null;
  const o = plainObject("shape", v);
  onlyKeys("shape", o, ["select", "expand"]);
  const shape = { select: absent(o.select) ? null : selectPaths("shape.select", o.select), expand: expandDepth("shape.expand", o.expand) };
  return shape.select === null && shape.expand === 0 ? null : shape;
}

/** Changes {set, increment} as the REST update body: set fields as they are, increments as `<field>[inc]`. */
export function changesBody(v: unknown): Obj {
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
    if (typeof by !== "number" || !Number.isSafeInteger(by))
      throw bad(at, `expected an integer amount (counters are integer fields), got ${got(by)}`);
    entries.push([`${key}[inc]`, by]);
  }
  // fromEntries defines own properties, so no name (even a refused one) could reach a prototype.
  return Object.fromEntries(entries);
}

export function optionsArg(v: unknown): Conditions | null {
  if (absent(v)) return null;
  const o = plainObject("options", v);
  onlyKeys("options", o, ["where"]);
  if (absent(o.where)) return null;
  const where = whereClauses("options.where", o.where, "", { clauses: 0 });
  return where.length ? { where, or: null } : null;
}

export function cascadeArg(v: unknown): boolean {
  if (absent(v)) return false;
  const o = plainObject("options", v);
  onlyKeys("options", o, ["cascade"]);
  if (absent(o.cascade)) return false;
  if (typeof o.cascade !== "boolean") throw bad("options.cascade", `expected true or false, got ${got(o.cascade)}`);
  return o.cascade;
}
