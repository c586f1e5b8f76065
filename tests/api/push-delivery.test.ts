// Push delivered end to end: a send through the API is queued, the worker leases it and the real providers
// deliver it to protocol fakes on loopback (FCM token endpoint + send, a Web Push service that decrypts);
// refused tokens leave the registry for the expired list, retries wait and then succeed, and the admin view
// counts every outcome.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { oauthAuth } from "../helpers/sign.ts";
import { type ApnsFake, makeApnsTestPki, startApnsFake, TEST_TOPIC } from "../helpers/apns-fake.ts";
import { startFcmFake, type FcmFake } from "../helpers/fcm-fake.ts";
import { startWebPushFake, type WebPushFake } from "../helpers/web-push-fake.ts";

let t: TestApp;
/** Signed with the development private key (OAuth 1.0): reads any user's tokens. */
const app = (method: string, path: string) =>
  t.request(method, path, {
    key: null,
    headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
  });
let fcm: FcmFake;
let web: WebPushFake;
let apns: ApnsFake;

/** Run the worker until the queue is empty or nothing is due (bounded). */
async function drainAll(env: "development" | "production" = "development"): Promise<void> {
  for (let i = 0; i < 50; i++) if ((await t.burrow.push.drain(env)) === 0) return;
  throw new Error("the queue did not drain");
}

beforeAll(async () => {
  t = await makeTestApp();
  fcm = await startFcmFake();
  // VAPID keys are made on first use; make them now so the fake can check signatures.
  const put = await t.admin("PUT", "/settings/development", {
    push: { fcm: { serviceAccount: fcm.account.json, url: fcm.url }, web: { allowPrivateEndpoints: true } },
  });
  expect(put.status).toBe(200);
  await t.burrow.push.drain("development"); // nothing queued; keeps the call cheap
  const { generateVapidKeys } = await import("../../src/push/providers/web-push.ts");
  const keys = generateVapidKeys();
  expect(
    (await t.admin("PUT", "/settings/development", { push: { web: { vapidPublicKey: keys.publicKey, vapidPrivateKey: keys.privateKey } } }))
      .status,
  ).toBe(200);
  web = startWebPushFake(keys.publicKey);
  const pki = makeApnsTestPki();
  apns = await startApnsFake(pki);
  const apnsSettings = { url: apns.url, ca: apns.ca, topic: TEST_TOPIC, keyP8: pki.p8.pem, keyId: pki.p8.keyId, teamId: pki.p8.teamId };
  expect((await t.admin("PUT", "/settings/development", { push: { apns: apnsSettings } })).status).toBe(200);
});
afterAll(async () => {
  fcm.stop();
  web.stop();
  await apns.close();
  await t.close();
});

describe("delivery", () => {
  test("users' Android and web devices get the payload in their platform's shape, once each", async () => {
    const sub = web.subscribe();
    await t.request("POST", "/_push/tokens/androidgcm/fcm-ann", { body: { user: "ann" } });
    await t.request("POST", `/_push/tokens/web/${encodeURIComponent(sub.token)}`, { body: { user: "ann" } });
    const r = await t.request("POST", "/_push/notifications", {
      body: { payload: { message: "hello", badge: 3, extra: { k: 1 } }, users: ["ann"] },
    });
    expect(r.body).toEqual({ queued: 2 });
    await drainAll();
    expect(fcm.deliveries).toEqual([
      { token: "fcm-ann", data: { message: "hello", badge: "3", extra: '{"k":1}' }, collapseKey: expect.any(String), priority: "high" },
    ]);
    expect(web.deliveries.map((d) => [d.id, d.payload])).toEqual([[sub.id, { message: "hello", badge: 3, extra: { k: 1 } }]]);
    expect(fcm.rejections).toEqual([]);
    expect(web.rejections).toEqual([]);
    const [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
    expect([n.queued, n.sent, n.failed, n.expired, n.pending]).toEqual([2, 2, 0, 0, 0]);
    // Each provider's in-flight limit; Web Push has one per push service (the endpoint's origin).
    const { inFlight } = (await t.admin("GET", "/push/queue?env=development")).body;
    expect(inFlight.android).toEqual({ limit: 20, shortestRoundTripMs: null });
    expect(inFlight.web.destinations).toEqual([{ destination: new URL(sub.endpoint).origin, limit: 20, shortestRoundTripMs: null }]);
  });

  test("refused tokens are removed and listed as expired; a 503 is retried after Retry-After and then delivered", async () => {
    const gone = web.subscribe();
    await t.request("POST", "/_push/tokens/android/fcm-dead", { body: { user: "bob" } });
    await t.request("POST", "/_push/tokens/android/fcm-busy", { body: { user: "bob" } });
    await t.request("POST", `/_push/tokens/web/${encodeURIComponent(gone.token)}`, { body: { user: "bob" } });
    fcm.respond("fcm-dead", "unregistered");
    fcm.respond("fcm-busy", { status: 503, retryAfter: "1" });
    web.respond(gone.id, { status: 410 });
    fcm.deliveries.length = 0;
    expect((await t.request("POST", "/_push/notifications", { body: { payload: { message: "hi bob" }, users: ["bob"] } })).body).toEqual({
      queued: 3,
    });
    await drainAll();
    let [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
    expect([n.sent, n.expired, n.retries, n.pending]).toEqual([0, 2, 1, 1]);
    expect((await app("GET", "/_push/tokens?user=bob")).body.bob).toEqual([{ type: "androidgcm", token: "fcm-busy" }]);
    const expired = (await t.request("GET", "/_push/expired_tokens")).body
      .map((e: { token: string }) => (e.token.startsWith("{") ? JSON.parse(e.token).endpoint : e.token))
      .sort();
    expect(expired).toEqual(["fcm-dead", gone.endpoint].sort());
    // The busy device recovers; the retry is not due before Retry-After.
    fcm.respond("fcm-busy", undefined);
    expect(await t.burrow.push.drain("development")).toBe(0);
    await Bun.sleep(1100);
    await drainAll();
    [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
    expect([n.sent, n.expired, n.pending]).toEqual([1, 2, 0]);
    expect(fcm.deliveries.map((d) => d.token)).toEqual(["fcm-busy"]);
  });

  test("iOS devices get the APNs shape over HTTP/2 with a provider token; Unregistered expires the token", async () => {
    const live = "0a".repeat(32);
    const dead = "0b".repeat(32);
    await t.request("POST", `/_push/tokens/ios/${live}`, { body: { user: "ios-ann" } });
    await t.request("POST", `/_push/tokens/ios/${dead}`, { body: { user: "ios-ann" } });
    apns.answer(dead, { status: 410, reason: "Unregistered" });
    expect(
      (
        await t.request("POST", "/_push/notifications", {
          body: { payload: { message: "hi", badge: 1, sound: "ding", deep: "link" }, users: ["ios-ann"] },
        })
      ).body,
    ).toEqual({ queued: 2 });
    await drainAll();
    expect(apns.deliveries.map((d) => [d.token, d.payload, d.auth, d.headers["apns-topic"], d.headers["apns-push-type"]])).toEqual([
      [live, { aps: { alert: "hi", badge: 1, sound: "ding" }, deep: "link" }, "jwt", TEST_TOPIC, "alert"],
    ]);
    expect((await app("GET", "/_push/tokens?user=ios-ann")).body["ios-ann"]).toEqual([{ type: "ios", token: live }]);
    expect((await t.request("GET", "/_push/expired_tokens")).body.some((e: { token: string }) => e.token === dead)).toBe(true);
  });

  test("a broadcast over 256 bytes skips iOS and reaches every other registered device", async () => {
    await t.request("POST", `/_push/tokens/ios/${"ab".repeat(32)}`, { body: { user: "ios-user" } });
    apns.deliveries.length = 0;
    fcm.deliveries.length = 0;
    web.deliveries.length = 0;
    const tokens = Number(
      (await t.burrow.envDbs.development.execute(`SELECT count(*) AS n FROM _burrow_push_tokens WHERE type <> 'ios'`)).rows[0]!.n,
    );
    const r = await t.request("POST", "/_push/notifications", { body: { payload: { message: "m".repeat(400) } } });
    expect(r.body).toEqual({ queued: tokens });
    await drainAll();
    const [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
    expect(n).toMatchObject({ queued: tokens, sent: tokens, failed: 0, errors: [] });
    expect(fcm.deliveries.length + web.deliveries.length).toBe(tokens);
    expect(apns.deliveries).toEqual([]);
  });
});
