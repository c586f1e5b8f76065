// Parse a datastore query from the raw query string and headers into a QueryTree. Pure and schema-agnostic:
// it checks syntax and limits; names and values are checked against the schema by compile.ts.

import { badRequest } from "../../errors.ts";
import * as L from "./limits.ts";
import { type Clause, OPERATORS, type Op, type OrderKey, type QueryTree, type Range } from "./tree.ts";

const show = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/** `[or1].[and2].field[op]`: optional OR block, optional AND group, field, optional operator. */
const KEY_RE = /^(?:\[or(\d{1,3})\]\.)?(?:\[and(\d{1,3})\]\.)?([A-Za-z0-9_]+)(?:\[([A-Za-z]+)\])?$/;

interface QueryHeaders {
  get(name: string): string | null;
}

/** The conditions of a query string (A AND (B OR ...)); other parameters are refused. */
export function parseConditions(params: URLSearchParams, allowed: readonly string[] = []): Pick<QueryTree, "where" | "or"> {
  const where: Clause[] = [];
  const groups = new Map<string, Clause[]>();
  let orBlock: string | null = null;
  let count = 0;
  for (const [key, value] of params) {
    if (allowed.includes(key)) continue;
    if (++count > L.MAX_CLAUSES) throw badRequest(`at most ${L.MAX_CLAUSES} conditions per query`);
    const m = KEY_RE.exec(key);
    if (!m) {
      if (/^\[or\d+\]\.\[and\d+\]\.\[/.test(key) || /^\[and\d+\]\.\[/.test(key) || /^\[or\d+\]\.\[or\d+\]/.test(key))
        throw badRequest(`${show(key)}: nesting deeper than [or<n>].[and<m>].<clause> is not allowed`);
      throw badRequest(
        `invalid query parameter ${show(key)}: expected <field>, <field>[op], [or<n>].<clause> or [or<n>].[and<m>].<clause>`,
      );
    }
    const [, or, and, field, opRaw] = m;
    let op: Op = "eq";
    if (opRaw !== undefined) {
      const lower = opRaw.toLowerCase();
      if (!(OPERATORS as readonly string[]).includes(lower))
        throw badRequest(`unknown operator [${opRaw.slice(0, 20)}] in ${show(key)}; operators: ${OPERATORS.join(", ")}`);
      op = lower as Op;
    }
    if (value.length > L.MAX_VALUE_LENGTH * (op === "in" || op === "nin" ? 16 : 1))
      throw badRequest(`the value of ${show(key)} is too long`);
    if (value === "") {
      if (op === "eq") throw badRequest(`${show(key)} has an empty value; use ${field}[empty]=true to match the empty string`);
      throw badRequest(`${show(key)} needs a value`);
    }
    const clause: Clause = { field: field!, op, value, key };
    if (or === undefined) {
      if (and !== undefined) throw badRequest(`${show(key)}: an [and<m>] group exists only inside an [or<n>] block`);
      where.push(clause);
      continue;
    }
    if (orBlock !== null && orBlock !== or)
      throw badRequest(`only one OR block is allowed per query; ([or${orBlock}] and [or${or}]) would be (A OR B) AND (C OR D)`);
    orBlock = or;
    const group = and === undefined ? `single:${groups.size}` : `and:${and}`;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group)!.push(clause);
  }
  if (groups.size > L.MAX_OR_ALTERNATIVES) throw badRequest(`at most ${L.MAX_OR_ALTERNATIVES} alternatives in an OR block`);
  return { where, or: orBlock === null ? null : [...groups.values()] };
}

export function parseSelect(header: string | null): string[][] | null {
  if (header === null || header.trim() === "") return null;
  const paths = header
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (paths.length > L.MAX_SELECT_PATHS) throw badRequest(`X-Service-Select: at most ${L.MAX_SELECT_PATHS} fields`);
  return paths.map((p) => {
    const parts = p.split(".");
    if (parts.length > L.MAX_EXPAND + 1 || !parts.every((s, i) => /^[A-Za-z0-9_]+$/.test(s) || (s === "*" && i === parts.length - 1)))
      throw badRequest(`X-Service-Select: ${show(p)} is not a field, a dotted path into an expanded relationship, or <path>.*`);
    return parts;
  });
}

export function parseExpand(header: string | null, param: string | null): number {
  const raw = header ?? param;
  if (raw === null || raw.trim() === "") return 0;
  const v = raw.trim();
  if (!/^\d{1,2}$/.test(v) || Number(v) > L.MAX_EXPAND)
    throw badRequest(`expand depth must be an integer from 0 to ${L.MAX_EXPAND}, not ${show(v)}`);
  return Number(v);
}

export function parseOrderBy(header: string | null): OrderKey[] {
  if (header === null || header.trim() === "") return [];
  const keys = header
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  if (keys.length > L.MAX_ORDER_KEYS) throw badRequest(`X-Service-OrderBy: at most ${L.MAX_ORDER_KEYS} keys`);
  return keys.map((k) => {
    const m = /^([A-Za-z0-9_]+)(?:\s*:\s*(asc|desc))?$/i.exec(k);
    if (!m) throw badRequest(`X-Service-OrderBy: ${show(k)} is not <field>:asc or <field>:desc`);
    return { field: m[1]!, desc: (m[2] ?? "asc").toLowerCase() === "desc" };
  });
}

export function parseRange(header: string | null): Range | null {
  if (header === null) return null;
  // Any number of digits: an index past the limit gets the limit's message however long it is written.
  const m = /^\s*objects\s*=\s*(\d+)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) throw badRequest(`invalid Range header ${show(header)}: expected objects=<first>-<last> or objects=<first>-`);
  const start = rangeIndex(m[1]!);
  const end = m[2] === "" ? null : rangeIndex(m[2]!);
  if (end !== null && end < start) throw badRequest(`invalid Range header ${show(header)}: the last index is before the first`);
  return { start, end };
}

/** One index of a Range; 400 past MAX_RANGE_INDEX (the echo is cut, the header may be huge). */
function rangeIndex(digits: string): number {
  const n = Number(digits);
  if (n > L.MAX_RANGE_INDEX)
    throw badRequest(
      `Range: indexes must be at most ${L.MAX_RANGE_INDEX}, got ${digits.length > 24 ? `${digits.slice(0, 24)}… (${digits.length} digits)` : digits}`,
    );
  return n;
}

/** The whole query of a GET /<schema>. `_expand` in the query string is the JS SDK's form of X-Service-Expand. */
export function parseQuery(params: URLSearchParams, headers: QueryHeaders): QueryTree {
  const { where, or } = parseConditions(params, ["_expand"]);
  const expandParams = params.getAll("_expand");
  if (expandParams.length > 1) throw badRequest("_expand is given more than once");
  const tree: QueryTree = {
    where,
    or,
    select: parseSelect(headers.get("x-service-select")),
    expand: parseExpand(headers.get("x-service-expand"), expandParams[0] ?? null),
    orderBy: parseOrderBy(headers.get("x-service-orderby")),
    range: parseRange(headers.get("range")),
  };
  if (or) {
    if (tree.orderBy.length) throw badRequest("an OR block cannot be combined with X-Service-OrderBy");
    const geo = [...where, ...or.flat()].find((c) => c.op === "near" || c.op === "within");
    if (geo) throw badRequest(`an OR block cannot be combined with geo conditions (${show(geo.key)})`);
  }
  return tree;
}

/** What a read by key asks for beyond the object itself: X-Service-Select and X-Service-Expand (or `_expand`). */
export type ReadShape = Pick<QueryTree, "select" | "expand">;

/** The shape of a GET /<schema>/<id>, or null when it asks for the plain object (the common case). */
export function parseReadShape(search: string, headers: QueryHeaders): ReadShape | null {
  const selectHeader = headers.get("x-service-select");
  const expandHeader = headers.get("x-service-expand");
  const expandParams = search.includes("_expand") ? new URLSearchParams(search).getAll("_expand") : [];
  if (selectHeader === null && expandHeader === null && expandParams.length === 0) return null;
  if (expandParams.length > 1) throw badRequest("_expand is given more than once");
  const shape = { select: parseSelect(selectHeader), expand: parseExpand(expandHeader, expandParams[0] ?? null) };
  return shape.select === null && shape.expand === 0 ? null : shape;
}
