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

export function sqlTypeOf(def: FieldDef): "TEXT" | "INTEGER" | "REAL" {
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

export function indexName(schema: string, fields: readonly string[]): string {
  return `ix$${schema}$${fields.join("$")}`;
}

export function createTableSql(def: SchemaDef): string {
  const cols = [`${q(primaryKeyOf(def))} TEXT PRIMARY KEY NOT NULL`];
  for (const [name, f] of Object.entries(def.fields))
    for (const col of columnsOf(name, f)) cols.push(`${q(col)} ${sqlTypeOf(f)}`);
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
