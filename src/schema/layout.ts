// Physical layout of schemas in an environment database: table, column and index names and DDL. Pure.
// A schema "todo" lives in table "o_todo"; a geopoint field "loc" uses two REAL columns "loc$lat" and "loc$lon".

import { q } from "../db/sql.ts";
import { type FieldDef, type SchemaDef, primaryKeyOf } from "./definition.ts";

export const LAYOUT_TABLE = "_burrow_layout";

export function tableName(schema: string): string {
  return `o_${schema}`;
}

export function columnsOf(field: string, def: FieldDef): string[] {
  return def.type === "geopoint" ? [`${field}$lat`, `${field}$lon`] : [field];
}

function sqlTypeOf(def: FieldDef): "TEXT" | "INTEGER" | "REAL" {
  switch (def.type) {
    case "integer":
    case "boolean":
      return "INTEGER";
    case "float":
    case "geopoint":
      return "REAL";
    default:
      return "TEXT";
  }
}

function indexName(schema: string, fields: readonly string[]): string {
  return `ix$${schema}$${fields.join("$")}`;
}

export function createTableSql(def: SchemaDef): string {
  const cols = [`${q(primaryKeyOf(def))} TEXT PRIMARY KEY NOT NULL`];
  for (const [name, f] of Object.entries(def.fields)) for (const col of columnsOf(name, f)) cols.push(`${q(col)} ${sqlTypeOf(f)}`);
  cols.push(`"createddate" INTEGER NOT NULL`, `"lastmoddate" INTEGER NOT NULL`, `"sm_owner" TEXT`);
  return `CREATE TABLE ${q(tableName(def.name))} (${cols.join(", ")}) STRICT`;
}

export function addColumnSql(schema: string, column: string, f: FieldDef): string {
  return `ALTER TABLE ${q(tableName(schema))} ADD COLUMN ${q(column)} ${sqlTypeOf(f)}`;
}

export function createIndexSql(def: Pick<SchemaDef, "name" | "fields">, fields: readonly string[]): string {
  const cols = fields.flatMap((f) => (def.fields[f] ? columnsOf(f, def.fields[f]!) : [f]));
  return `CREATE INDEX IF NOT EXISTS ${q(indexName(def.name, fields))} ON ${q(tableName(def.name))} (${cols.map(q).join(", ")})`;
}

export function dropIndexSql(schema: string, fields: readonly string[]): string {
  return `DROP INDEX IF EXISTS ${q(indexName(schema, fields))}`;
}

/** The R*Tree that indexes one geopoint field, kept current by triggers on the object table. */
export function geoTableName(schema: string, field: string): string {
  return `g$${schema}$${field}`;
}

function geoParts(schema: string, field: string) {
  const [lat, lon] = columnsOf(field, { type: "geopoint" }).map(q);
  return {
    g: q(geoTableName(schema, field)),
    t: q(tableName(schema)),
    lat,
    lon,
    trig: (what: string) => q(`${geoTableName(schema, field)}$${what}`),
    row: (r: string) => `${r}.rowid, ${r}.${lat}, ${r}.${lat}, ${r}.${lon}, ${r}.${lon}`,
  };
}

/** The trigger that adds each inserted object's point to the R*Tree. */
export function geoInsertTriggerSql(schema: string, field: string): string {
  const { g, t, lat, lon, trig, row } = geoParts(schema, field);
  return `CREATE TRIGGER IF NOT EXISTS ${trig("insert")} AFTER INSERT ON ${t} WHEN new.${lat} IS NOT NULL AND new.${lon} IS NOT NULL BEGIN INSERT INTO ${g} VALUES (${row("new")}); END`;
}

/**
 * Bulk loads (imports) drop the insert trigger, then add the points of every object the R*Tree lacks in one
 * pass ordered by position (far faster than one insert per object in arrival order) and put the trigger back.
 */
export function pauseGeoInsertSql(schema: string, field: string): string {
  return `DROP TRIGGER IF EXISTS ${geoParts(schema, field).trig("insert")}`;
}

export function resumeGeoInsertSql(schema: string, field: string): string[] {
  const { g, t, lat, lon, row } = geoParts(schema, field);
  return [
    `INSERT INTO ${g} SELECT ${row("t")} FROM ${t} AS t WHERE t.${lat} IS NOT NULL AND t.${lon} IS NOT NULL AND t.rowid NOT IN (SELECT id FROM ${g}) ORDER BY t.${lat}, t.${lon}`,
    geoInsertTriggerSql(schema, field),
  ];
}

export function createGeoIndexSql(schema: string, field: string): string[] {
  const { g, t, lat, lon, trig, row } = geoParts(schema, field);
  return [
    `CREATE VIRTUAL TABLE ${g} USING rtree(id, min_lat, max_lat, min_lon, max_lon)`,
    `INSERT INTO ${g} SELECT ${row("t")} FROM ${t} AS t WHERE t.${lat} IS NOT NULL AND t.${lon} IS NOT NULL`,
    geoInsertTriggerSql(schema, field),
    `CREATE TRIGGER ${trig("update")} AFTER UPDATE OF ${lat}, ${lon} ON ${t} BEGIN DELETE FROM ${g} WHERE id = old.rowid; INSERT INTO ${g} SELECT ${row("new")} WHERE new.${lat} IS NOT NULL AND new.${lon} IS NOT NULL; END`,
    `CREATE TRIGGER ${trig("delete")} AFTER DELETE ON ${t} BEGIN DELETE FROM ${g} WHERE id = old.rowid; END`,
  ];
}

export function dropGeoIndexSql(schema: string, field: string): string[] {
  const name = geoTableName(schema, field);
  return [...["insert", "update", "delete"].map((w) => `DROP TRIGGER IF EXISTS ${q(`${name}$${w}`)}`), `DROP TABLE IF EXISTS ${q(name)}`];
}

/**
 * Triggers that move the files of a deleted object, or the replaced file of a binary field, to the trash in
 * the same transaction as the change (files.ts empties the trash from the store).
 */
export function createFileTriggersSql(def: SchemaDef): string[] {
  const binaries = Object.entries(def.fields)
    .filter(([, f]) => f.type === "binary")
    .map(([n]) => n);
  if (binaries.length === 0) return [];
  const t = q(tableName(def.name));
  const pk = q(primaryKeyOf(def));
  const owner = `schema = '${def.name}' AND object = old.${pk}`;
  const trash = (cond: string) =>
    `INSERT OR IGNORE INTO _burrow_trash (key, store, since) SELECT key, store, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM _burrow_files WHERE ${cond}; DELETE FROM _burrow_files WHERE ${cond};`;
  return [
    `CREATE TRIGGER ${q(`f$${def.name}$delete`)} AFTER DELETE ON ${t} BEGIN ${trash(owner)} END`,
    ...binaries.map(
      (f) =>
        `CREATE TRIGGER ${q(`f$${def.name}$${f}$update`)} AFTER UPDATE OF ${q(f)} ON ${t} BEGIN ${trash(`${owner} AND field = '${f}' AND url IS NOT new.${q(f)}`)} END`,
    ),
  ];
}

export function dropFileTriggersSql(def: Pick<SchemaDef, "name" | "fields">): string[] {
  return [`f$${def.name}$delete`, ...Object.keys(def.fields).map((f) => `f$${def.name}$${f}$update`)].map(
    (n) => `DROP TRIGGER IF EXISTS ${q(n)}`,
  );
}

/** Name of the trigger that ends everything of a deleted user of schema `name`. */
export function userTriggerName(name: string): string {
  return `u$${name}$delete`;
}

/**
 * Per user schema, the trigger that ends everything of a deleted user in the same transaction as the delete, by
 * whatever path it is deleted: its sessions (tokens and cookies), temporary password, social links, second factor
 * (and pending mfa_tokens), passkeys (and pending passkey challenges) and push tokens go, objects it owned lose their owner, and its key leaves every
 * relationship field that points at its schema (roles included), so a later account with the same username
 * inherits nothing. `layouts` is every table of the
 * database; the triggers are rebuilt whenever it changes (they name the tables and fields). DDL text. Pure.
 */
export function userTriggersSql(layouts: readonly SchemaDef[]): string[] {
  const out: string[] = [];
  for (const u of layouts) {
    if (!u.user) continue;
    const key = `old.${q(primaryKeyOf(u))}`;
    const name = lit(u.name);
    const body = [
      `DELETE FROM _burrow_sessions WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_temp_passwords WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_email_codes WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_social_links WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_mfa WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_mfa_tokens WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_passkeys WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_passkey_challenges WHERE user_schema = ${name} AND username = ${key};`,
      `DELETE FROM _burrow_push_tokens WHERE user = ${key};`,
    ];
    for (const t of layouts) {
      const table = q(tableName(t.name));
      body.push(`UPDATE ${table} SET "sm_owner" = NULL WHERE "sm_owner" = ${lit(`${u.name}/`)} || ${key};`);
      for (const [f, def] of Object.entries(t.fields)) {
        if (def.type !== "relationship" || def.schema !== u.name) continue;
        const c = q(f);
        if (!def.many) body.push(`UPDATE ${table} SET ${c} = NULL WHERE ${c} = ${key};`);
        else
          body.push(
            `UPDATE ${table} SET ${c} = (SELECT json_group_array(value) FROM json_each(${table}.${c}) WHERE value IS NOT ${key}) WHERE EXISTS (SELECT 1 FROM json_each(${table}.${c}) WHERE value = ${key});`,
          );
      }
    }
    out.push(
      `DROP TRIGGER IF EXISTS ${q(userTriggerName(u.name))}`,
      `CREATE TRIGGER ${q(userTriggerName(u.name))} AFTER DELETE ON ${q(tableName(u.name))} BEGIN ${body.join(" ")} END`,
    );
  }
  return out;
}

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * What dropping user schema `name` leaves to end: every session, temporary password, social link, second factor,
 * passkey of its users, and their ownership of objects in the remaining tables (`others`). Push tokens name users without their schema
 * and stay with the registry. DDL and DML text. Pure.
 */
export function dropUsersSql(name: string, others: readonly SchemaDef[]): string[] {
  const n = lit(name);
  const prefix = lit(`${name}/`);
  return [
    `DELETE FROM _burrow_sessions WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_temp_passwords WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_email_codes WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_social_links WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_mfa WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_mfa_tokens WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_passkeys WHERE user_schema = ${n}`,
    `DELETE FROM _burrow_passkey_challenges WHERE user_schema = ${n}`,
    `DROP TRIGGER IF EXISTS ${q(userTriggerName(name))}`,
    ...others.map(
      (t) => `UPDATE ${q(tableName(t.name))} SET "sm_owner" = NULL WHERE substr("sm_owner", 1, ${name.length + 1}) = ${prefix}`,
    ),
  ];
}
