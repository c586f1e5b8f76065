// The push API through the app (docs/api/push.md): registering, overwriting and removing
// tokens, tokens per user, sends stored in the queue with the size rule deciding the platforms, who may send,
// the expired list, the legacy *_universal endpoints, the admin views, and bad input.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
const ios = (n: number) => n.toString(16).padStart(64, "0");
const app = (method: string, path: string, body?: unknown, version = 0) =>
  t.request(method, path, {
    body,
    version,
    key: null,
    headers: {
      authorization: oauthAuth(
        version === 0 ? KEYS.devPublic : KEYS.prodPublic,
        version === 0 ? KEYS.devPrivate : KEYS.prodPrivate,
        method,
        `http://localhost${path}`,
      ),
    },
  });
const deliveries = async (env: "development" | "production" = "development") =>
  (await t.burrow.envDbs[env].execute(`SELECT type, token FROM _burrow_push_deliveries ORDER BY type, token`)).rows.map(
    (r) => `${r.type}:${r.token}`,
  );
const clearQueue = () => t.burrow.envDbs.development.execute(`DELETE FROM _burrow_push_deliveries`);

beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

describe("tokens", () => {
  test("register with the public key, keep or replace the user link, list per user, remove", async () => {
    expect((await t.request("POST", `/_push/tokens/ios/${ios(1)}`, { body: { user: "ann" } })).status).toBe(200);
    expect((await t.request("POST", `/_push/tokens/androidGCM/reg-ann-1`, { body: { user: "ann" } })).body).toEqual({});
    expect((await t.request("POST", `/_push/tokens/android/reg-bob-1`, { body: { user: "bob" } })).status).toBe(200);
    expect((await t.request("POST", `/_push/tokens/ios/${ios(2)}`)).status).toBe(200); // no user
    // POST keeps an existing link; PUT replaces it.
    await t.request("POST", `/_push/tokens/ios/${ios(1)}`, { body: { user: "bob" } });
    let r = await app("GET", "/_push/tokens?user=ann&user=bob&user=nobody");
    expect(r.body).toEqual({
      ann: [
        { type: "ios", token: ios(1) },
        { type: "androidgcm", token: "reg-ann-1" },
      ],
      bob: [{ type: "androidgcm", token: "reg-bob-1" }],
      nobody: [],
    });
    await t.request("PUT", `/_push/tokens/ios/${ios(1)}`, { body: { user: "bob" } });
    r = await app("GET", "/_push/tokens?user=ann&user=bob");
    expect(r.body.ann).toEqual([{ type: "androidgcm", token: "reg-ann-1" }]);
    expect(r.body.bob.map((x: { token: string }) => x.token).sort()).toEqual([ios(1), "reg-bob-1"].sort());
    // An iOS token in Apple's display form is the same token.
    expect(
      (await t.request("DELETE", `/_push/tokens/ios/${encodeURIComponent(`<${ios(1).toUpperCase().match(/.{8}/g)!.join(" ")}>`)}`)).status,
    ).toBe(200);
    expect((await app("GET", "/_push/tokens?user=bob")).body.bob).toEqual([{ type: "androidgcm", token: "reg-bob-1" }]);
  });

  test("bad input: unknown type, malformed tokens, a bad user, no API key", async () => {
    const bad = async (path: string, body?: unknown, expected = 400) => {
      const r = await t.request("POST", path, { body });
      expect([path, r.status, typeof r.body.error]).toEqual([path, expected, "string"]);
      return r.body.error as string;
    };
    expect(await bad("/_push/tokens/blackberry/abc")).toContain("unknown token type");
    expect(await bad("/_push/tokens/ios/not-hex")).toContain("hex");
    expect(await bad("/_push/tokens/android/has%20space")).toContain("printable");
    expect(await bad(`/_push/tokens/ios/${ios(3)}`, { user: 5 })).toContain("user must be a string");
    expect(await bad(`/_push/tokens/ios/${ios(3)}`, [1])).toContain("user");
    expect((await t.request("POST", `/_push/tokens/ios/${ios(3)}`, { key: null })).status).toBe(401);
  });
});

describe("deleting users", () => {
  test("deleting a user object (by key or by query) removes that user's tokens, and only theirs", async () => {
    const users = ["del1", "del2", "keep"];
    expect(
      (await t.request("POST", "/user", { body: users.map((u) => ({ username: u, password: `${u}-password` })) })).body.failed,
    ).toEqual([]);
    for (const [i, u] of users.entries()) await t.request("POST", `/_push/tokens/ios/${ios(100 + i)}`, { body: { user: u } });
    await t.request("POST", `/_push/tokens/ios/${ios(200)}`, { body: { user: "del1" } });
    expect((await app("DELETE", "/user/del1")).status).toBe(200);
    expect((await app("DELETE", "/user?username=del2")).status).toBe(200);
    const left = (await app("GET", "/_push/tokens?user=del1&user=del2&user=keep")).body;
    expect(left).toEqual({ del1: [], del2: [], keep: [{ type: "ios", token: ios(102) }] });
  });
});

describe("sending", () => {
  test("to tokens, users or everyone: {queued: n}, and the size rule picks the platforms", async () => {
    await clearQueue();
    expect(
      (await t.request("POST", "/_push/notifications", { body: { payload: { message: "hi" }, users: ["ann", "bob", "ghost"] } })).body,
    ).toEqual({ queued: 2 });
    expect(await deliveries()).toEqual(["androidgcm:reg-ann-1", "androidgcm:reg-bob-1"]);
    await clearQueue();
    expect(
      (
        await t.request("POST", "/_push/notifications", {
          body: {
            payload: { badge: 1 },
            tokens: [
              { type: "ios", token: ios(9) },
              { type: "android", token: "reg-x" },
              { type: "ios", token: ios(9) },
            ],
          },
        })
      ).body,
    ).toEqual({ queued: 2 });
    await clearQueue();
    const before = Number((await t.burrow.envDbs.development.execute(`SELECT count(*) AS n FROM _burrow_push_tokens`)).rows[0]!.n);
    expect((await t.request("POST", "/_push/notifications", { body: { payload: { message: "all" } } })).body).toEqual({ queued: before });
    await clearQueue();
    // 257..1024 bytes: not to iOS.
    const big = { message: "x".repeat(300) };
    const r = await t.request("POST", "/_push/notifications", { body: { payload: big } });
    const iosCount = Number(
      (await t.burrow.envDbs.development.execute(`SELECT count(*) AS n FROM _burrow_push_tokens WHERE type = 'ios'`)).rows[0]!.n,
    );
    expect(iosCount).toBeGreaterThan(0);
    expect(r.body.queued).toBe(before - iosCount);
    expect((await deliveries()).some((d) => d.startsWith("ios:"))).toBe(false);
    await clearQueue();
  });

  test("bad sends are 400: no payload, oversized, non-string alert, non-integer badge, bad targets", async () => {
    const cases: [unknown, string][] = [
      [{ users: ["ann"] }, "payload is missing"],
      [{ payload: { message: "x".repeat(1100) } }, "at most 1024 bytes"],
      [{ payload: { alert: 5 } }, "payload.alert must be a string"],
      [{ payload: { badge: "two" } }, "payload.badge must be an integer"],
      [{ payload: {}, users: "ann" }, "users must be an array"],
      [{ payload: {}, tokens: [{ type: "fax", token: "1" }] }, "unknown token type"],
      [[1, 2], "send a JSON object"],
    ];
    for (const [body, msg] of cases) {
      const r = await t.request("POST", "/_push/notifications", { body });
      expect([r.status, r.body.error]).toEqual([400, expect.stringContaining(msg)]);
    }
    expect(await deliveries()).toEqual([]);
  });

  test("production: clients may not send or read expired tokens unless push.clientSend; the app always may", async () => {
    expect((await t.admin("POST", "/deploy", {})).status).toBe(200);
    const client = await t.request("POST", "/_push/notifications", { version: 1, body: { payload: { message: "x" } } });
    expect([client.status, client.body.error]).toEqual([401, expect.stringContaining("private key")]);
    expect((await t.request("GET", "/_push/expired_tokens", { version: 1 })).status).toBe(401);
    expect((await t.request("POST", `/_push/tokens/ios/${ios(5)}`, { version: 1, body: { user: "p" } })).status).toBe(200);
    expect((await app("POST", "/_push/notifications", { payload: { message: "x" } }, 1)).body).toEqual({ queued: 1 });
    expect((await t.admin("PUT", "/settings/production", { push: { clientSend: true } })).status).toBe(200);
    expect((await t.request("POST", "/_push/notifications", { version: 1, body: { payload: { message: "x" } } })).body).toEqual({
      queued: 1,
    });
    expect((await deliveries("production")).length).toBe(2);
  });
});

describe("expired tokens", () => {
  test("a refused token leaves the registry for the expired list; clear=false keeps it, clear=true empties it", async () => {
    await t.request("POST", `/_push/tokens/ios/${ios(7)}`, { body: { user: "zed" } });
    const before = Date.now();
    await t.burrow.push.tokens("development").expire("ios", ios(7), "Unregistered");
    expect((await app("GET", "/_push/tokens?user=zed")).body.zed).toEqual([]);
    const first = await t.request("GET", "/_push/expired_tokens?clear=false");
    expect(first.body).toEqual([{ type: "ios", token: ios(7), expired: expect.any(Number) }]);
    expect(first.body[0].expired).toBeGreaterThanOrEqual(before);
    expect((await t.request("GET", "/_push/expired_tokens?clear=true")).body).toEqual(first.body);
    expect((await t.request("GET", "/_push/expired_tokens")).body).toEqual([]);
    expect((await t.request("GET", "/_push/expired_tokens?clear=maybe")).status).toBe(400);
  });
});

describe("legacy *_universal endpoints (the original iOS push client)", () => {
  test("register, tokens for users, send to users and tokens, broadcast, remove", async () => {
    await clearQueue();
    expect(
      (
        await app("POST", "/_push/register_device_token_universal", {
          userId: "leg",
          token: { token: ios(11), type: "ios" },
          overwrite: true,
        })
      ).status,
    ).toBe(200);
    const got = await app("GET", "/_push/get_tokens_for_users_universal?userIds=leg,none");
    expect(got.body).toEqual({ tokens: { leg: [{ token: ios(11), type: "ios", registered_milliseconds: expect.any(Number) }], none: [] } });
    expect((await app("POST", "/_push/push_users_universal", { kvPairs: { message: "hi" }, userIds: ["leg"] })).body).toEqual({
      queued: 1,
    });
    expect(
      (
        await app("POST", "/_push/push_tokens_universal", {
          tokens: [{ token: ios(11), type: "ios" }],
          payload: { kvPairs: { message: "hi" } },
        })
      ).body,
    ).toEqual({ queued: 1 });
    expect((await app("POST", "/_push/push_broadcast_universal", { kvPairs: { badge: 1 } })).body.queued).toBeGreaterThan(1);
    expect((await app("POST", "/_push/remove_token_universal", { token: ios(11), type: "ios" })).status).toBe(200);
    expect((await app("GET", "/_push/get_tokens_for_users_universal?userIds=leg")).body.tokens.leg).toEqual([]);
    await clearQueue();
  });
});

describe("admin views and settings", () => {
  test("recent notifications with their counts, and the queue", async () => {
    await t.request("POST", "/_push/notifications", { body: { payload: { message: "count me" }, users: ["ann"] } });
    const recent = await t.admin("GET", "/push/notifications?env=development&limit=1");
    expect(recent.body).toEqual([
      {
        id: expect.any(Number),
        created: expect.any(Number),
        target: { users: ["ann"], count: 1 },
        queued: 1,
        sent: 0,
        failed: 0,
        expired: 0,
        retries: 0,
        pending: 1,
        errors: [],
      },
    ]);
    const q = await t.admin("GET", "/push/queue?env=development");
    expect(q.body).toEqual({
      env: "development",
      depth: 1,
      oldestAgeMs: expect.any(Number),
      retrying: 0,
      leased: 0,
      tokens: expect.any(Number),
      inFlight: {},
    });
    expect((await t.admin("GET", "/push/queue?env=staging")).status).toBe(404);
    await clearQueue();
  });

  test("a platform without credentials fails its deliveries with the reason; nothing is retried", async () => {
    await clearQueue();
    await t.request("POST", "/_push/notifications", {
      body: { payload: { message: "nowhere" }, tokens: [{ type: "ios", token: ios(12) }] },
    });
    expect(await t.burrow.push.drain("development")).toBe(1);
    const [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
    expect([n.failed, n.pending, n.errors]).toEqual([1, 0, ["ios: APNs is not configured (settings push.apns)"]]);
  });

  test("bad credentials are a 400 when saved", async () => {
    const cases: [unknown, string][] = [
      [{ push: { apns: { keyP8: "not a key", keyId: "K", teamId: "T", topic: "com.example.app" } } }, "push.apns"],
      [{ push: { apns: { keyP8: "x", topic: "com.example.app" } } }, "keyId and teamId"],
      [{ push: { fcm: { serviceAccount: "{}" } } }, "push.fcm.serviceAccount"],
      [{ push: { web: { vapidPublicKey: "abc", vapidPrivateKey: "def" } } }, "push.web"],
      [{ push: { web: { subject: "ftp://x" } } }, "push.web.subject"],
    ];
    for (const [patch, msg] of cases) {
      const r = await t.admin("PUT", "/settings/development", patch);
      expect([r.status, r.body.error]).toEqual([400, expect.stringContaining(msg)]);
    }
    // Secrets never come back.
    const s = (await t.admin("GET", "/settings/development")).body.push;
    expect(s.apns.keyP8).toEqual({ set: false });
    expect(s.fcm.serviceAccount).toEqual({ set: false });
  });
});
