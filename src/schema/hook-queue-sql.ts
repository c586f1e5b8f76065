// The after-hook queue of an environment database (docs/decisions/code.md, "Hooks"): for each schema and event the
// custom code wants after-hooks for (`_burrow_hook_targets`, kept by the code layer), a trigger on the object table
// queues the change - the object as JSON after and before - in the write's own transaction, so a crash between the
// commit and the hook can never skip it. Who wrote, how and from where come from `_burrow_write_ctx`, a one-row
// table the datastore sets at the start of each write transaction and clears at its end (a row a write of another
// schema queues is a cascade). Ids never repeat (AUTOINCREMENT): a hook de-duplicates by them. DDL text. Pure.

import { q } from "../db/sql.ts";
import { QUIET_LOG_ONLY, QUIET_TABLE } from "./change-log.ts";
import { type SchemaDef, primaryKeyOf } from "./definition.ts";
import { type FloatStyle, objectJsonSql } from "./json-sql.ts";
import { tableName } from "./layout.ts";

export const HOOK_QUEUE_TABLE = "_burrow_hook_queue";
export const HOOK_DEAD_TABLE = "_burrow_hook_dead";
export const HOOK_TARGETS_TABLE = "_burrow_hook_targets";
export const WRITE_CTX_TABLE = "_burrow_write_ctx";

/** After-hook events a trigger can queue. */
export type AfterEvent = "afterCreate" | "afterUpdate" | "afterDelete" | "afterSignup";
export const AFTER_EVENTS: readonly AfterEvent[] = ["afterCreate", "afterUpdate", "afterDelete", "afterSignup"];

const COLUMNS = `at INTEGER NOT NULL, schema TEXT NOT NULL, event TEXT NOT NULL, key TEXT NOT NULL, object TEXT, previous TEXT,
  user TEXT, auth TEXT NOT NULL, source TEXT NOT NULL, depth INTEGER NOT NULL, version INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0`;

export const HOOK_QUEUE_DDL = [
  `CREATE TABLE IF NOT EXISTS ${HOOK_TARGETS_TABLE} (schema TEXT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (schema, event)) STRICT, WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS ${WRITE_CTX_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), schema TEXT, user TEXT, auth TEXT NOT NULL,
    source TEXT NOT NULL, depth INTEGER NOT NULL, version INTEGER NOT NULL, signup INTEGER NOT NULL) STRICT`,
  `CREATE TABLE IF NOT EXISTS ${HOOK_QUEUE_TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, ${COLUMNS},
    next_at INTEGER NOT NULL, lease_until INTEGER NOT NULL DEFAULT 0, error TEXT)`,
  `CREATE INDEX IF NOT EXISTS ${HOOK_QUEUE_TABLE}_due ON ${HOOK_QUEUE_TABLE} (next_at)`,
  `CREATE TABLE IF NOT EXISTS ${HOOK_DEAD_TABLE} (id INTEGER PRIMARY KEY, ${COLUMNS}, failed_at INTEGER NOT NULL, error TEXT NOT NULL) STRICT`,
];

const NOW_MS = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`;
const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

function triggerName(schema: string, what: "insert" | "update" | "delete"): string {
  return q(`h$${schema}$${what}`);
}

/** Drop the hook triggers of one table (before its columns change, and when its after-hooks go). */
export function dropHookTriggersSql(schema: string): string[] {
  return (["insert", "update", "delete"] as const).map((w) => `DROP TRIGGER IF EXISTS ${triggerName(schema, w)}`);
}

/**
 * The triggers that queue one table's after-hooks for `events` (a schema without any gets none). Imports holding a
 * row in _burrow_quiet queue nothing (unless the row holds back the change log only: `burrow import --hooks`).
 */
export function hookTriggersSql(layout: SchemaDef, floats: FloatStyle, events: ReadonlySet<string>): string[] {
  const pk = primaryKeyOf(layout);
  const fields = Object.entries(layout.fields);
  const json = (row: "new" | "old") => objectJsonSql(pk, fields, row, { floats }).sql;
  const table = q(tableName(layout.name));
  const name = lit(layout.name);
  const when = `WHEN NOT EXISTS (SELECT 1 FROM ${QUIET_TABLE} WHERE reason <> '${QUIET_LOG_ONLY}')`;
  // Without a context row (a write outside the datastore) the change counts as the server's own.
  const queue = (event: AfterEvent, key: string, object: string, previous: string, only = "") =>
    `INSERT INTO ${HOOK_QUEUE_TABLE} (at, schema, event, key, object, previous, user, auth, source, depth, version, next_at)
     SELECT ${NOW_MS}, ${name}, '${event}', ${key}, ${object}, ${previous}, c.user, coalesce(c.auth, 'code'),
       CASE WHEN c.schema IS NULL THEN 'code' WHEN c.schema = ${name} THEN c.source ELSE 'cascade' END,
       coalesce(c.depth, 0), coalesce(c.version, 0), ${NOW_MS}
     FROM (SELECT 1) LEFT JOIN ${WRITE_CTX_TABLE} AS c ON c.id = 1 ${only};`;
  const out = dropHookTriggersSql(layout.name);
  const onInsert = [
    events.has("afterCreate") ? queue("afterCreate", `new.${q(pk)}`, json("new"), "NULL") : "",
    events.has("afterSignup") && layout.user ? queue("afterSignup", `new.${q(pk)}`, json("new"), "NULL", "WHERE c.signup = 1") : "",
  ].join(" ");
  if (onInsert.trim())
    out.push(`CREATE TRIGGER ${triggerName(layout.name, "insert")} AFTER INSERT ON ${table} ${when} BEGIN ${onInsert} END`);
  if (events.has("afterUpdate"))
    out.push(
      `CREATE TRIGGER ${triggerName(layout.name, "update")} AFTER UPDATE ON ${table} ${when} BEGIN ${queue("afterUpdate", `new.${q(pk)}`, json("new"), json("old"))} END`,
    );
  if (events.has("afterDelete"))
    out.push(
      `CREATE TRIGGER ${triggerName(layout.name, "delete")} AFTER DELETE ON ${table} ${when} BEGIN ${queue("afterDelete", `old.${q(pk)}`, "NULL", json("old"))} END`,
    );
  return out;
}

/** Every table's hook triggers for the targets (schema -> events); tables without targets get theirs dropped. */
export function hookTriggersForSql(
  layouts: readonly SchemaDef[],
  floats: FloatStyle,
  targets: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  return layouts.flatMap((l) => {
    const events = targets.get(l.name);
    return events?.size ? hookTriggersSql(l, floats, events) : dropHookTriggersSql(l.name);
  });
}

/** Free every lease (a process starting alone on its store: whoever held them is gone). */
export const RELEASE_HOOK_LEASES_SQL = `UPDATE ${HOOK_QUEUE_TABLE} SET lease_until = 0 WHERE lease_until > 0`;

export const READ_HOOK_TARGETS_SQL = `SELECT schema, event FROM ${HOOK_TARGETS_TABLE}`;

/** The targets as read from the table. */
export function targetsOf(rows: readonly { schema: unknown; event: unknown }[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of rows) {
    const set = out.get(String(r.schema)) ?? new Set<string>();
    set.add(String(r.event));
    out.set(String(r.schema), set);
  }
  return out;
}

/** The statement that sets a write's context (first in its transaction) and the one that clears it (last). */
export function writeContextSql(c: {
  schema: string;
  user: string | null;
  auth: string;
  source: string;
  depth: number;
  version: number;
  signup: boolean;
}): { set: { sql: string; args: (string | number | null)[] }; clear: string } {
  return {
    set: {
      sql: `INSERT OR REPLACE INTO ${WRITE_CTX_TABLE} (id, schema, user, auth, source, depth, version, signup) VALUES (1, ?, ?, ?, ?, ?, ?, ?)`,
      args: [c.schema, c.user, c.auth, c.source, c.depth, c.version, c.signup ? 1 : 0],
    },
    clear: `DELETE FROM ${WRITE_CTX_TABLE}`,
  };
}
