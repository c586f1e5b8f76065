// Live streams as stored in their environment's database, so that any node can answer for any stream: who it acts
// as, its secret token (SHA-256 only), the change it started after, and its state (subscriptions by name, joined
// channels). A change of state is written with a `stream` row in the change log in the same transaction (before and
// after), so the node holding the stream's connection learns of it in log order and a replay knows the state at
// every id. A stream nobody is connected to expires after ten minutes.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Client, Transaction } from "@libsql/core/api";
import type { EnvName, Principal } from "../request-context.ts";
import { CHANGES_TABLE, STREAMS_EXIST_SQL, STREAMS_TABLE } from "../schema/change-log.ts";
import { changeLogging } from "../schema/migrate.ts";

export const STREAMS_DDL = [
  `CREATE TABLE IF NOT EXISTS ${STREAMS_TABLE} (id TEXT PRIMARY KEY, token TEXT NOT NULL, principal TEXT NOT NULL, version INTEGER NOT NULL, file_base TEXT NOT NULL, from_id INTEGER NOT NULL, state TEXT NOT NULL, state_id INTEGER NOT NULL, created INTEGER NOT NULL, expires INTEGER NOT NULL) STRICT, WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS _burrow_live_streams_expires ON _burrow_live_streams (expires)`,
];

/** How long a stream without a connection keeps its subscriptions. */
export const STREAM_IDLE_MS = 10 * 60 * 1000;

/** What a subscription asks for, as the client sent it (compiled per stream by subscription.ts). */
export interface SubscriptionSpec {
  schema: string;
  query: string;
  select: string | null;
  events: string[];
}

export interface StreamState {
  subscriptions: Record<string, SubscriptionSpec>;
  channels: string[];
}

export interface StoredStream {
  id: string;
  env: EnvName;
  principal: Principal;
  version: number;
  fileBase: string;
  fromId: number;
  state: StreamState;
  stateId: number;
  expires: number;
}

const EMPTY: StreamState = { subscriptions: {}, channels: [] };

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

/** A stream's id names its environment ("d"/"p"), so a connection without an API key finds its database. */
export function envOfStream(id: string): EnvName | null {
  if (!/^[dp][A-Za-z0-9_-]{22}$/.test(id)) return null;
  return id[0] === "d" ? "development" : "production";
}

/**
 * Create a stream acting as `principal`; its events start after the newest change now. The first stream turns the
 * change log on, in the same transaction (src/schema/change-log.ts).
 */
export async function createStream(
  db: Client,
  env: EnvName,
  principal: Principal,
  version: number,
  fileBase: string,
  now = Date.now(),
): Promise<{ id: string; token: string; expires: number }> {
  const id = (env === "development" ? "d" : "p") + randomBytes(16).toString("base64url").slice(0, 22);
  const token = randomBytes(32).toString("base64url");
  const expires = now + STREAM_IDLE_MS;
  await inTransaction(db, async (tx) => {
    const first = Number((await tx.execute(STREAMS_EXIST_SQL)).rows[0]!.on_) === 0;
    await tx.execute({
      sql: `INSERT INTO ${STREAMS_TABLE} (id, token, principal, version, file_base, from_id, state, state_id, created, expires) VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM ${CHANGES_TABLE}), ?, 0, ?, ?)`,
      args: [id, digest(token), JSON.stringify(principal), version, fileBase, JSON.stringify(EMPTY), now, expires],
    });
    if (first) for (const sql of await changeLogging(tx, undefined, true)) await tx.execute(sql);
  });
  return { id, token, expires };
}

/** Run `fn` in a write transaction. */
async function inTransaction<T>(db: Client, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  const tx = await db.transaction("write");
  try {
    const out = await fn(tx);
    await tx.commit();
    return out;
  } finally {
    tx.close();
  }
}

/** Delete streams (by condition) and turn the change log off when none is left, in one transaction; how many went. */
async function deleteStreams(db: Client, where: string, args: (string | number)[]): Promise<number> {
  return inTransaction(db, async (tx) => {
    const rs = await tx.execute({ sql: `DELETE FROM ${STREAMS_TABLE} WHERE ${where}`, args });
    if (rs.rowsAffected > 0 && Number((await tx.execute(STREAMS_EXIST_SQL)).rows[0]!.on_) === 0)
      for (const sql of await changeLogging(tx, undefined, false)) await tx.execute(sql);
    return rs.rowsAffected;
  });
}

const toStream = (id: string, env: EnvName, r: Record<string, unknown>): StoredStream => ({
  id,
  env,
  principal: JSON.parse(r.principal as string) as Principal,
  version: Number(r.version),
  fileBase: r.file_base as string,
  fromId: Number(r.from_id),
  state: JSON.parse(r.state as string) as StreamState,
  stateId: Number(r.state_id),
  expires: Number(r.expires),
});

/** The stream, when it exists, has not expired, and (when a token is given) the token is its own. */
export async function loadStream(
  db: Pick<Client, "execute">,
  id: string,
  token: string | null,
  now = Date.now(),
): Promise<StoredStream | null> {
  const env = envOfStream(id);
  if (!env) return null;
  const rs = await db.execute({
    sql: `SELECT token, principal, version, file_base, from_id, state, state_id, expires FROM _burrow_live_streams WHERE id = ?`,
    args: [id],
  });
  const r = rs.rows[0] as unknown as Record<string, unknown> | undefined;
  if (!r || Number(r.expires) <= now) return null;
  if (token !== null) {
    const a = Buffer.from(digest(token));
    const b = Buffer.from(r.token as string);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
  }
  return toStream(id, env, r);
}

/**
 * Change a stream's state in one write transaction with its `stream` change-log row; `change` gets the current state
 * and returns the next (or throws to refuse). Null when the stream does not exist (or expired).
 */
export async function updateStreamState(
  db: Client,
  id: string,
  change: (state: StreamState) => StreamState,
  now = Date.now(),
): Promise<StreamState | null> {
  const tx: Transaction = await db.transaction("write");
  try {
    const rs = await tx.execute({ sql: `SELECT state, expires FROM _burrow_live_streams WHERE id = ?`, args: [id] });
    const r = rs.rows[0];
    if (!r || Number(r.expires) <= now) return null;
    const before = r.state as string;
    const next = JSON.stringify(change(JSON.parse(before) as StreamState));
    if (next !== before) {
      const log = await tx.execute({
        sql: `INSERT INTO ${CHANGES_TABLE} (at, kind, object, before, after) VALUES (?, 'stream', ?, ?, ?)`,
        args: [now, id, before, next],
      });
      await tx.execute({
        sql: `UPDATE _burrow_live_streams SET state = ?, state_id = ? WHERE id = ?`,
        args: [next, Number(log.lastInsertRowid), id],
      });
    }
    await tx.commit();
    return JSON.parse(next) as StreamState;
  } finally {
    tx.close();
  }
}

/** Keep streams with a connection (on this node) from expiring; at most 500 ids per statement. */
export async function touchStreams(db: Pick<Client, "execute">, ids: readonly string[], now = Date.now()): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    await db.execute({
      sql: `UPDATE _burrow_live_streams SET expires = ? WHERE id IN (${part.map(() => "?").join(", ")})`,
      args: [now + STREAM_IDLE_MS, ...part],
    });
  }
}

/** Remove streams that expired; how many went. */
export async function sweepStreams(db: Client, now = Date.now()): Promise<number> {
  // Most rounds find nothing to remove: no write transaction for them.
  const due = await db.execute({ sql: `SELECT 1 FROM ${STREAMS_TABLE} WHERE expires <= ? LIMIT 1`, args: [now] });
  return due.rows.length ? deleteStreams(db, "expires <= ?", [now]) : 0;
}

/** Every state a stream had after change `at` up to `upTo` (the `after` of its state changes in that range). */
export async function statesAfter(db: Pick<Client, "execute">, id: string, at: number, upTo: number): Promise<StreamState[]> {
  const rs = await db.execute({
    sql: `SELECT after FROM ${CHANGES_TABLE} WHERE kind = 'stream' AND object = ? AND id > ? AND id <= ? ORDER BY id`,
    args: [id, at, upTo],
  });
  return rs.rows.map((r) => JSON.parse(r.after as string) as StreamState);
}

/** The state of a stream as it was right after change `at`: the `before` of its first state change after it, else `current`. */
export async function stateAt(db: Pick<Client, "execute">, id: string, at: number, current: StoredStream): Promise<StreamState> {
  if (current.stateId <= at) return current.state;
  const rs = await db.execute({
    sql: `SELECT before FROM ${CHANGES_TABLE} WHERE kind = 'stream' AND object = ? AND id > ? ORDER BY id LIMIT 1`,
    args: [id, at],
  });
  const r = rs.rows[0];
  return r ? (JSON.parse(r.before as string) as StreamState) : current.state;
}

/** Remove a stream (its session ended). */
export async function deleteStream(db: Client, id: string): Promise<void> {
  await deleteStreams(db, "id = ?", [id]);
}

/** Whether the session a user's stream acts in still lives (logout, revocation, expiry and deletion end it). */
export async function sessionLives(db: Pick<Client, "execute">, family: string, now = Date.now()): Promise<boolean> {
  const rs = await db.execute({ sql: `SELECT 1 FROM _burrow_sessions WHERE family = ? AND refresh_expires > ?`, args: [family, now] });
  return rs.rows.length > 0;
}
