// A schema definition prepared for the datastore: its table, primary key, column list, and the SQL of the
// point operations (rows come back as the API's JSON text). Built once per definition change.

import { q } from "../db/sql.ts";
import { type FieldDef, type SchemaDef, primaryKeyOf } from "./definition.ts";
import { columnsOf, tableName } from "./layout.ts";
import type { InValue } from "@libsql/core/api";
import { type FloatStyle, type ObjectSql, type Viewer, bindViewer, objectJsonSql } from "./json-sql.ts";

interface FieldColumns {
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
  /** Physical columns in insert order: key, field columns, createddate, lastmoddate, sm_owner. */
  readonly columns: readonly string[];
  /**
   * SQL expression rendering a row of alias `t` as the API's JSON object with file paths as stored and every field
   * shown: what every viewer gets when `sameForAll`, otherwise only for rows nobody is answered with.
   */
  readonly json: string;
  /** The same over unqualified columns (for RETURNING). */
  readonly jsonReturning: string;
  /** GET by key rendered with `json` (answered as it is only when `sameForAll`). */
  readonly sqlGet: string;
  /** The insert answering the object rendered with `jsonReturning`. */
  readonly sqlInsert: string;
  /** The insert without its RETURNING clause (a viewer's rendering is appended). */
  readonly sqlInsertHead: string;
  /** Objects render alike for every viewer: no binary fields (links carry the viewer's base) and no owner-only fields. */
  readonly sameForAll: boolean;
  /** Fields declared `"visibility": "owner"`. */
  readonly ownerOnly: ReadonlySet<string>;
  /** The object's JSON for a viewer, over alias `t` or (null) unqualified columns for RETURNING, with its arguments. */
  renderFor(viewer: Viewer, qualifier: "t" | null): { sql: string; args: InValue[] };
  /** The insert answering only the key (batch creates). */
  readonly sqlInsertKey: string;
  readonly sqlDelete: string;
  readonly passwordField: string | null;
  /** Operations whose permission is "open" (no access check needed). */
  readonly open: Record<"create" | "read" | "update" | "delete", boolean>;
  /** Every field with its physical columns, in definition order (password included). */
  readonly fieldColumns: readonly FieldColumns[];
  readonly columnsByField: ReadonlyMap<string, FieldColumns>;
  /** How this database's SQLite must be asked to write floats (queries rendering objects pass it on). */
  readonly floats: FloatStyle;
}

/** A set of schemas as one API version sees them. */
export interface SchemaSet {
  readonly version: number;
  readonly schemas: ReadonlyMap<string, CompiledSchema>;
  /** The catalog load that compiled it (every load compiles every set anew); absent for sets made elsewhere. */
  readonly generation?: number;
}

export function compileSchema(def: SchemaDef, floats: FloatStyle = "native"): CompiledSchema {
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
  columns.push("createddate", "lastmoddate", "sm_owner");
  const json = objectJsonSql(pk, fields, "t", { floats }).sql;
  const jsonReturning = objectJsonSql(pk, fields, null, { floats }).sql;
  const ownerOnly = new Set([...fields].filter(([, f]) => f.visibility === "owner").map(([n]) => n));
  const sameForAll = ownerOnly.size === 0 && ![...fields.values()].some((f) => f.type === "binary");
  // The SQL of a rendering depends on the viewer's kind only; its arguments on the viewer itself.
  const renderings = new Map<string, ObjectSql>();
  const renderFor = (viewer: Viewer, qualifier: "t" | null) => {
    const o = viewer.owner;
    const key = `${qualifier}|${viewer.fileBase === null ? 0 : 1}|${typeof o === "string" ? o : o.self === null ? "u" : "s"}`;
    let r = renderings.get(key);
    if (!r) renderings.set(key, (r = objectJsonSql(pk, fields, qualifier, { floats, viewer })));
    return { sql: r.sql, args: bindViewer(r.slots, viewer) };
  };
  const insert = `INSERT INTO ${table} (${columns.map(q).join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`;
  return {
    def,
    name: def.name,
    pk,
    table,
    fields,
    columns,
    json,
    jsonReturning,
    sqlGet: `SELECT ${json} AS j FROM ${table} AS t WHERE t.${q(pk)} = ?`,
    sqlInsert: `${insert} RETURNING ${jsonReturning} AS j`,
    sqlInsertHead: insert,
    sameForAll,
    ownerOnly,
    renderFor,
    sqlInsertKey: `${insert} RETURNING ${q(pk)}`,
    sqlDelete: `DELETE FROM ${table} WHERE ${q(pk)} = ?`,
    floats,
    passwordField: def.user?.password ?? null,
    open: {
      create: def.permissions.create === "open",
      read: def.permissions.read === "open",
      update: def.permissions.update === "open",
      delete: def.permissions.delete === "open",
    },
    fieldColumns,
    columnsByField: new Map(fieldColumns.map((fc) => [fc.name, fc])),
  };
}
