// The change log of an environment database (docs/decisions/live.md): while any live stream exists, every write to an
// object table, by any path, adds a row in the same transaction through triggers on the table, with the object as
// JSON before and after (every field, file paths as stored: json-sql.ts without a viewer). Ended sessions are logged
// too, so live streams on every node learn of them. The triggers exist only while streams do (the first stream
// creates them, the last one's removal drops them, in the same transactions): an app without live data pays nothing.
// Ids increase with every change: pruning never removes the newest row, so the next id is always above every id given
// before. Imports may write without logging by holding a row in _burrow_quiet for their transaction. DDL text. Pure.

import { q } from "../db/sql.ts";
import { type SchemaDef, primaryKeyOf } from "./definition.ts";
import { type FloatStyle, objectJsonSql } from "./json-sql.ts";
import { tableName } from "./layout.ts";

export const CHANGES_TABLE = "_burrow_changes";
export const QUIET_TABLE = "_burrow_quiet";
/** Live streams (src/live/stream-store.ts): logging happens while this table holds any. */
export const STREAMS_TABLE = "_burrow_live_streams";

/** What a change log row records. */
export type ChangeKind = "create" | "update" | "delete" | "session" | "stream" | "reset";

const NOW_MS = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

export const CHANGE_LOG_DDL = [
  `CREATE TABLE IF NOT EXISTS ${CHANGES_TABLE} (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, kind TEXT NOT NULL, schema TEXT, object TEXT, before TEXT, after TEXT) STRICT`,
  `CREATE TABLE IF NOT EXISTS ${QUIET_TABLE} (reason TEXT NOT NULL) STRICT`,
];

const SESSION_TRIGGER = `"_burrow_sessions$end"`;

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
  const when = `WHEN NOT EXISTS (SELECT 1 FROM ${QUIET_TABLE} WHERE reason <> '${QUIET_HOOKS_ONLY}')`;
  const insert = (kind: string, key: string, before: string, after: string) =>
    `INSERT INTO ${CHANGES_TABLE} (at, kind, schema, object, before, after) VALUES (${NOW_MS}, '${kind}', ${name}, ${key}, ${before}, ${after});`;
  return [
    ...dropChangeTriggersSql(layout.name),
    `CREATE TRIGGER ${triggerName(layout.name, "insert")} AFTER INSERT ON ${table} ${when} BEGIN ${insert("create", `new.${q(pk)}`, "NULL", json("new"))} END`,
    `CREATE TRIGGER ${triggerName(layout.name, "update")} AFTER UPDATE ON ${table} ${when} BEGIN ${insert("update", `new.${q(pk)}`, json("old"), json("new"))} END`,
    `CREATE TRIGGER ${triggerName(layout.name, "delete")} AFTER DELETE ON ${table} ${when} BEGIN ${insert("delete", `old.${q(pk)}`, json("old"), "NULL")} END`,
  ];
}

/**
 * Logging on (every table's change triggers, and the session trigger: a session ends however its row goes - logout,
 * revocation, a new password, the user's deletion, expiry) or off (all of them dropped). `layouts`: every table.
 */
export function changeLoggingSql(layouts: readonly SchemaDef[], floats: FloatStyle, on: boolean): string[] {
  if (!on) return [`DROP TRIGGER IF EXISTS ${SESSION_TRIGGER}`, ...layouts.flatMap((l) => dropChangeTriggersSql(l.name))];
  return [
    `DROP TRIGGER IF EXISTS ${SESSION_TRIGGER}`,
    `CREATE TRIGGER ${SESSION_TRIGGER} AFTER DELETE ON _burrow_sessions BEGIN INSERT INTO ${CHANGES_TABLE} (at, kind, object) VALUES (${NOW_MS}, 'session', old.family); END`,
    ...layouts.flatMap((l) => changeTriggersSql(l, floats)),
  ];
}

/** Whether logging is wanted: some live stream exists. */
export const STREAMS_EXIST_SQL = `SELECT EXISTS (SELECT 1 FROM ${STREAMS_TABLE}) AS on_`;

/** Quiet rows with this reason hold back after-hooks only (src/schema/hook-queue-sql.ts), not the change log. */
export const QUIET_HOOKS_ONLY = "hooks";
/** Quiet rows with this reason hold back the change log only, not after-hooks. */
export const QUIET_LOG_ONLY = "log";

/**
 * Statements that write without logging (and without queuing after-hooks) while they run in one transaction: put
 * first and last around the writes. The reasons QUIET_HOOKS_ONLY and QUIET_LOG_ONLY hold back only one of the two.
 */
export function quietSql(reason: string): { begin: { sql: string; args: string[] }; end: { sql: string; args: string[] } } {
  return {
    begin: { sql: `INSERT INTO ${QUIET_TABLE} (reason) VALUES (?)`, args: [reason] },
    end: { sql: `DELETE FROM ${QUIET_TABLE} WHERE reason = ?`, args: [reason] },
  };
}

/**
 * After a restore: a reset row whose id is above any id given before (also above every millisecond timestamp times 1000
 * so far, so a later restore of an older backup jumps again) tells every stream to reload.
 */
export function resetStatements(now = Date.now()): { sql: string; args: number[] }[] {
  return [
    { sql: CHANGE_LOG_DDL[0]!, args: [] },
    {
      sql: `INSERT INTO ${CHANGES_TABLE} (id, at, kind) VALUES (max(coalesce((SELECT max(id) FROM ${CHANGES_TABLE}), 0) + 1, ?), ?, 'reset')`,
      args: [now * 1000, now],
    },
  ];
}
