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
   * Counts `cost` events in one statement: a window that has ended starts again at `cost`; a live one grows only
   * while it stays within `limit` (the upsert's WHERE), so at most `limit` events pass per window, on every node
   * together. A refusal updates nothing, and the window's end is then read for Retry-After.
   */
  async hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateResult> {
    const now = this.now();
    if (cost > limit) return { ok: false, retryAfter: this.retryAfter(now + windowMs) };
    const rs = await this.db.execute({
      sql: `INSERT INTO _burrow_rate_limits (key, count, ends) VALUES (?, ?, ?)
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN ends <= ? THEN excluded.count ELSE count + excluded.count END,
              ends = CASE WHEN ends <= ? THEN excluded.ends ELSE ends END
            WHERE ends <= ? OR count + excluded.count <= ?
            RETURNING count`,
      args: [key, cost, now + windowMs, now, now, now, limit],
    });
    if (rs.rows.length > 0) return { ok: true };
    const window = await this.db.execute({ sql: `SELECT ends FROM _burrow_rate_limits WHERE key = ?`, args: [key] });
    return { ok: false, retryAfter: this.retryAfter(Number(window.rows[0]?.ends ?? now + 1000)) };
  }

  async reset(key: string): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_rate_limits WHERE key = ?`, args: [key] });
  }

  /** Drop windows that have ended (maintenance, one node at a time). */
  async sweep(): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_rate_limits WHERE ends <= ?`, args: [this.now()] });
  }
}
