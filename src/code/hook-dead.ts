// The after-hook dead-letter list of an environment database: changes whose hook failed every try, with the last
// error. Listed newest first; one can be sent back to the queue (tried afresh) or removed. Also the queue's figures.

import type { Client } from "@libsql/core/api";
import { HOOK_DEAD_TABLE, HOOK_QUEUE_TABLE } from "../schema/hook-queue-sql.ts";

export interface DeadChange {
  id: number;
  at: string;
  failedAt: string;
  schema: string;
  event: string;
  key: string;
  object: unknown;
  previous: unknown;
  user: string | null;
  auth: string;
  source: string;
  version: number;
  attempts: number;
  error: string;
}

const parse = (v: unknown) => (v === null || v === undefined ? null : (JSON.parse(String(v)) as unknown));

/** Up to `limit` dead changes, newest first, below id `before` when given. */
export async function listDead(db: Client, limit: number, before?: number): Promise<DeadChange[]> {
  const rs = await db.execute({
    sql: `SELECT id, at, failed_at, schema, event, key, object, previous, user, auth, source, version, attempts, error FROM ${HOOK_DEAD_TABLE}
          WHERE id < ? ORDER BY id DESC LIMIT ?`,
    args: [before ?? Number.MAX_SAFE_INTEGER, limit],
  });
  return rs.rows.map((r) => ({
    id: Number(r.id),
    at: new Date(Number(r.at)).toISOString(),
    failedAt: new Date(Number(r.failed_at)).toISOString(),
    schema: String(r.schema),
    event: String(r.event),
    key: String(r.key),
    object: parse(r.object),
    previous: parse(r.previous),
    user: r.user === null ? null : String(r.user),
    auth: String(r.auth),
    source: String(r.source),
    version: Number(r.version),
    attempts: Number(r.attempts),
    error: String(r.error),
  }));
}

/** Send a dead change back to the queue with its tries counted afresh; false when there is no such change. */
export async function retryDead(db: Client, id: number): Promise<boolean> {
  const [moved] = await db.batch(
    [
      {
        sql: `INSERT INTO ${HOOK_QUEUE_TABLE} (id, at, schema, event, key, object, previous, user, auth, source, depth, version, attempts, next_at)
              SELECT id, at, schema, event, key, object, previous, user, auth, source, depth, version, 0, ? FROM ${HOOK_DEAD_TABLE} WHERE id = ?`,
        args: [Date.now(), id],
      },
      { sql: `DELETE FROM ${HOOK_DEAD_TABLE} WHERE id = ?`, args: [id] },
    ],
    "write",
  );
  return moved!.rowsAffected > 0;
}

/** Remove a dead change; false when there is none. */
export async function removeDead(db: Client, id: number): Promise<boolean> {
  return (await db.execute({ sql: `DELETE FROM ${HOOK_DEAD_TABLE} WHERE id = ?`, args: [id] })).rowsAffected > 0;
}

/** Changes waiting in the queue (and how old the oldest is) and dead ones. */
export async function hookFigures(db: Client, now = Date.now()): Promise<{ queued: number; oldestMs: number; dead: number }> {
  const rs = await db.execute(
    `SELECT (SELECT count(*) FROM ${HOOK_QUEUE_TABLE}) AS queued, (SELECT min(at) FROM ${HOOK_QUEUE_TABLE}) AS oldest,
            (SELECT count(*) FROM ${HOOK_DEAD_TABLE}) AS dead`,
  );
  const r = rs.rows[0]!;
  return { queued: Number(r.queued), oldestMs: r.oldest === null ? 0 : Math.max(0, now - Number(r.oldest)), dead: Number(r.dead) };
}
