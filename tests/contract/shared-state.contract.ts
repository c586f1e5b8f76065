// Contracts for the state several nodes must agree on: NonceCache, RateLimiter, CodeCache and JobLeases. Each
// suite runs against the in-memory implementation (one node) and the store-backed one, on an embedded database
// and on a libSQL server; for the store-backed ones a second node (its own instance and connection on the same
// store) must see what the first did.

import { afterAll, describe, expect, test } from "bun:test";
import type { NonceCache } from "../../src/auth/nonces.ts";
import type { RateLimiter } from "../../src/auth/rate-limit.ts";
import type { CodeCache } from "../../src/code/code-cache.ts";
import type { JobLeases } from "../../src/system/job-lease.ts";

/** One node's instance, and a second node's on the same store (null for in-memory ones). */
export interface Nodes<T> {
  a: T;
  b: T | null;
}

export interface SharedStateTarget {
  nonces(): Promise<Nodes<NonceCache>>;
  limiter(): Promise<Nodes<RateLimiter>>;
  cache(): Promise<Nodes<CodeCache>>;
  jobs(): Promise<Nodes<JobLeases>>;
  cleanup(): Promise<void>;
}

export function runSharedStateContract(name: string, make: () => Promise<SharedStateTarget>): void {
  describe(name, () => {
    let target: SharedStateTarget | undefined;
    const get = async () => (target ??= await make());
    afterAll(async () => target?.cleanup());

    test("nonces: the first use passes, a replay is refused, an expired window records nothing", async () => {
      const { a, b } = await (await get()).nonces();
      const key = `k-${crypto.randomUUID()}`;
      const later = Date.now() + 60_000;
      expect(await a.firstUse(key, later)).toBe(true);
      expect(await a.firstUse(key, later)).toBe(false);
      expect(await a.firstUse(`${key}-other`, later)).toBe(true);
      expect(await a.firstUse(`${key}-past`, Date.now() - 1)).toBe(false);
      if (b) {
        expect(await b.firstUse(key, later)).toBe(false); // replayed on the other node
        expect(await b.firstUse(`${key}-b`, later)).toBe(true);
        expect(await a.firstUse(`${key}-b`, later)).toBe(false);
      }
    });

    test("nonces: many at once (one batch) each get their own answer", async () => {
      const { a, b } = await (await get()).nonces();
      const keys = Array.from({ length: 300 }, (_, i) => `many-${crypto.randomUUID()}-${i}`);
      const later = Date.now() + 60_000;
      expect(await Promise.all(keys.map((k) => a.firstUse(k, later)))).toEqual(keys.map(() => true));
      const other = b ?? a;
      const half = keys.filter((_, i) => i % 2 === 0);
      expect(await Promise.all(half.map((k) => other.firstUse(k, later)))).toEqual(half.map(() => false));
      // Two nodes racing for the same signatures: each is accepted exactly once.
      if (b) {
        const fresh = Array.from({ length: 200 }, (_, i) => `race-${crypto.randomUUID()}-${i}`);
        const [ra, rb] = await Promise.all([
          Promise.all(fresh.map((k) => a.firstUse(k, later))),
          Promise.all(fresh.map((k) => b.firstUse(k, later))),
        ]);
        for (let i = 0; i < fresh.length; i++) expect(Number(ra[i]) + Number(rb[i])).toBe(1);
      }
    });

    test("rate limits: `limit` events pass per window, then refused with Retry-After; reset clears", async () => {
      const { a, b } = await (await get()).limiter();
      const key = `ip-${crypto.randomUUID()}`;
      for (let i = 0; i < 3; i++) expect(await (i % 2 === 0 || !b ? a : b).hit(key, 4, 60_000)).toEqual({ ok: true });
      expect(await (b ?? a).hit(key, 4, 60_000)).toEqual({ ok: true });
      const refused = await a.hit(key, 4, 60_000);
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.retryAfter).toBeGreaterThanOrEqual(59);
      expect((await (b ?? a).hit(key, 4, 60_000)).ok).toBe(false);
      await (b ?? a).reset(key);
      expect(await a.hit(key, 4, 60_000)).toEqual({ ok: true });
    });

    test("rate limits: a cost counts as that many events at once, and a refused cost counts nothing", async () => {
      const { a, b } = await (await get()).limiter();
      const key = `cost-${crypto.randomUUID()}`;
      expect(await a.hit(key, 10, 60_000, 7)).toEqual({ ok: true });
      const refused = await (b ?? a).hit(key, 10, 60_000, 4);
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.retryAfter).toBeGreaterThanOrEqual(59);
      // The refused 4 took nothing: 3 more fit, then the window is full.
      expect(await (b ?? a).hit(key, 10, 60_000, 3)).toEqual({ ok: true });
      expect((await a.hit(key, 10, 60_000)).ok).toBe(false);
      expect((await a.hit(`big-${crypto.randomUUID()}`, 5, 60_000, 6)).ok).toBe(false);
    });

    test("rate limits: a window that ended starts again", async () => {
      const { a } = await (await get()).limiter();
      const key = `short-${crypto.randomUUID()}`;
      expect(await a.hit(key, 1, 50)).toEqual({ ok: true });
      expect((await a.hit(key, 1, 50)).ok).toBe(false);
      await Bun.sleep(80);
      expect(await a.hit(key, 1, 50)).toEqual({ ok: true });
    });

    test("rate limits: concurrent hits from both nodes let exactly `limit` through", async () => {
      const { a, b } = await (await get()).limiter();
      const key = `burst-${crypto.randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 || !b ? a : b).hit(key, 25, 60_000)));
      expect(results.filter((r) => r.ok).length).toBe(25);
    });

    test("code cache: set, get, overwrite, delete, expiry, per environment, on either node", async () => {
      const { a, b } = await (await get()).cache();
      const other = b ?? a;
      const key = `c-${crypto.randomUUID()}`;
      expect(await a.get("development", key)).toBeNull();
      await a.set("development", key, "one", 60_000);
      expect(await other.get("development", key)).toBe("one");
      expect(await other.get("production", key)).toBeNull();
      await other.set("development", key, "two", 60_000);
      expect(await a.get("development", key)).toBe("two");
      expect(await other.delete("development", key)).toBe(true);
      expect(await a.get("development", key)).toBeNull();
      expect(await a.delete("development", key)).toBe(false);
      await a.set("production", key, "brief", 30);
      await Bun.sleep(60);
      expect(await other.get("production", key)).toBeNull();
      await expect(a.set("development", "", "x", 1000)).rejects.toThrow();
      await expect(a.set("development", key, "x".repeat(17 * 1024), 1000)).rejects.toThrow();
    });

    test("job leases: one holder at a time; a lease that runs out passes on", async () => {
      const { a, b } = await (await get()).jobs();
      const job = `job-${crypto.randomUUID()}`;
      expect(await a.claim(job, 200)).toBe(true);
      expect(await a.claim(job, 200)).toBe(true); // the holder renews
      if (b) {
        expect(await b.claim(job, 200)).toBe(false);
        await Bun.sleep(250);
        expect(await b.claim(job, 200)).toBe(true);
        expect(await a.claim(job, 200)).toBe(false);
      }
    });
  });
}
