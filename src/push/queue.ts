// The durable push queue of one environment, in the environment's database next to its tokens: a send stores
// the notification and its whole fan-out (one row per device) in one transaction, with INSERT ... SELECT from
// the token table, so broadcasting to a million tokens never holds them in memory. Workers lease due rows,
// and every outcome is written back: delivered, expired and failed rows leave the queue (counted on their
// notification), retried rows get a later due time.

import type { Client, InStatement } from "@libsql/core/api";
import { type TokenType, PLATFORM_OF } from "./tokens.ts";
import type { PushPlatform } from "./provider.ts";
import { expireStatements } from "./token-store.ts";

export const PUSH_QUEUE_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_push_notifications (id INTEGER PRIMARY KEY, created INTEGER NOT NULL, target TEXT NOT NULL,
     payload TEXT NOT NULL, queued INTEGER NOT NULL DEFAULT 0, sent INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
     expired INTEGER NOT NULL DEFAULT 0, retries INTEGER NOT NULL DEFAULT 0, errors TEXT NOT NULL DEFAULT '[]') STRICT`,
  `CREATE TABLE IF NOT EXISTS _burrow_push_deliveries (id INTEGER PRIMARY KEY, notification INTEGER NOT NULL, type TEXT NOT NULL,
     token TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, due INTEGER NOT NULL, lease INTEGER NOT NULL DEFAULT 0) STRICT`,
  `CREATE INDEX IF NOT EXISTS _burrow_push_deliveries_due ON _burrow_push_deliveries (due)`,
  `CREATE INDEX IF NOT EXISTS _burrow_push_deliveries_notification ON _burrow_push_deliveries (notification)`,
];

/** Who a notification goes to. */
export type Target =
  | { kind: "tokens"; tokens: { type: TokenType; token: string }[] }
  | { kind: "users"; users: string[] }
  | { kind: "broadcast" };

/** A leased delivery, ready to send. */
export interface Leased {
  id: number;
  notification: number;
  type: TokenType;
  platform: PushPlatform;
  token: string;
  attempts: number;
  /** When the lease runs out (ms since the epoch): after it another worker may take the row. */
  leaseUntil: number;
}

export type Outcome =
  | { kind: "sent" }
  | { kind: "expired"; reason: string }
  | { kind: "failed"; reason: string }
  | { kind: "retry"; reason: string; due: number }
  /** Not sent (it waited for its provider past its lease): back to the queue as it was, the attempt not counted. */
  | { kind: "requeue" };

/** How long a leased row is reserved for the worker that took it before another may take it again. */
export const LEASE_MS = 60_000;
/**
 * On a store shared by several nodes no node may release the others' leases at start, so a killed node's leases
 * come back only when they run out: shorter there, so its deliveries are taken over within seconds.
 */
export const SHARED_LEASE_MS = 15_000;
const MAX_ERRORS_KEPT = 5;

function describeTarget(t: Target): string {
  return t.kind === "broadcast"
    ? JSON.stringify({ broadcast: true })
    : t.kind === "users"
      ? JSON.stringify({ users: t.users.slice(0, 100), count: t.users.length })
      : JSON.stringify({ tokens: t.tokens.length });
}

export class PushQueue {
  /** `shared`: other nodes lease from the same tables (a libSQL store). */
  constructor(
    private readonly db: Client,
    private readonly shared = false,
  ) {}

  /**
   * Store a notification and its fan-out to the token types in `types`, atomically. Answers the notification id
   * and how many deliveries were queued.
   */
  async enqueue(target: Target, payload: Record<string, unknown>, types: readonly TokenType[]): Promise<{ id: number; queued: number }> {
    const now = Date.now();
    const typeList = JSON.stringify(types);
    const insert = `INSERT INTO _burrow_push_deliveries (notification, type, token, due) `;
    const fanOut: InStatement =
      target.kind === "broadcast"
        ? {
            sql: `${insert} SELECT (SELECT max(id) FROM _burrow_push_notifications), type, token, ? FROM _burrow_push_tokens WHERE type IN (SELECT value FROM json_each(?))`,
            args: [now, typeList],
          }
        : target.kind === "users"
          ? {
              sql: `${insert} SELECT (SELECT max(id) FROM _burrow_push_notifications), type, token, ? FROM _burrow_push_tokens
                    WHERE user IN (SELECT value FROM json_each(?)) AND type IN (SELECT value FROM json_each(?))`,
              args: [now, JSON.stringify(target.users), typeList],
            }
          : {
              sql: `${insert} SELECT DISTINCT (SELECT max(id) FROM _burrow_push_notifications), json_extract(value, '$.type'), json_extract(value, '$.token'), ? FROM json_each(?)
                    WHERE json_extract(value, '$.type') IN (SELECT value FROM json_each(?))`,
              args: [now, JSON.stringify(target.tokens), typeList],
            };
    const rs = await this.db.batch(
      [
        {
          sql: `INSERT INTO _burrow_push_notifications (created, target, payload) VALUES (?, ?, ?)`,
          args: [now, describeTarget(target), JSON.stringify(payload)],
        },
        fanOut,
        {
          sql: `UPDATE _burrow_push_notifications SET queued = changes() WHERE id = (SELECT max(id) FROM _burrow_push_notifications)`,
          args: [],
        },
      ],
      "write",
    );
    return { id: Number(rs[0]!.lastInsertRowid), queued: rs[1]!.rowsAffected };
  }

  /** Lease up to `limit` due deliveries (not leased by anyone else), oldest due first. */
  async lease(limit: number, now = Date.now()): Promise<Leased[]> {
    const leaseUntil = now + (this.shared ? SHARED_LEASE_MS : LEASE_MS);
    const rs = await this.db.execute({
      sql: `UPDATE _burrow_push_deliveries SET lease = ?, attempts = attempts + 1
            WHERE id IN (SELECT id FROM _burrow_push_deliveries WHERE due <= ? AND lease <= ? ORDER BY due LIMIT ?)
            RETURNING id, notification, type, token, attempts`,
      args: [leaseUntil, now, now, limit],
    });
    return rs.rows.map((r) => ({
      id: Number(r.id),
      notification: Number(r.notification),
      type: r.type as TokenType,
      platform: PLATFORM_OF[r.type as TokenType],
      token: r.token as string,
      attempts: Number(r.attempts),
      leaseUntil,
    }));
  }

  /**
   * A process that starts owns no leases: the rows an earlier process had leased are due again. Not on a shared
   * store, where the leases may be other nodes' (there they run out after SHARED_LEASE_MS).
   */
  async releaseLeases(): Promise<void> {
    if (this.shared) return;
    await this.db.execute(`UPDATE _burrow_push_deliveries SET lease = 0 WHERE lease > 0`);
  }

  /** The payloads of these notifications. */
  async payloads(ids: readonly number[]): Promise<Map<number, Record<string, unknown>>> {
    const rs = await this.db.execute({
      sql: `SELECT id, payload FROM _burrow_push_notifications WHERE id IN (SELECT value FROM json_each(?))`,
      args: [JSON.stringify(ids)],
    });
    return new Map(rs.rows.map((r) => [Number(r.id), JSON.parse(r.payload as string)]));
  }

  /** Write back a batch of outcomes in one transaction (expired tokens leave the registry in it too). */
  async settle(results: readonly { d: Leased; outcome: Outcome }[]): Promise<void> {
    if (results.length === 0) return;
    const now = Date.now();
    const stmts: InStatement[] = [];
    const counts = new Map<number, { sent: number; failed: number; expired: number; retries: number; errors: string[] }>();
    for (const { d, outcome } of results) {
      let c = counts.get(d.notification);
      if (!c) counts.set(d.notification, (c = { sent: 0, failed: 0, expired: 0, retries: 0, errors: [] }));
      if (outcome.kind === "requeue") {
        stmts.push({ sql: `UPDATE _burrow_push_deliveries SET lease = 0, attempts = max(attempts - 1, 0) WHERE id = ?`, args: [d.id] });
        continue;
      }
      if (outcome.kind === "retry") {
        c.retries++;
        stmts.push({ sql: `UPDATE _burrow_push_deliveries SET due = ?, lease = 0 WHERE id = ?`, args: [outcome.due, d.id] });
        continue;
      }
      stmts.push({ sql: `DELETE FROM _burrow_push_deliveries WHERE id = ?`, args: [d.id] });
      if (outcome.kind === "sent") c.sent++;
      else if (outcome.kind === "failed") {
        c.failed++;
        if (c.errors.length < MAX_ERRORS_KEPT) c.errors.push(`${d.type}: ${outcome.reason}`.slice(0, 200));
      } else {
        c.expired++;
        stmts.push(...expireStatements(d.type, d.token, outcome.reason, now));
      }
    }
    for (const [id, c] of counts)
      stmts.push({
        sql: `UPDATE _burrow_push_notifications SET sent = sent + ?, failed = failed + ?, expired = expired + ?, retries = retries + ?,
              errors = CASE WHEN json_array_length(errors) >= ${MAX_ERRORS_KEPT} THEN errors ELSE (SELECT json_group_array(value) FROM (SELECT value FROM json_each(errors) UNION ALL SELECT value FROM json_each(?) LIMIT ${MAX_ERRORS_KEPT})) END
              WHERE id = ?`,
        args: [c.sent, c.failed, c.expired, c.retries, JSON.stringify(c.errors), id],
      });
    await this.db.batch(stmts, "write");
  }

  /** Recent notifications, newest first, with their progress. */
  /** Notifications queued since `since` (ms) and what their deliveries came to so far. */
  async since(since: number): Promise<{ notifications: number; sent: number; failed: number; expired: number }> {
    const rs = await this.db.execute({
      sql: `SELECT count(*) AS n, coalesce(sum(sent), 0) AS sent, coalesce(sum(failed), 0) AS failed, coalesce(sum(expired), 0) AS expired
            FROM _burrow_push_notifications WHERE created > ?`,
      args: [since],
    });
    const r = rs.rows[0]!;
    return { notifications: Number(r.n), sent: Number(r.sent), failed: Number(r.failed), expired: Number(r.expired) };
  }

  async recent(limit: number): Promise<Record<string, unknown>[]> {
    const rs = await this.db.execute({
      sql: `SELECT n.id, n.created, n.target, n.queued, n.sent, n.failed, n.expired, n.retries, n.errors,
              (SELECT count(*) FROM _burrow_push_deliveries d WHERE d.notification = n.id) AS pending
            FROM _burrow_push_notifications n ORDER BY n.id DESC LIMIT ?`,
      args: [limit],
    });
    return rs.rows.map((r) => ({
      id: Number(r.id),
      created: Number(r.created),
      target: JSON.parse(r.target as string),
      queued: Number(r.queued),
      sent: Number(r.sent),
      failed: Number(r.failed),
      expired: Number(r.expired),
      retries: Number(r.retries),
      pending: Number(r.pending),
      errors: JSON.parse(r.errors as string),
    }));
  }

  /** Whether any delivery waits (due now, later, or leased). */
  async waiting(): Promise<boolean> {
    const rs = await this.db.execute("SELECT EXISTS (SELECT 1 FROM _burrow_push_deliveries) AS waiting");
    return Number(rs.rows[0]!.waiting) === 1;
  }

  /** Depth, age of the oldest waiting delivery, and rows waiting for a retry. */
  async stats(now = Date.now()): Promise<{ depth: number; oldestAgeMs: number | null; retrying: number; leased: number }> {
    const rs = await this.db.execute({
      sql: `SELECT count(*) AS depth, min(n.created) AS oldest, sum(d.attempts > 0 AND d.lease = 0) AS retrying, sum(d.lease > ?) AS leased
            FROM _burrow_push_deliveries d JOIN _burrow_push_notifications n ON n.id = d.notification`,
      args: [now],
    });
    const r = rs.rows[0]!;
    return {
      depth: Number(r.depth),
      oldestAgeMs: r.oldest === null ? null : now - Number(r.oldest),
      retrying: Number(r.retrying ?? 0),
      leased: Number(r.leased ?? 0),
    };
  }
}
