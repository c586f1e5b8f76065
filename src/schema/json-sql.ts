// SQL expressions that render stored objects as the API's JSON inside SQLite (json_object), so reads
// never decode rows into JavaScript objects and re-serialize them. Pure string building.

import { q } from "../db/sql.ts";
import type { FieldDef } from "./definition.ts";
import { columnsOf } from "./layout.ts";

/** Pairs per json_object call; longer objects are extended with json_set (SQLite caps function arguments). */
const PAIRS_PER_CALL = 60;

/** A field's JSON value from its columns; `col` qualifies a column name (e.g. with a table alias). */
function fieldJsonSql(name: string, def: FieldDef, col: (c: string) => string): string {
  const [c0, c1] = columnsOf(name, def).map(col);
  switch (def.type) {
    case "boolean":
      return `json(CASE ${c0} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)`;
    case "array":
      return `json(${c0})`;
    case "relationship":
      return def.many ? `json(${c0})` : c0!;
    case "geopoint":
      return `CASE WHEN ${c0} IS NULL OR ${c1} IS NULL THEN NULL ELSE json_object('lat', ${c0}, 'lon', ${c1}) END`;
    default:
      return c0!;
  }
}

/** json_object over (key, SQL expression) pairs, chunked to stay under SQLite's argument limit. */
function jsonObjectSql(pairs: readonly (readonly [string, string])[]): string {
  const lit = (k: string) => `'${k.replaceAll("'", "''")}'`;
  let expr = `json_object(${pairs.slice(0, PAIRS_PER_CALL).map(([k, v]) => `${lit(k)}, ${v}`).join(", ")})`;
  for (let i = PAIRS_PER_CALL; i < pairs.length; i += PAIRS_PER_CALL) {
    const chunk = pairs.slice(i, i + PAIRS_PER_CALL);
    expr = `json_set(${expr}, ${chunk.map(([k, v]) => `'$.${k}', ${v}`).join(", ")})`;
  }
  return expr;
}

interface RenderOptions {
  /** Only these fields (the key is always rendered); null or absent for every field. */
  only?: ReadonlySet<string> | null;
  /** A near query: this geopoint field also carries `distance`, computed by this SQL expression. */
  distance?: { field: string; sql: string };
}

/** The object: key, fields (never passwords), createddate, lastmoddate, sm_owner; optionally narrowed. */
export function objectJsonSql(pk: string, fields: Iterable<[string, FieldDef]>, qualifier: string | null, opts: RenderOptions = {}): string {
  const col = qualifier === null ? q : (c: string) => `${qualifier}.${q(c)}`;
  const only = opts.only ?? null;
  const want = (name: string) => only === null || only.has(name);
  const pairs: [string, string][] = [[pk, col(pk)]];
  for (const [name, def] of fields) {
    if (def.type === "password" || !want(name)) continue;
    if (opts.distance?.field === name) {
      const [lat, lon] = columnsOf(name, def).map(col);
      pairs.push([name, `CASE WHEN ${lat} IS NULL OR ${lon} IS NULL THEN NULL ELSE json_object('lat', ${lat}, 'lon', ${lon}, 'distance', ${opts.distance.sql}) END`]);
    } else pairs.push([name, fieldJsonSql(name, def, col)]);
  }
  for (const auto of ["createddate", "lastmoddate", "sm_owner"]) if (want(auto)) pairs.push([auto, col(auto)]);
  return jsonObjectSql(pairs);
}
