// Sends in flight to a provider follow its round trip: against the HTTP/2 APNs fake answering 25 ms late (a
// provider across the internet) the in-flight limit climbs from its start of 20 towards push.concurrency, and
// it never passes push.concurrency. The fake counts concurrent streams; GET /_admin/api/push/queue shows the limits.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { type ApnsFake, makeApnsTestPki, startApnsFake, TEST_TOPIC } from "../helpers/apns-fake.ts";

let t: TestApp;
const pki = makeApnsTestPki();
const fakes: ApnsFake[] = [];
let registered = 0;

beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(async () => {
  for (const f of fakes) await f.close();
  await t.close();
});

/** Register `more` iOS devices, point APNs at a new fake 25 ms away, broadcast and drain; answers the fake. */
async function broadcast(more: number, concurrency: number, delayMs = 25): Promise<ApnsFake> {
  const apns = await startApnsFake(pki, { delayMs });
  fakes.push(apns);
  const apnsSettings = { url: apns.url, ca: apns.ca, topic: TEST_TOPIC, keyP8: pki.p8.pem, keyId: pki.p8.keyId, teamId: pki.p8.teamId };
  expect((await t.admin("PUT", "/settings/development", { push: { concurrency, apns: apnsSettings } })).status).toBe(200);
  for (const end = registered + more; registered < end; registered++) {
    const r = await t.request("POST", `/_push/tokens/ios/${registered.toString(16).padStart(64, "0")}`, { body: {} });
    expect(r.status).toBe(200);
  }
  expect((await t.request("POST", "/_push/notifications", { body: { payload: { message: "hi" } } })).body).toEqual({ queued: registered });
  for (let i = 0; i < 500 && (await t.burrow.push.drain("development")) > 0; i++);
  expect(apns.deliveries.length).toBe(registered);
  return apns;
}

test("never more in flight than push.concurrency", async () => {
  const apns = await broadcast(300, 6);
  expect(apns.peakStreams).toBe(6);
}, 30_000);

test("a distant provider gets many sends in flight: the limit climbs from 20 towards push.concurrency", async () => {
  const started = performance.now();
  const apns = await broadcast(2700, 300);
  expect(apns.peakStreams).toBeGreaterThan(150);
  expect(apns.peakStreams).toBeLessThanOrEqual(300);
  const q = await t.admin("GET", "/push/queue?env=development");
  expect(q.body.inFlight.ios).toEqual({ limit: 300, shortestRoundTripMs: expect.any(Number) });
  expect(q.body.inFlight.ios.shortestRoundTripMs).toBeGreaterThanOrEqual(25);
  console.log(
    `3000 deliveries 25 ms away: peak ${apns.peakStreams} streams, ${(performance.now() - started).toFixed(0)} ms with registration`,
  );
}, 30_000);

test("a provider next door (loopback, answering at once): round trips stretch long before 300 in flight", async () => {
  await broadcast(0, 300, 0);
  const { limit, shortestRoundTripMs } = (await t.admin("GET", "/push/queue?env=development")).body.inFlight.ios;
  console.log(`3000 deliveries on loopback: in-flight limit ${limit}, shortest round trip ${shortestRoundTripMs} ms`);
  expect(limit).toBeLessThan(150);
}, 30_000);

test("a delivery that waited past its lease goes back to the queue unsent, its attempt not counted", async () => {
  const queue = t.burrow.push.queue("development");
  const tokens = [1, 2].map((i) => ({ type: "ios", token: `${"f".repeat(63)}${i}` }));
  expect((await t.request("POST", "/_push/notifications", { body: { payload: { message: "later" }, tokens } })).body).toEqual({
    queued: 2,
  });
  const now = Date.now();
  const leased = await queue.lease(10, now);
  expect(leased.map((d) => d.attempts)).toEqual([1, 1]);
  expect(leased[0]!.leaseUntil).toBeGreaterThan(now + 14_000);
  expect(await queue.lease(10, now)).toEqual([]); // leased: nobody else takes them
  await queue.settle(leased.map((d) => ({ d, outcome: { kind: "requeue" as const } })));
  const again = await queue.lease(10, now);
  expect(again.map((d) => [d.id, d.attempts])).toEqual(leased.map((d) => [d.id, 1]));
  const [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
  expect([n.queued, n.sent, n.failed, n.retries, n.pending]).toEqual([2, 0, 0, 0, 2]);
  await queue.settle(again.map((d) => ({ d, outcome: { kind: "sent" as const } })));
});
