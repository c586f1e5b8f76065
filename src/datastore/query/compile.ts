// Compile a QueryTree against one schema into parameterized SQL over the table alias `t`. Identifiers come only
// from the schema and are quoted; every value is bound. Pure. The caller ANDs in an access-control scope.

import type { InValue } from "@libsql/core/api";
import { q } from "../../db/sql.ts";
import { badRequest } from "../../errors.ts";
import type { CompiledSchema } from "../../schema/compiled.ts";
import type { FieldDef } from "../../schema/definition.ts";
import { textMismatch } from "../../schema/value-errors.ts";
import { columnsOf, geoTableName } from "../../schema/layout.ts";
import { type Rect, boxRects, capRects, distanceSql, parseGeo } from "./geo.ts";
import { MAX_IN_VALUES } from "./limits.ts";
import type { Clause, Conditions, OrderKey, QueryTree } from "./tree.ts";

/** A boolean SQL expression over alias `t` with its arguments. */
export interface SqlPart {
  sql: string;
  args: InValue[];
}

interface NearSort {
  field: string;
  /** The distance expression (radians) and its arguments; used in the JSON, ORDER BY and the radius check. */
  distance: SqlPart;
}

interface CompiledQuery {
  where: SqlPart;
  order: SqlPart;
  near: NearSort | null;
}

type Kind = "string" | "integer" | "float" | "boolean" | "multi" | "geopoint" | "password";
export interface FieldRef {
  name: string;
  kind: Kind;
  /** Item type of an array (multi) field. */
  items: "string" | "integer" | "float" | "boolean";
  cols: string[];
}

const col = (c: string) => `t.${q(c)}`;

/** Resolve a field named in a query: the key, an automatic field or a schema field; 400 otherwise. */
export function resolveField(s: CompiledSchema, name: string, where: string): FieldRef {
  if (name === s.pk || name === "sm_owner") return { name, kind: "string", items: "string", cols: [name] };
  if (name === "createddate" || name === "lastmoddate") return { name, kind: "integer", items: "integer", cols: [name] };
  const def = s.fields.get(name);
  if (!def) throw badRequest(`unknown field "${name}" in ${where} (schema ${s.name})`);
  return { name, kind: kindOf(def), items: def.type === "array" ? def.items! : "string", cols: columnsOf(name, def) };
}

function kindOf(def: FieldDef): Kind {
  switch (def.type) {
    case "integer":
    case "float":
    case "boolean":
    case "geopoint":
    case "password":
      return def.type;
    case "array":
      return "multi";
    case "relationship":
      return def.many ? "multi" : "string";
    default:
      return "string";
  }
}

function convert(kind: "string" | "integer" | "float" | "boolean", raw: string, c: Clause): InValue {
  switch (kind) {
    case "string":
      return raw;
    case "integer":
      if (/^[-+]?\d+$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
      break;
    case "float": {
      const n = Number(raw);
      if (/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(raw) && Number.isFinite(n)) return n;
      break;
    }
    case "boolean": {
      const v = raw.toLowerCase();
      if (v === "true" || v === "1") return 1;
      if (v === "false" || v === "0") return 0;
      break;
    }
  }
  // `age[gt]: expected integer, got "1.5"`: the condition as written, the field's type, the value.
  throw badRequest(textMismatch(kind, raw).detail(c.key));
}

export function clauseValue(f: FieldRef, raw: string, c: Clause): InValue {
  return convert(f.kind === "multi" ? f.items : (f.kind as "string" | "integer" | "float" | "boolean"), raw, c);
}

export function list(f: FieldRef, c: Clause): InValue[] {
  const parts = c.value.split(",");
  if (parts.length > MAX_IN_VALUES) throw badRequest(`${JSON.stringify(c.key)}: at most ${MAX_IN_VALUES} values`);
  return parts.map((p) => clauseValue(f, p, c));
}

function rectsSql(schema: string, field: string, rects: Rect[], args: InValue[]): string {
  const [lat, lon] = columnsOf(field, { type: "geopoint" }).map(col);
  const tree = rects.map((r) => {
    args.push(r.lat2, r.lat1, r.lon2, r.lon1);
    return "(min_lat <= ? AND max_lat >= ? AND min_lon <= ? AND max_lon >= ?)";
  });
  // The R*Tree holds 32-bit floats rounded outward: it narrows the candidates, the REAL columns decide.
  const exact = rects.map((r) => {
    args.push(r.lat1, r.lat2, r.lon1, r.lon2);
    return `(${lat} BETWEEN ? AND ? AND ${lon} BETWEEN ? AND ?)`;
  });
  return `t.rowid IN (SELECT id FROM ${q(geoTableName(schema, field))} WHERE ${tree.join(" OR ")}) AND (${exact.join(" OR ")})`;
}

interface GeoState {
  near: NearSort | null;
}

function clauseSql(s: CompiledSchema, c: Clause, args: InValue[], geo: GeoState): string {
  const f = resolveField(s, c.field, "query");
  const cname = col(f.cols[0]!);
  if (f.kind === "password") throw badRequest(`password field "${f.name}" cannot be queried`);
  if (f.kind === "geopoint" && c.op !== "null" && c.op !== "near" && c.op !== "within")
    throw badRequest(`geopoint field "${f.name}" takes [near], [within] or [null]`);
  const multi = f.kind === "multi";
  const contains = (sqlOp: string, values: InValue[]) => {
    args.push(...values);
    return `EXISTS (SELECT 1 FROM json_each(${cname}) WHERE value ${sqlOp})`;
  };
  switch (c.op) {
    case "eq":
      if (multi) return contains("= ?", [clauseValue(f, c.value, c)]);
      args.push(clauseValue(f, c.value, c));
      return `${cname} = ?`;
    case "ne":
      if (multi) return `NOT ${contains("= ?", [clauseValue(f, c.value, c)])}`;
      args.push(clauseValue(f, c.value, c));
      return `${cname} IS NOT ?`;
    case "lt":
    case "lte":
    case "gt":
    case "gte": {
      if (multi) throw badRequest(`[${c.op}] does not apply to array or relationship field "${f.name}"`);
      args.push(clauseValue(f, c.value, c));
      return `${cname} ${{ lt: "<", lte: "<=", gt: ">", gte: ">=" }[c.op]} ?`;
    }
    case "null": {
      const v = c.value.toLowerCase();
      if (v !== "true" && v !== "false") throw badRequest(`${JSON.stringify(c.key)} takes true or false`);
      return `${cname} IS ${v === "true" ? "" : "NOT "}NULL`;
    }
    case "empty": {
      const def = s.fields.get(f.name);
      if (f.kind !== "string" || (def && def.type !== "string"))
        throw badRequest(`[empty] works only on string fields, and "${f.name}" is not one`);
      const v = c.value.toLowerCase();
      if (v !== "true" && v !== "false") throw badRequest(`${JSON.stringify(c.key)} takes true or false`);
      return v === "true" ? `${cname} = ''` : `${cname} IS NOT ''`;
    }
    case "in":
    case "nin": {
      const values = list(f, c);
      const marks = values.map(() => "?").join(", ");
      if (multi) return `${c.op === "nin" ? "NOT " : ""}${contains(`IN (${marks})`, values)}`;
      args.push(...values);
      return c.op === "in" ? `${cname} IN (${marks})` : `(${cname} IS NULL OR ${cname} NOT IN (${marks}))`;
    }
    case "near":
    case "within": {
      if (f.kind !== "geopoint") throw badRequest(`[${c.op}] works only on geopoint fields, and "${f.name}" is not one`);
      const g = parseGeo(c.op, f.name, c.value);
      const [lat, lon] = f.cols.map(col) as [string, string];
      if (g.kind === "box") return rectsSql(s.name, f.name, boxRects(g), args);
      const d = distanceSql(lat, lon);
      const distance: SqlPart = { sql: d.sql, args: d.args(g) };
      if (g.kind === "near") {
        if (geo.near) throw badRequest("only one [near] condition per query");
        geo.near = { field: f.name, distance };
      }
      if (g.kind === "near" && g.radius === null) return `${lat} IS NOT NULL AND ${lon} IS NOT NULL`;
      const radius = g.radius!;
      const filter =
        radius >= Math.PI ? `${lat} IS NOT NULL AND ${lon} IS NOT NULL` : rectsSql(s.name, f.name, capRects(g.lat, g.lon, radius), args);
      args.push(...distance.args, radius);
      return `${filter} AND ${distance.sql} <= ?`;
    }
  }
}

/** The WHERE expression of A AND (B OR C ...), ANDed with `scope` (access control) when given. */
export function compileConditions(
  s: CompiledSchema,
  tree: Pick<QueryTree, "where" | "or">,
  scope: SqlPart | null,
  geo: GeoState = { near: null },
): SqlPart {
  const args: InValue[] = [];
  const parts = tree.where.map((c) => clauseSql(s, c, args, geo));
  if (tree.or) parts.push(`(${tree.or.map((group) => `(${group.map((c) => clauseSql(s, c, args, geo)).join(" AND ")})`).join(" OR ")})`);
  if (scope) {
    parts.push(`(${scope.sql})`);
    args.push(...scope.args);
  }
  return { sql: parts.length ? parts.join(" AND ") : "1", args };
}

/**
 * The WHERE of a write that selects its objects by conditions (delete or update by query, conditional update):
 * [near] only sorts, so it is refused there.
 */
export function compileSelection(s: CompiledSchema, tree: Conditions, scope: SqlPart | null, verb: "delete" | "update"): SqlPart {
  if ([...tree.where, ...(tree.or?.flat() ?? [])].some((c) => c.op === "near"))
    throw badRequest(`[near] sorts results and cannot select what to ${verb}; use [within]`);
  return compileConditions(s, tree, scope);
}

function orderSql(s: CompiledSchema, keys: OrderKey[], near: NearSort | null): SqlPart {
  // Near results are always sorted by distance; a requested ordering is ignored (docs/api/datastore.md#order).
  if (near) return { sql: `ORDER BY ${near.distance.sql}, t.rowid`, args: [...near.distance.args] };
  const parts = keys.map((k) => {
    const f = resolveField(s, k.field, "X-Service-OrderBy");
    if (f.kind === "multi" || f.kind === "geopoint" || f.kind === "password")
      throw badRequest(`cannot order by "${f.name}" (${f.kind === "multi" ? "array or relationship" : f.kind})`);
    return `${col(f.cols[0]!)} ${k.desc ? "DESC" : "ASC"}`;
  });
  return { sql: `ORDER BY ${[...parts, "t.rowid"].join(", ")}`, args: [] };
}

export function compileQuery(s: CompiledSchema, tree: QueryTree, scope: SqlPart | null): CompiledQuery {
  const geo: GeoState = { near: null };
  const where = compileConditions(s, tree, scope, geo);
  return { where, order: orderSql(s, tree.orderBy, geo.near), near: geo.near };
}
