// A schema definition prepared for the datastore: its table, primary key, column list, the SQL of the
// point operations and a row decoder. Built once per definition change, shared by every request.

import type { Row } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import { type FieldDef, type SchemaDef, primaryKeyOf } from "./definition.ts";
import { columnsOf, tableName } from "./layout.ts";
import { decodeValue, type Json } from "./values.ts";

export type JsonObject = Record<string, Json>;
export interface FieldColumns {
  name: string;
  def: FieldDef;
  cols: string[];
}

export interface CompiledSchema {
  readonly def: SchemaDef;
  readonly name: string;
  readonly pk: string;
  /** Quoted table name. */
  readonly table: string;
  /** Field definitions by name (a Map, so no name can reach Object.prototype). */
  readonly fields: ReadonlyMap<string, FieldDef>;
  /** Physical columns in SELECT order: key, field columns, createddate, lastmoddate, sm_owner. */
  readonly columns: readonly string[];
  readonly selectList: string;
  readonly sqlGet: string;
  readonly sqlInsert: string;
  /** The insert answering only the key (batch creates). */
  readonly sqlInsertKey: string;
  readonly sqlDelete: string;
  readonly passwordField: string | null;
  /** Every field with its physical columns, in definition order (password included). */
  readonly fieldColumns: readonly FieldColumns[];
  readonly columnsByField: ReadonlyMap<string, FieldColumns>;
  decode(row: Row): JsonObject;
}

/** A set of schemas as one API version sees them. */
export interface SchemaSet {
  readonly version: number;
  readonly schemas: ReadonlyMap<string, CompiledSchema>;
}

export function compileSchema(def: SchemaDef): CompiledSchema {
  const pk = primaryKeyOf(def);
  const table = q(tableName(def.name));
  const fields = new Map(Object.entries(def.fields));
  const fieldColumns: FieldColumns[] = [];
  const columns = [pk];
  for (const [name, f] of fields) {
    const cols = columnsOf(name, f);
    columns.push(...cols);
    fieldColumns.push({ name, def: f, cols });
  }
  const readers = fieldColumns.filter((fc) => fc.def.type !== "password");
  columns.push("createddate", "lastmoddate", "sm_owner");
  const selectList = columns.map(q).join(", ");
  const passwordField = def.user?.password ?? null;
  const insert = `INSERT INTO ${table} (${selectList}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`;

  const decode = (row: Row): JsonObject => {
    const out: JsonObject = {};
    out[pk] = row[pk] as string;
    for (const r of readers) {
      out[r.name] = r.cols.length === 1 ? decodeValue(r.def, [row[r.cols[0]!] ?? null]) : decodeValue(r.def, r.cols.map((c) => row[c] ?? null));
    }
    out.createddate = row.createddate as number;
    out.lastmoddate = row.lastmoddate as number;
    if (row.sm_owner !== null && row.sm_owner !== undefined) out.sm_owner = row.sm_owner as string;
    return out;
  };

  return {
    def,
    name: def.name,
    pk,
    table,
    fields,
    columns,
    selectList,
    sqlGet: `SELECT ${selectList} FROM ${table} WHERE ${q(pk)} = ?`,
    sqlInsert: `${insert} RETURNING ${selectList}`,
    sqlInsertKey: `${insert} RETURNING ${q(pk)}`,
    sqlDelete: `DELETE FROM ${table} WHERE ${q(pk)} = ?`,
    passwordField,
    fieldColumns,
    columnsByField: new Map(fieldColumns.map((fc) => [fc.name, fc])),
    decode,
  };
}
