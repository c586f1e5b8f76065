// Rate limits for the login, token, password and social endpoints: fixed windows per key (client IP, or
// account for failed logins). In-process for one node; the interface lets a shared store take over.

export type RateResult = { ok: true } | { ok: false; retryAfter: number };

/** In memory the answers are immediate; a store-backed limiter (store-rate-limit.ts) answers with promises. */
export interface RateLimiter {
  /**
   * Count `cost` events (default 1) for `key` in one step: taken when the window's count stays within `limit`,
   * otherwise refused, counting nothing, with the seconds until the window ends.
   */
  hit(key: string, limit: number, windowMs: number, cost?: number): RateResult | Promise<RateResult>;
  reset(key: string): void | Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; ends: number }>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private current(key: string): { count: number; ends: number } | undefined {
    const now = this.now();
    if (now >= this.nextSweep) {
      for (const [k, w] of this.windows) if (w.ends <= now) this.windows.delete(k);
      this.nextSweep = now + 30_000;
    }
    const w = this.windows.get(key);
    return w && w.ends > now ? w : undefined;
  }

  hit(key: string, limit: number, windowMs: number, cost = 1): RateResult {
    const w = this.current(key);
    if (!w) {
      if (cost > limit) return { ok: false, retryAfter: Math.max(1, Math.ceil(windowMs / 1000)) };
      this.windows.set(key, { count: cost, ends: this.now() + windowMs });
      return { ok: true };
    }
    if (w.count + cost > limit) return { ok: false, retryAfter: Math.max(1, Math.ceil((w.ends - this.now()) / 1000)) };
    w.count += cost;
    return { ok: true };
  }

  reset(key: string): void {
    this.windows.delete(key);
  }
}
