// The adaptive in-flight limit of a push provider, driven by simulated providers on a simulated clock: a distant
// provider whose round trip does not depend on load (the limit climbs to the ceiling), one that saturates (the
// limit settles where round trips stay short, keeping most of its throughput), slow-down answers, an idle
// sender, a lasting change of route; and the wrapper that queues sends beyond the limit.

import { describe, expect, test } from "bun:test";
import { InFlightLimit } from "../../src/push/in-flight-limit.ts";
import { MAX_DESTINATIONS, webPushDestination, withInFlightLimit } from "../../src/push/limited-provider.ts";
import type { DeliveryResult, PushMessage, PushProvider } from "../../src/push/provider.ts";

/**
 * Run `seconds` of simulated sending, always as many in flight as the limit allows. A send started with n in
 * flight takes rtt(n) ms. Answers deliveries per second over the last quarter of the run and the limits seen.
 */
function simulate(
  limit: InFlightLimit,
  seconds: number,
  rtt: (inFlight: number, nowMs: number) => number,
  slowDown: (nowMs: number) => boolean = () => false,
) {
  const finishing: { at: number; started: number; depth: number }[] = []; // kept sorted by `at`
  let now = 0;
  let done = 0;
  let doneLateStart = 0;
  const end = seconds * 1000;
  const limits: number[] = [];
  while (now < end) {
    while (finishing.length < limit.limit) {
      const depth = finishing.length + 1;
      const at = now + rtt(depth, now);
      let i = finishing.length;
      while (i > 0 && finishing[i - 1]!.at > at) i--;
      finishing.splice(i, 0, { at, started: now, depth });
    }
    const next = finishing.shift()!;
    now = next.at;
    limit.sample(now - next.started, next.depth, slowDown(now), now);
    limits.push(limit.limit);
    done++;
    if (now < end * 0.75) doneLateStart = done;
  }
  return { perSecond: (done - doneLateStart) / (seconds * 0.25), limits };
}

describe("InFlightLimit", () => {
  test("a provider 80 ms away: the limit climbs from 20 to the ceiling within a couple of seconds", () => {
    const l = new InFlightLimit({ max: 500 });
    expect(l.limit).toBe(20);
    const { perSecond, limits } = simulate(l, 10, () => 80 + Math.random() * 10);
    expect(l.limit).toBe(500);
    // Reached by 2 s: at most ~2000/85 windows of one round trip each.
    expect(limits.indexOf(500)).toBeGreaterThan(0);
    expect(perSecond).toBeGreaterThan((500 / 0.09) * 0.9);
  });

  test("a provider that saturates at 20,000/s: the limit stays low and keeps most of the throughput", () => {
    // 0.2 ms to answer one send alone; beyond that, sends queue behind each other at 50 µs apiece.
    const l = new InFlightLimit({ max: 500 });
    const { perSecond, limits } = simulate(l, 5, (n) => 0.2 + n * 0.05);
    const late = limits.slice(Math.floor(limits.length / 2));
    expect(Math.max(...late)).toBeLessThan(40);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(8);
    // With n in flight the model serves n / (0.2 + 0.05 n) per ms: 8 in flight already give 13,300/s.
    expect(perSecond).toBeGreaterThan(12_000);
  });

  test("429s, 5xx and timeouts in over 5% of a window shrink it by a quarter, never under the floor; a few do not", () => {
    const l = new InFlightLimit({ max: 500, initial: 400 });
    for (let i = 0; i < 400; i++) l.sample(50, 400, i % 10 === 0, i);
    expect(l.limit).toBe(300);
    for (let i = 0; i < 300; i++) l.sample(50, 300, i === 7, 400 + i);
    expect(l.limit).toBeGreaterThan(300);
    simulate(
      l,
      5,
      () => 50,
      () => true,
    );
    expect(l.limit).toBe(8);
  });

  test("an idle sender does not grow the limit it does not use", () => {
    const l = new InFlightLimit({ max: 500 });
    for (let i = 0; i < 2000; i++) l.sample(40, 3, false, i * 10);
    expect(l.limit).toBe(20);
  });

  test("a lasting change of route (40 ms -> 120 ms) shrinks it, then the limit climbs back within two minutes", () => {
    const l = new InFlightLimit({ max: 500 });
    simulate(l, 5, () => 40);
    expect(l.limit).toBe(500);
    const { limits } = simulate(l, 120, (_n, now) => (now < 1000 ? 40 : 120));
    expect(Math.min(...limits)).toBeLessThan(250);
    expect(l.limit).toBe(500);
  });

  test("bounds are whole numbers within 1..max", () => {
    expect(new InFlightLimit({ max: 4 }).limit).toBe(4);
    expect(new InFlightLimit({ max: 4 }).min).toBe(4);
    expect(new InFlightLimit({ max: 0 }).max).toBe(1);
    const l = new InFlightLimit({ max: 1000, min: 0, initial: 5000 });
    expect([l.min, l.limit]).toEqual([1, 1000]);
  });
});

/** A provider answering each send when the test says so. */
function manualProvider() {
  const pending: { id: string; answer: (r: DeliveryResult) => void }[] = [];
  let peak = 0;
  const provider: PushProvider = {
    platform: "ios",
    send(m: PushMessage) {
      return new Promise<DeliveryResult>((answer) => {
        pending.push({ id: m.id, answer });
        peak = Math.max(peak, pending.length);
      });
    },
    close() {},
  };
  return {
    provider,
    pending,
    get peak() {
      return peak;
    },
  };
}
const msg = (i: number): PushMessage => ({ id: String(i), token: `t${i}`, payload: {} });
const turns = () => new Promise((r) => setTimeout(r, 0));

describe("withInFlightLimit", () => {
  test("sends past the limit wait, unsent, and go out in order as answers come back", async () => {
    const m = manualProvider();
    const p = withInFlightLimit(m.provider, 500);
    const results = Array.from({ length: 50 }, (_, i) => p.send(msg(i)));
    await turns();
    expect(m.pending.map((x) => x.id)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(p.inFlight).toBe(20);
    m.pending.shift()!.answer({ kind: "sent" });
    await turns();
    expect(m.pending.map((x) => x.id).at(-1)).toBe("20");
    while (m.pending.length) {
      m.pending.shift()!.answer({ kind: "sent" });
      await turns();
    }
    expect(await Promise.all(results)).toEqual(Array.from({ length: 50 }, () => ({ kind: "sent" })));
    // Answers as fast as these grew the limit past its start of 20, never past the limit in force.
    expect(m.peak).toBeGreaterThan(20);
    expect(m.peak).toBeLessThanOrEqual(Math.ceil(p.limits.get("")!.limit));
    expect(p.inFlight).toBe(0);
  });

  test("never more in flight than push.concurrency; a provider that throws gives a retry", async () => {
    const m = manualProvider();
    const p = withInFlightLimit(m.provider, 3);
    const results = Array.from({ length: 10 }, (_, i) => p.send(msg(i)));
    for (let k = 0; k < 10; k++) {
      await turns();
      expect(m.pending.length).toBeLessThanOrEqual(3);
      m.pending.shift()?.answer({ kind: "sent" });
    }
    await Promise.all(results);
    expect(m.peak).toBe(3);
    const throwing = withInFlightLimit({ platform: "web", send: () => Promise.reject(new Error("boom")), close() {} }, 3);
    expect(await throwing.send(msg(1))).toEqual({ kind: "retry", reason: "push: boom" });
    expect(throwing.inFlight).toBe(0);
  });
});

describe("withInFlightLimit and leases", () => {
  test("a send whose turn comes after its notAfter is answered not-sent, unsent, and passes its turn on", async () => {
    const m = manualProvider();
    let wall = 1_000;
    const p = withInFlightLimit(m.provider, 500, { wallClock: () => wall });
    const first = Array.from({ length: 20 }, (_, i) => p.send({ ...msg(i), notAfter: 5_000 }));
    const late = p.send({ ...msg(20), notAfter: 1_500 });
    const onTime = p.send({ ...msg(21), notAfter: 5_000 });
    await turns();
    expect(m.pending.length).toBe(20);
    wall = 2_000; // the 21st waited past its notAfter
    m.pending.shift()!.answer({ kind: "sent" });
    expect(await late).toEqual({ kind: "not-sent" });
    await turns();
    // Its turn went to the next one in line; it was never handed to the provider.
    expect(m.pending.map((x) => x.id)).not.toContain("20");
    expect(m.pending.map((x) => x.id)).toContain("21");
    while (m.pending.length) {
      m.pending.shift()!.answer({ kind: "sent" });
      await turns();
    }
    expect(await onTime).toEqual({ kind: "sent" });
    await Promise.all(first);
    expect(p.inFlight).toBe(0);
  });
});

describe("one limit per destination (Web Push: per push service)", () => {
  test("a destination at its limit does not hold back another", async () => {
    const m = manualProvider();
    const byToken = (x: PushMessage) => x.token.split(":")[0]!;
    const p = withInFlightLimit(m.provider, 500, { destinationOf: byToken });
    const slow = Array.from({ length: 30 }, (_, i) => p.send({ ...msg(i), token: `slow:${i}` }));
    await turns();
    expect(m.pending.length).toBe(20); // the slow service's 20; 10 wait
    const fast = p.send({ ...msg(100), token: "fast:1" });
    await turns();
    expect(m.pending.map((x) => x.id)).toContain("100");
    expect([...p.limits.keys()].sort()).toEqual(["fast", "slow"]);
    m.pending
      .splice(
        m.pending.findIndex((x) => x.id === "100"),
        1,
      )[0]!
      .answer({ kind: "sent" });
    expect(await fast).toEqual({ kind: "sent" });
    while (m.pending.length) {
      m.pending.shift()!.answer({ kind: "sent" });
      await turns();
    }
    await Promise.all(slow);
    expect(p.inFlight).toBe(0);
  });

  test("idle destinations past the cap are forgotten; busy ones are kept", async () => {
    const m = manualProvider();
    const p = withInFlightLimit(m.provider, 500, { destinationOf: (x) => x.token });
    const busy = p.send({ ...msg(0), token: "busy" });
    for (let i = 1; i <= MAX_DESTINATIONS + 5; i++) {
      const r = p.send({ ...msg(i), token: `d${i}` });
      m.pending.at(-1)!.answer({ kind: "sent" });
      m.pending.pop();
      await r;
    }
    expect(p.limits.size).toBeLessThanOrEqual(MAX_DESTINATIONS);
    expect(p.limits.has("busy")).toBe(true);
    m.pending.shift()!.answer({ kind: "sent" });
    await busy;
  });

  test("a Web Push subscription's destination is its endpoint's origin", () => {
    expect(webPushDestination(JSON.stringify({ endpoint: "https://fcm.googleapis.com/fcm/send/abc", keys: {} }))).toBe(
      "https://fcm.googleapis.com",
    );
    expect(webPushDestination(JSON.stringify({ endpoint: "https://updates.push.services.mozilla.com:443/wpush/v2/x" }))).toBe(
      "https://updates.push.services.mozilla.com",
    );
    expect(webPushDestination("not json")).toBe("");
    expect(webPushDestination(JSON.stringify({ endpoint: "no url" }))).toBe("");
    expect(webPushDestination(JSON.stringify({ endpoint: 7 }))).toBe("");
  });
});
