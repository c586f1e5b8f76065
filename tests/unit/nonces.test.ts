// The replay cache contract, run against every NonceCache implementation (one today: in memory).

import { describe, expect, test } from "bun:test";
import { MemoryNonceCache, type NonceCache, nonceHash } from "../../src/auth/nonces.ts";

type Factory = (now: () => number, maxEntries?: number) => NonceCache & { size: number };

function nonceCacheContract(name: string, make: Factory) {
  describe(`${name}: NonceCache contract`, () => {
    const t0 = 1_790_000_000_000;

    test("a key is accepted once within its window, then refused", () => {
      const c = make(() => t0);
      expect(c.firstUse("mac|development|tok|sig1", t0 + 600_000)).toBe(true);
      expect(c.firstUse("mac|development|tok|sig1", t0 + 600_000)).toBe(false);
      expect(c.firstUse("mac|development|tok|sig2", t0 + 600_000)).toBe(true);
      expect(c.firstUse("mac|production|tok|sig1", t0 + 600_000)).toBe(true);
      expect(c.size).toBe(3);
    });

    test("a replay is refused until the key expires, however late it comes", () => {
      let now = t0;
      const c = make(() => now);
      expect(c.firstUse("k", t0 + 600_000)).toBe(true);
      for (const later of [1, 30_000, 299_999, 599_999]) {
        now = t0 + later;
        expect(c.firstUse("k", t0 + 600_000)).toBe(false);
      }
    });

    test("expired keys are dropped, and an already expired key is never recorded", () => {
      let now = t0;
      const c = make(() => now);
      for (let i = 0; i < 100; i++) expect(c.firstUse(`a${i}`, t0 + 60_000)).toBe(true);
      for (let i = 0; i < 50; i++) expect(c.firstUse(`b${i}`, t0 + 600_000)).toBe(true);
      expect(c.size).toBe(150);
      now = t0 + 120_000;
      expect(c.firstUse("late", t0 + 600_000)).toBe(true);
      expect(c.size).toBe(51);
      expect(c.firstUse("stale", now - 1)).toBe(false);
      expect(c.size).toBe(51);
    });

    test("memory is bounded: past the cap the slice that expires first goes", () => {
      const c = make(() => t0, 1000);
      for (let i = 0; i < 600; i++) c.firstUse(`early${i}`, t0 + 60_000);
      for (let i = 0; i < 600; i++) c.firstUse(`late${i}`, t0 + 600_000);
      expect(c.size).toBeLessThanOrEqual(1000);
      expect(c.firstUse("late0", t0 + 600_000)).toBe(false);
      expect(c.firstUse("late599", t0 + 600_000)).toBe(false);
    });

    test("one slice holds many keys: each accepted once, every one refused afterwards", () => {
      const c = make(() => t0);
      const keys = Array.from({ length: 50_000 }, (_, i) => `sig${i}`);
      expect(keys.filter((k) => c.firstUse(k, t0 + 600_000)).length).toBe(50_000);
      expect(keys.filter((k) => c.firstUse(k, t0 + 600_000)).length).toBe(0);
      expect(c.size).toBe(50_000);
    });

    test("hostile keys: __proto__, empty, very long and non-ASCII keys are plain values", () => {
      const c = make(() => t0);
      for (const k of ["__proto__", "constructor", "", "x".repeat(100_000), "ключ|🔑"]) {
        expect(c.firstUse(k, t0 + 1000)).toBe(true);
        expect(c.firstUse(k, t0 + 1000)).toBe(false);
      }
    });
  });
}

nonceCacheContract("MemoryNonceCache", (now, max) => new MemoryNonceCache(now, max));

test("nonceHash spreads a million similar keys over 52 bits without a collision", () => {
  const seen = new Set<number>();
  let outOfRange = 0;
  for (let i = 0; i < 1_000_000; i++) {
    const h = nonceHash(`mac|development|${"a".repeat(48)}|sig${i}`);
    if (!(Number.isSafeInteger(h) && h >= 0 && h < 2 ** 52)) outOfRange++;
    seen.add(h);
  }
  expect(outOfRange).toBe(0);
  expect(seen.size).toBe(1_000_000);
});
