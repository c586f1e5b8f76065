// SQL expressions that render stored objects as the API's JSON inside SQLite, so reads never decode rows into
// JavaScript objects and re-serialize them. A field whose value is NULL is left out of the object (product.md
// §7): each member is `,"name":<value>` text that is NULL when the field is, and concat() skips NULLs, all in C
// (docs/decisions.md has the measurements against json_object and json_patch). Pure string building.

import { q } from "../db/sql.ts";
import type { FieldDef } from "./definition.ts";
import { columnsOf } from "./layout.ts";

/** Members per concat() call (two arguments each): SQLite before 3.48 caps function arguments at 127. */
const MEMBERS_PER_CALL = 60;

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * How floats become JSON text: "native" lets SQLite write them (3.47 and later write the shortest digits that
 * read back exactly); "digits17" writes 17 significant digits with printf, for an SQLite that writes only 15
 * (a libSQL server on 3.45), so every stored float still reads back as the same number.
 */
export type FloatStyle = "native" | "digits17";

/** A float column as JSON number text (NULL stays NULL). */
function floatJson(c: string, floats: FloatStyle): string {
  return floats === "native" ? `json_quote(${c})` : `CASE WHEN typeof(${c}) = 'real' THEN printf('%!.17g', ${c}) ELSE json_quote(${c}) END`;
}

/**
 * concat() arguments rendering one member as `,"name":<value>`, or only NULLs when the field is NULL. Values go
 * through json_quote (strings escaped, floats with json_object's round-trip digits, any stored type valid JSON),
 * json() (stored arrays) or json_object (geopoints); `col` qualifies a column name (e.g. with a table alias).
 */
function memberSql(name: string, def: FieldDef, col: (c: string) => string, floats: FloatStyle, distance?: string): string[] {
  const [c0, c1] = columnsOf(name, def).map(col);
  const prefix = `,${JSON.stringify(name)}:`;
  const guarded = (isNull: string, value: string) => [`CASE WHEN ${isNull} THEN NULL ELSE ${lit(prefix)} END`, value];
  switch (def.type) {
    case "boolean":
      return [`CASE ${c0} WHEN 1 THEN ${lit(`${prefix}true`)} WHEN 0 THEN ${lit(`${prefix}false`)} END`];
    case "array":
      return guarded(`${c0} IS NULL`, `json(${c0})`);
    case "geopoint": {
      const isNull = `${c0} IS NULL OR ${c1} IS NULL`;
      const dist = distance === undefined ? "" : `, 'distance', ${distance}`;
      const [lat, lon] = floats === "native" ? [c0, c1] : [`json(${floatJson(c0!, floats)})`, `json(${floatJson(c1!, floats)})`];
      return guarded(isNull, `CASE WHEN ${isNull} THEN NULL ELSE json_object('lat', ${lat}, 'lon', ${lon}${dist}) END`);
    }
    default:
      if (def.type === "relationship" && def.many) return guarded(`${c0} IS NULL`, `json(${c0})`);
      return guarded(`${c0} IS NULL`, `CASE WHEN ${c0} IS NULL THEN NULL ELSE ${def.type === "float" ? floatJson(c0!, floats) : `json_quote(${c0})`} END`);
  }
}

interface RenderOptions {
  /** Only these fields (the key is always rendered); null or absent for every field. */
  only?: ReadonlySet<string> | null;
  /** A near query: this geopoint field also carries `distance`, computed by this SQL expression. */
  distance?: { field: string; sql: string };
  /** How floats are written (default "native"). */
  floats?: FloatStyle;
}

/**
 * The object: key, fields (never passwords), createddate, lastmoddate, sm_owner, each only when not NULL;
 * optionally narrowed. The key is never NULL (TEXT PRIMARY KEY NOT NULL), so every other member starts with ",".
 */
export function objectJsonSql(pk: string, fields: Iterable<[string, FieldDef]>, qualifier: string | null, opts: RenderOptions = {}): string {
  const col = qualifier === null ? q : (c: string) => `${qualifier}.${q(c)}`;
  const only = opts.only ?? null;
  const floats = opts.floats ?? "native";
  const want = (name: string) => only === null || only.has(name);
  const members: string[][] = [];
  for (const [name, def] of fields) {
    if (def.type === "password" || !want(name)) continue;
    members.push(memberSql(name, def, col, floats, opts.distance?.field === name ? opts.distance.sql : undefined));
  }
  // createddate and lastmoddate are INTEGER NOT NULL: concat() writes their digits as they are.
  for (const date of ["createddate", "lastmoddate"]) if (want(date)) members.push([lit(`,"${date}":`), col(date)]);
  if (want("sm_owner")) members.push(memberSql("sm_owner", { type: "string" }, col, floats));
  const head = [lit(`{${JSON.stringify(pk)}:`), `json_quote(${col(pk)})`];
  if (members.length <= MEMBERS_PER_CALL) return `concat(${[...head, ...members.flat(), "'}'"].join(", ")})`;
  // Each chunk starts with a constant (''): SQLite (3.54.1 too) keeps a call's arguments in reusable temporary
  // registers when none of its first 32 arguments is constant, yet still codes later constant arguments once at
  // start-up into those registers, where other calls overwrite them (a ',"createddate":' came out as ',"f140":').
  const chunks: string[] = [];
  for (let i = 0; i < members.length; i += MEMBERS_PER_CALL) chunks.push(`concat('', ${members.slice(i, i + MEMBERS_PER_CALL).flat().join(", ")})`);
  return `concat(${[...head, ...chunks, "'}'"].join(", ")})`;
}
