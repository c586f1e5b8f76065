// The change log of an environment database (docs/decisions/live.md): every write to an object table, by any path,
// adds a row in the same transaction through triggers on the table, with the object as JSON before and after
// (every field, file paths as stored: json-sql.ts without a viewer). Ended sessions are logged too, so live streams
// on every node learn of them. Ids increase with every change (AUTOINCREMENT: never reused after pruning). Imports
// may write without logging by holding a row in _burrow_quiet for their transaction. DDL text. Pure.

import { q } from "../db/sql.ts";
import { type SchemaDef, primaryKeyOf } from "./definition.ts";
import { type FloatStyle, objectJsonSql } from "./json-sql.ts";
import { tableName } from "./layout.ts";

export const CHANGES_TABLE = "_burrow_changes";
export const QUIET_TABLE = "_burrow_quiet";

/** What a change log row records. */
export type ChangeKind = "create" | "update" | "delete" | "session" | "stream" | "reset";

const NOW_MS = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

export const CHANGE_LOG_DDL = [
  `CREATE TABLE IF NOT EXISTS ${CHANGES_TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind TEXT NOT NULL, schema TEXT, object TEXT, before TEXT, after TEXT) STRICT`,
  `CREATE TABLE IF NOT EXISTS ${QUIET_TABLE} (reason TEXT NOT NULL) STRICT`,
  // A session ends however its row goes: logout, revocation, a new password, the user's deletion, expiry.
  `CREATE TRIGGER IF NOT EXISTS "_burrow_sessions$end" AFTER DELETE ON _burrow_sessions BEGIN INSERT INTO ${CHANGES_TABLE} (at, kind, object) VALUES (${NOW_MS}, 'session', old.family); END`,
];

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

function triggerName(schema: string, what: "insert" | "update" | "delete"): string {
  return q(`c$${schema}$${what}`);
}

/** Drop the change triggers of one table (before its columns change: a trigger naming a column blocks dropping it). */
export function dropChangeTriggersSql(schema: string): string[] {
  return (["insert", "update", "delete"] as const).map((w) => `DROP TRIGGER IF EXISTS ${triggerName(schema, w)}`);
}

/**
 * The three triggers that log the writes of one object table. `layout` is the table's physical definition (every
 * field a column holds): the logged JSON carries all of them, and each reader keeps the fields of its API version.
 */
export function changeTriggersSql(layout: SchemaDef, floats: FloatStyle): string[] {
  const pk = primaryKeyOf(layout);
  const fields = Object.entries(layout.fields);
  const json = (row: "new" | "old") => objectJsonSql(pk, fields, row, { floats }).sql;
  const table = q(tableName(layout.name));
  const name = lit(layout.name);
  const when = `WHEN NOT EXISTS (SELECT 1 FROM ${QUIET_TABLE})`;
  const insert = (kind: string, key: string, before: string, after: string) =>
    `INSERT INTO ${CHANGES_TABLE} (at, kind, schema, object, before, after) VALUES (${NOW_MS}, '${kind}', ${name}, ${key}, ${before}, ${after});`;
  return [
    ...dropChangeTriggersSql(layout.name),
    `CREATE TRIGGER ${triggerName(layout.name, "insert")} AFTER INSERT ON ${table} ${when} BEGIN ${insert("create", `new.${q(pk)}`, "NULL", json("new"))} END`,
    `CREATE TRIGGER ${triggerName(layout.name, "update")} AFTER UPDATE ON ${table} ${when} BEGIN ${insert("update", `new.${q(pk)}`, json("old"), json("new"))} END`,
    `CREATE TRIGGER ${triggerName(layout.name, "delete")} AFTER DELETE ON ${table} ${when} BEGIN ${insert("delete", `old.${q(pk)}`, json("old"), "NULL")} END`,
  ];
}

/** Statements that write without logging while they run in one transaction: put first and last around the writes. */
export function quietSql(reason: string): { begin: { sql: string; args: string[] }; end: { sql: string; args: string[] } } {
  return {
    begin: { sql: `INSERT INTO ${QUIET_TABLE} (reason) VALUES (?)`, args: [reason] },
    end: { sql: `DELETE FROM ${QUIET_TABLE} WHERE reason = ?`, args: [reason] },
  };
}

/**
 * After a restore: the log's ids jump past any id given before (they are also above every millisecond timestamp times
 * 1000 so far, so a later restore of an older backup jumps again), and a reset row tells every stream to reload.
 */
export function resetStatements(now = Date.now()): { sql: string; args: number[] }[] {
  return [
    { sql: CHANGE_LOG_DDL[0]!, args: [] },
    {
      sql: `INSERT INTO sqlite_sequence (name, seq) SELECT '${CHANGES_TABLE}', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '${CHANGES_TABLE}')`,
      args: [],
    },
    { sql: `UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = '${CHANGES_TABLE}'`, args: [now * 1000] },
    { sql: `INSERT INTO ${CHANGES_TABLE} (at, kind) VALUES (?, 'reset')`, args: [now] },
  ];
}
