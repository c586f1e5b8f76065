// Rate limits shared by every node on one store: each window is one row of the system database, counted with
// one upsert, so a limit holds for the whole cluster however requests are spread over the nodes.

import type { Client } from "@libsql/core/api";
import type { RateLimiter, RateResult } from "./rate-limit.ts";

export const STORE_RATE_DDL = `CREATE TABLE IF NOT EXISTS _burrow_rate_limits (key TEXT PRIMARY KEY, count INTEGER NOT NULL, ends INTEGER NOT NULL) STRICT, WITHOUT ROWID`;

export class StoreRateLimiter implements RateLimiter {
  constructor(
    private readonly db: Client,
    private readonly now: () => number = Date.now,
  ) {}

  private retryAfter(ends: number): number {
    return Math.max(1, Math.ceil((ends - this.now()) / 1000));
  }

  /**
   * Counts the event; a window that has ended starts again at 1. The count stops at limit + 1, which marks the
   * refused: at most `limit` events pass per window, on every node together.
   */
  async hit(key: string, limit: number, windowMs: number): Promise<RateResult> {
    const now = this.now();
    const rs = await this.db.execute({
      sql: `INSERT INTO _burrow_rate_limits (key, count, ends) VALUES (?, 1, ?)
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN ends <= ? THEN 1 WHEN count > ? THEN count ELSE count + 1 END,
              ends = CASE WHEN ends <= ? THEN excluded.ends ELSE ends END
            RETURNING count, ends`,
      args: [key, now + windowMs, now, limit, now],
    });
    const r = rs.rows[0]!;
    return Number(r.count) <= limit ? { ok: true } : { ok: false, retryAfter: this.retryAfter(Number(r.ends)) };
  }

  async blocked(key: string, limit: number): Promise<RateResult> {
    const rs = await this.db.execute({ sql: `SELECT count, ends FROM _burrow_rate_limits WHERE key = ? AND ends > ?`, args: [key, this.now()] });
    const r = rs.rows[0];
    return r && Number(r.count) >= limit ? { ok: false, retryAfter: this.retryAfter(Number(r.ends)) } : { ok: true };
  }

  async reset(key: string): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_rate_limits WHERE key = ?`, args: [key] });
  }

  /** Drop windows that have ended (maintenance, one node at a time). */
  async sweep(): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_rate_limits WHERE ends <= ?`, args: [this.now()] });
  }
}
