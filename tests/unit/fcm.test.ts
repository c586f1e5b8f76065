// The FCM HTTP v1 provider against a loopback fake: message shape, the OAuth token cache (one fetch shared by
// concurrent sends, refresh before expiry), the concurrency bound, error classification, timeouts, and the
// service account validator.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import type { PushMessage, PushProvider } from "../../src/push/provider.ts";
import { createFcmProvider, validateFcmServiceAccount } from "../../src/push/providers/fcm.ts";
import { type FcmFake, makeServiceAccount, startFcmFake } from "../helpers/fcm-fake.ts";

let now = Date.parse("2030-01-01T00:00:00Z");
const clock = () => now;
let fake: FcmFake;
let seq = 0;

const msg = (token: string, payload: Record<string, unknown> = { kind: "chat", body: "hello" }): PushMessage => ({
  id: (++seq).toString(16).padStart(32, "0"),
  token,
  payload,
});

function provider(extra: { concurrency?: number; timeoutMs?: number; serviceAccount?: string } = {}): PushProvider {
  return createFcmProvider({ serviceAccount: fake.account.json, url: fake.url, clock, ...extra });
}

beforeAll(async () => {
  fake = await startFcmFake({ clock });
});
afterAll(() => fake.stop());

describe("FCM provider", () => {
  test("delivers one request per token with the v1 message shape", async () => {
    const p = provider();
    const before = fake.deliveries.length;
    const m = msg("device-a", { kind: "chat", body: "hello" });
    expect(p.platform).toBe("android");
    expect(await p.send(m)).toEqual({ kind: "sent" });
    const m2 = msg("device-b", { n: "2" });
    expect(await p.send(m2)).toEqual({ kind: "sent" });
    expect(fake.deliveries.slice(before)).toEqual([
      { token: "device-a", data: { kind: "chat", body: "hello" }, collapseKey: m.id, priority: "high" },
      { token: "device-b", data: { n: "2" }, collapseKey: m2.id, priority: "high" },
    ]);
    p.close();
  });

  test("fetches the OAuth token once for 200 concurrent sends and refreshes it 5 minutes before expiry", async () => {
    const p = provider();
    const tokensBefore = fake.tokenRequests;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => p.send(msg(`bulk-${i}`))));
    expect(results.every((r) => r.kind === "sent")).toBe(true);
    expect(fake.tokenRequests - tokensBefore).toBe(1);
    now += 54 * 60_000; // 6 minutes left: still cached
    expect(await p.send(msg("later"))).toEqual({ kind: "sent" });
    expect(fake.tokenRequests - tokensBefore).toBe(1);
    now += 60_000 + 1; // less than 5 minutes left: refreshed
    expect(await p.send(msg("later-still"))).toEqual({ kind: "sent" });
    expect(fake.tokenRequests - tokensBefore).toBe(2);
    now += 2 * 3600_000; // the fake now refuses the first token, the provider has moved on
    expect(await p.send(msg("much-later"))).toEqual({ kind: "sent" });
    expect(fake.tokenRequests - tokensBefore).toBe(3);
    p.close();
  });

  test("never has more than `concurrency` requests in flight", async () => {
    const p = provider({ concurrency: 8 });
    fake.peak = 0;
    fake.delayMs = 15;
    try {
      const results = await Promise.all(Array.from({ length: 120 }, (_, i) => p.send(msg(`c-${i}`))));
      expect(results.every((r) => r.kind === "sent")).toBe(true);
      expect(fake.peak).toBe(8);
    } finally {
      fake.delayMs = 0;
      p.close();
    }
  });

  test("classifies FCM errors", async () => {
    const p = provider();
    fake.respond("gone", "unregistered");
    fake.respond("garbage", "invalid-token");
    fake.respond("bad-payload", "invalid-payload");
    fake.respond("other-sender", "sender-id-mismatch");
    fake.respond("busy", { status: 429, retryAfter: "7" });
    fake.respond("down", { status: 503, retryAfter: new Date(Date.now() + 30_000).toUTCString() });
    fake.respond("broken", { status: 500 });
    const r = async (token: string) => p.send(msg(token));
    expect(await r("gone")).toMatchObject({ kind: "invalid-token", reason: expect.stringContaining("UNREGISTERED") });
    expect(await r("garbage")).toMatchObject({ kind: "invalid-token", reason: expect.stringContaining("INVALID_ARGUMENT") });
    expect(await r("bad-payload")).toMatchObject({ kind: "failed", reason: expect.stringContaining("INVALID_ARGUMENT") });
    expect(await r("other-sender")).toMatchObject({ kind: "failed", reason: expect.stringContaining("SENDER_ID_MISMATCH") });
    expect(await r("busy")).toMatchObject({ kind: "retry", afterMs: 7000 });
    const down = await r("down");
    expect(down.kind).toBe("retry");
    expect(down.kind === "retry" && down.afterMs! > 25_000 && down.afterMs! <= 30_000).toBe(true);
    const broken = await r("broken");
    expect(broken).toMatchObject({ kind: "retry", reason: expect.stringContaining("INTERNAL") });
    expect(broken.kind === "retry" && broken.afterMs).toBeUndefined();
    expect(await p.send(msg("fine", { count: 3 }))).toEqual({ kind: "failed", reason: 'payload value "count" is not a string' });
    p.close();
  });

  test("a 401 drops the cached access token and is a retry; the next send fetches a new one", async () => {
    const p = provider();
    expect(await p.send(msg("warm-up"))).toEqual({ kind: "sent" });
    const tokensBefore = fake.tokenRequests;
    fake.respond("rejected-once", "unauthenticated");
    expect(await p.send(msg("rejected-once"))).toMatchObject({ kind: "retry", reason: expect.stringContaining("401") });
    expect(await p.send(msg("rejected-once"))).toEqual({ kind: "sent" });
    expect(fake.tokenRequests - tokensBefore).toBe(1);
    fake.revokeTokens();
    expect((await p.send(msg("after-revoke"))).kind).toBe("retry");
    expect(await p.send(msg("after-revoke"))).toEqual({ kind: "sent" });
    p.close();
  });

  test("a service account the token endpoint refuses is a permanent failure, not asked again at once", async () => {
    const impostor = makeServiceAccount(fake.tokenUri, { projectId: fake.account.projectId });
    const p = provider({ serviceAccount: impostor.json });
    const rejectionsBefore = fake.rejections.length;
    const results = await Promise.all([p.send(msg("x1")), p.send(msg("x2")), p.send(msg("x3"))]);
    // (one assertion per field: Bun 1.4.5's toMatchObject fails a second match of the same object with stringContaining)
    for (const r of results)
      expect(r.kind === "failed" && r.reason).toContain("refused the service account (400 invalid_grant: Invalid JWT Signature.)");
    expect(await p.send(msg("x4"))).toMatchObject({ kind: "failed" });
    expect(fake.rejections.slice(rejectionsBefore)).toEqual(["Invalid JWT Signature."]);
    p.close();
  });

  test("timeouts and unreachable endpoints are retries", async () => {
    const p = provider({ timeoutMs: 200 });
    fake.respond("slow", "hang");
    const started = performance.now();
    expect(await p.send(msg("slow"))).toEqual({ kind: "retry", reason: "FCM send: timed out" });
    expect(performance.now() - started).toBeLessThan(2000);
    p.close();
    const dead = makeServiceAccount("http://127.0.0.1:9/token");
    const q = createFcmProvider({ serviceAccount: dead.json, url: "http://127.0.0.1:9", timeoutMs: 500 });
    expect(await q.send(msg("any"))).toMatchObject({ kind: "retry", reason: expect.stringContaining("FCM token endpoint") });
    q.close();
  });

  test("a send whose notAfter passed while the access token was fetched is not made", async () => {
    const p = provider();
    fake.tokenDelayMs = 300;
    try {
      const before = fake.deliveries.length;
      const late = p.send({ id: "a".repeat(32), token: "late-device", payload: { m: "x" }, notAfter: Date.now() + 100 });
      const onTime = p.send({ id: "b".repeat(32), token: "on-time-device", payload: { m: "x" }, notAfter: Date.now() + 5_000 });
      expect(await late).toEqual({ kind: "not-sent" });
      expect(await onTime).toEqual({ kind: "sent" });
      expect(fake.deliveries.slice(before).map((d) => d.token)).toEqual(["on-time-device"]);
    } finally {
      fake.tokenDelayMs = 0;
      p.close();
    }
  });

  test("a closed provider answers retry", async () => {
    const p = provider();
    p.close();
    expect(await p.send(msg("after-close"))).toMatchObject({ kind: "retry" });
  });

  test("1000 sends", async () => {
    const p = provider();
    const before = fake.deliveries.length;
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => p.send(msg(`k-${i}`))));
    const ms = performance.now() - started;
    expect(results.filter((r) => r.kind === "sent").length).toBe(1000);
    expect(fake.deliveries.length - before).toBe(1000);
    console.log(`FCM: 1000 sends in ${ms.toFixed(0)} ms (${Math.round(1000 / (ms / 1000))} deliveries/s, concurrency 100)`);
    p.close();
  });
});

describe("validateFcmServiceAccount", () => {
  const good = makeServiceAccount("https://oauth2.googleapis.com/token", { projectId: "my-app-123" });
  const with_ = (patch: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(good.json), ...patch });

  test("accepts a service account and names its project and client", () => {
    expect(validateFcmServiceAccount(good.json)).toEqual({ projectId: "my-app-123", clientEmail: good.clientEmail });
  });

  test("says what is wrong", () => {
    const ec = makeServiceAccount("https://oauth2.googleapis.com/token", { keyType: "ec" });
    const ed = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const cases: [string, string][] = [
      ["{not json", "FCM service account is not valid JSON"],
      ["[]", "FCM service account must be a JSON object"],
      [with_({ project_id: undefined, client_email: "" }), "FCM service account is missing project_id, client_email"],
      [with_({ private_key: undefined, token_uri: 3 }), "FCM service account is missing private_key, token_uri"],
      [with_({ type: "authorized_user" }), 'FCM service account has type "authorized_user", expected "service_account"'],
      [with_({ token_uri: "/token" }), "FCM service account token_uri is not an absolute URL"],
      [with_({ client_email: "nobody" }), "FCM service account client_email is not an email address"],
      [
        with_({ private_key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" }),
        "FCM service account private_key is not a parseable PEM private key",
      ],
      [ec.json, "FCM service account private_key is not an RSA key (it is ec)"],
      [with_({ private_key: ed }), "FCM service account private_key is not an RSA key (it is ed25519)"],
    ];
    for (const [json, message] of cases) expect(() => validateFcmServiceAccount(json)).toThrow(message);
    expect(() => createFcmProvider({ serviceAccount: ec.json })).toThrow("not an RSA key");
  });
});
