// The APNs provider against a real loopback HTTP/2 TLS fake (tests/helpers/apns-fake.ts): token and
// certificate auth, headers, the classification of APNs answers, GOAWAY and reconnection, concurrency within
// SETTINGS_MAX_CONCURRENT_STREAMS, provider-token reuse and refresh rules, timeouts, and up-front credential checks.

import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { DeliveryResult, PushProvider } from "../../src/push/provider.ts";
import { JWT_MIN_AGE_MS } from "../../src/push/providers/apns-auth.ts";
import { type ApnsConfig, createApnsProvider, validateApnsCredentials } from "../../src/push/providers/apns.ts";
import {
  type ApnsFake,
  type ApnsFakeOptions,
  type ApnsTestPki,
  makeApnsTestPki,
  startApnsFake,
  TEST_KEY_ID,
  TEST_P12_PASSWORD,
  TEST_TEAM_ID,
  TEST_TOPIC,
} from "../helpers/apns-fake.ts";

let pki: ApnsTestPki;
let other: ApnsTestPki | undefined;
/** A second PKI whose CA the fake does not trust and whose .p8 it does not know. */
const otherPki = () => (other ??= makeApnsTestPki());
const cleanups: (() => unknown)[] = [];

beforeAll(() => {
  pki = makeApnsTestPki();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function fake(opts: ApnsFakeOptions = {}): Promise<ApnsFake> {
  const f = await startApnsFake(pki, opts);
  cleanups.push(() => f.close());
  return f;
}

function provider(f: { url: string; ca: string }, over: Partial<ApnsConfig> = {}): PushProvider {
  const p = createApnsProvider({
    url: f.url,
    ca: f.ca,
    topic: TEST_TOPIC,
    auth: { kind: "token", keyP8: pki.p8.pem, keyId: TEST_KEY_ID, teamId: TEST_TEAM_ID },
    ...over,
  });
  cleanups.push(() => p.close());
  return p;
}

const certAuth = (): ApnsConfig["auth"] => ({ kind: "certificate", p12Base64: pki.p12Base64, password: TEST_P12_PASSWORD });
const hexId = () => randomBytes(16).toString("hex");
const deviceToken = () => randomBytes(32).toString("hex");
const alert = { aps: { alert: { title: "Hi", body: "there" }, sound: "default" }, threadId: "t1" };
const uuidOf = (id: string) => `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;

describe("delivery", () => {
  test("token auth: an alert arrives with every APNs header set", async () => {
    const f = await fake();
    const p = provider(f);
    const id = hexId();
    const token = deviceToken();
    const before = Math.floor(Date.now() / 1000);
    expect(await p.send({ id, token, payload: alert })).toEqual({ kind: "sent" });
    expect(f.deliveries).toHaveLength(1);
    const d = f.deliveries[0]!;
    expect(d.auth).toBe("jwt");
    expect(d.token).toBe(token);
    expect(d.payload).toEqual(alert);
    expect(d.headers[":path"]).toBe(`/3/device/${token}`);
    expect(d.headers[":method"]).toBe("POST");
    expect(d.headers["apns-topic"]).toBe(TEST_TOPIC);
    expect(d.headers["apns-push-type"]).toBe("alert");
    expect(d.headers["apns-priority"]).toBe("10");
    expect(d.headers["apns-id"]).toBe(uuidOf(id));
    expect(d.headers["apns-collapse-id"]).toBe(id);
    const expiration = Number(d.headers["apns-expiration"]);
    expect(expiration).toBeGreaterThanOrEqual(before + 24 * 3600);
    expect(expiration).toBeLessThanOrEqual(before + 24 * 3600 + 5);
    expect(f.jwtsSeen.size).toBe(1);
  });

  test("a payload without alert, sound or badge is a background push with priority 5", async () => {
    const f = await fake();
    const p = provider(f);
    expect(await p.send({ id: hexId(), token: deviceToken(), payload: { aps: { "content-available": 1 }, sync: "1" } })).toEqual({
      kind: "sent",
    });
    expect(f.deliveries[0]!.headers["apns-push-type"]).toBe("background");
    expect(f.deliveries[0]!.headers["apns-priority"]).toBe("5");
  });

  test("certificate auth: the .p12 client certificate is presented and no JWT is sent", async () => {
    const f = await fake();
    const p = provider(f, { auth: certAuth() });
    expect(await p.send({ id: hexId(), token: deviceToken(), payload: alert })).toEqual({ kind: "sent" });
    expect(f.deliveries[0]!.auth).toBe("certificate");
    expect(f.deliveries[0]!.headers.authorization).toBeUndefined();
    expect(f.jwtsSeen.size).toBe(0);
  });

  test("a client certificate from another CA is refused (so the auth check above means something)", async () => {
    const f = await fake();
    const p = provider(f, { auth: { kind: "certificate", p12Base64: otherPki().p12Base64, password: TEST_P12_PASSWORD } });
    expect(await p.send({ id: hexId(), token: deviceToken(), payload: alert })).toEqual({
      kind: "failed",
      reason: "APNs 403 BadCertificate",
    });
    expect(f.deliveries).toHaveLength(0);
  });

  test("a token that is not hex is invalid without a request", async () => {
    const f = await fake();
    const p = provider(f);
    expect((await p.send({ id: hexId(), token: "../../admin", payload: alert })).kind).toBe("invalid-token");
    expect(f.requests).toBe(0);
  });
});

describe("answers", () => {
  async function answered(answer: Parameters<ApnsFake["answer"]>[1], payload: Record<string, unknown> = alert): Promise<DeliveryResult> {
    const f = await fake();
    const p = provider(f);
    const token = deviceToken();
    f.answer(token, answer);
    const r = await p.send({ id: hexId(), token, payload });
    expect(f.requests).toBe(1);
    expect(f.deliveries).toHaveLength(0);
    return r;
  }

  test("410 Unregistered, 400 BadDeviceToken and DeviceTokenNotForTopic make the token invalid", async () => {
    expect(await answered({ status: 410, reason: "Unregistered" })).toEqual({ kind: "invalid-token", reason: "Unregistered" });
    expect(await answered({ status: 400, reason: "BadDeviceToken" })).toEqual({ kind: "invalid-token", reason: "BadDeviceToken" });
    expect(await answered({ status: 400, reason: "DeviceTokenNotForTopic" })).toEqual({
      kind: "invalid-token",
      reason: "DeviceTokenNotForTopic",
    });
  });

  test("429 is retried, honouring Retry-After in seconds or as a date", async () => {
    expect(await answered({ status: 429, reason: "TooManyRequests", retryAfter: "7" })).toEqual({
      kind: "retry",
      reason: "TooManyRequests",
      afterMs: 7000,
    });
    expect(await answered({ status: 429, reason: "TooManyRequests" })).toEqual({ kind: "retry", reason: "TooManyRequests" });
    const r = await answered({ status: 429, reason: "TooManyRequests", retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    expect(r.kind).toBe("retry");
    expect((r as { afterMs: number }).afterMs).toBeGreaterThan(55_000);
    expect((r as { afterMs: number }).afterMs).toBeLessThanOrEqual(60_000);
  });

  test("500 and 503 are retried", async () => {
    expect(await answered({ status: 500, reason: "InternalServerError" })).toEqual({ kind: "retry", reason: "InternalServerError" });
    expect(await answered({ status: 503, reason: "ServiceUnavailable", retryAfter: "2" })).toEqual({
      kind: "retry",
      reason: "ServiceUnavailable",
      afterMs: 2000,
    });
  });

  test("other 4xx are permanent failures", async () => {
    expect(await answered({ status: 400, reason: "BadTopic" })).toEqual({ kind: "failed", reason: "APNs 400 BadTopic" });
    expect(await answered({ status: 403, reason: "BadCertificateEnvironment" })).toEqual({
      kind: "failed",
      reason: "APNs 403 BadCertificateEnvironment",
    });
    // Judged by the fake itself, not canned: a body over 4096 bytes.
    expect(await answered(undefined, { aps: { alert: "x".repeat(5000) } })).toEqual({ kind: "failed", reason: "APNs 413 PayloadTooLarge" });
  });

  test("no answer within the timeout is a retry, and the provider still works afterwards", async () => {
    const f = await fake();
    const p = provider(f, { timeoutMs: 300 });
    const slow = deviceToken();
    f.answer(slow, { delayMs: 2000 });
    const t0 = performance.now();
    const r = await p.send({ id: hexId(), token: slow, payload: alert });
    expect(r.kind).toBe("retry");
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(await p.send({ id: hexId(), token: deviceToken(), payload: alert })).toEqual({ kind: "sent" });
    expect(f.connections).toBe(1);
  });

  test("a topic that cannot be sent as a header fails once instead of reconnecting in a loop", async () => {
    const f = await fake();
    const p = provider(f, { topic: "com.example.app\r\nx-evil: 1" });
    const r = await p.send({ id: hexId(), token: deviceToken(), payload: alert });
    expect(r.kind).toBe("failed");
    expect(f.connections).toBe(1);
    expect(f.requests).toBe(0);
  });

  test("an unreachable APNs is a retry, not a hang", async () => {
    const f = await fake();
    const url = f.url;
    await f.close();
    const p = provider({ url, ca: pki.caPem }, { timeoutMs: 2000 });
    const r = await p.send({ id: hexId(), token: deviceToken(), payload: alert });
    expect(r.kind).toBe("retry");
    expect((r as { reason: string }).reason).toContain("cannot connect to APNs");
  });
});

describe("connection", () => {
  test("500 concurrent sends share one connection and all arrive once", async () => {
    const f = await fake();
    const p = provider(f);
    const ids = Array.from({ length: 500 }, hexId);
    const results = await Promise.all(ids.map((id) => p.send({ id, token: deviceToken(), payload: alert })));
    expect(results.filter((r) => r.kind === "sent")).toHaveLength(500);
    expect(f.connections).toBe(1);
    expect(f.deliveries).toHaveLength(500);
    expect(new Set(f.deliveries.map((d) => d.apnsId))).toEqual(new Set(ids.map(uuidOf)));
    expect(f.jwtsSeen.size).toBe(1);
  });

  test("one connection carries thousands of streams over time, and is kept alive by PINGs", async () => {
    const f = await fake();
    const p = provider(f, { pingIntervalMs: 40 });
    for (let batch = 0; batch < 4; batch++) {
      const results = await Promise.all(Array.from({ length: 500 }, () => p.send({ id: hexId(), token: deviceToken(), payload: alert })));
      expect(results.filter((r) => r.kind !== "sent")).toEqual([]);
    }
    const pingsBefore = f.pings;
    await Bun.sleep(250);
    expect(f.pings - pingsBefore).toBeGreaterThanOrEqual(3);
    expect((await p.send({ id: hexId(), token: deviceToken(), payload: alert })).kind).toBe("sent");
    expect(f.deliveries).toHaveLength(2001);
    expect(f.connections).toBe(1);
  });

  test("never more streams at once than the server's SETTINGS_MAX_CONCURRENT_STREAMS", async () => {
    const f = await fake({ maxConcurrentStreams: 10, delayMs: 5 });
    const p = provider(f);
    const results = await Promise.all(Array.from({ length: 200 }, () => p.send({ id: hexId(), token: deviceToken(), payload: alert })));
    // A client that ignored the limit would get REFUSED_STREAM (retry) for the excess.
    expect(results.filter((r) => r.kind !== "sent")).toEqual([]);
    expect(f.deliveries).toHaveLength(200);
    expect(f.peakStreams).toBeLessThanOrEqual(10);
    expect(f.peakStreams).toBeGreaterThanOrEqual(5); // It does use the streams it may.
    expect(f.connections).toBe(1);
  });

  /** Sends 120 messages, resending retries, until all are sent; returns the retries of the first round. */
  async function sendAllThroughGoaway(f: ApnsFake, p: PushProvider): Promise<{ firstRoundRetries: number; firstRoundMs: number }> {
    const ids = Array.from({ length: 120 }, hexId);
    const pending = new Map(ids.map((id) => [id, deviceToken()]));
    let firstRoundRetries = 0;
    let firstRoundMs = 0;
    for (let round = 0; round < 5 && pending.size > 0; round++) {
      const batch = [...pending];
      const t0 = performance.now();
      const results = await Promise.all(batch.map(([id, token]) => p.send({ id, token, payload: alert })));
      if (round === 0) firstRoundMs = performance.now() - t0;
      results.forEach((r, i) => {
        if (r.kind === "sent") pending.delete(batch[i]![0]);
        else if (r.kind === "retry") firstRoundRetries += round === 0 ? 1 : 0;
        else throw new Error(`unexpected ${JSON.stringify(r)}`);
      });
    }
    expect(pending.size).toBe(0);
    // Each message delivered exactly once: a send answered "retry" had not been delivered.
    expect(f.deliveries.map((d) => d.apnsId).sort()).toEqual(ids.map(uuidOf).sort());
    expect(f.connections).toBeGreaterThanOrEqual(2);
    expect(f.deliveries.filter((d) => d.connection >= 2).length).toBeGreaterThan(0);
    return { firstRoundRetries, firstRoundMs };
  }

  test("GOAWAY mid-run: queued sends move to a new connection and nothing is lost", async () => {
    const f = await fake({ maxConcurrentStreams: 10, delayMs: 2 });
    const p = provider(f);
    f.goawayAfter(30);
    const { firstRoundMs } = await sendAllThroughGoaway(f, p);
    expect(firstRoundMs).toBeLessThan(3000); // Nobody waited for the 10 s timeout.
    expect(await p.send({ id: hexId(), token: deviceToken(), payload: alert })).toEqual({ kind: "sent" });
  });

  test("connection lost mid-run: the unanswered in-flight sends are retries at once, the rest go over a new connection", async () => {
    const f = await fake({ maxConcurrentStreams: 10, delayMs: 20 });
    const p = provider(f);
    f.goawayAfter(30, "abrupt");
    const { firstRoundRetries, firstRoundMs } = await sendAllThroughGoaway(f, p);
    expect(firstRoundRetries).toBeGreaterThan(0);
    expect(firstRoundMs).toBeLessThan(3000);
  });

  test("after the connection drops, the next send reconnects", async () => {
    const f = await fake();
    const p = provider(f);
    expect((await p.send({ id: hexId(), token: deviceToken(), payload: alert })).kind).toBe("sent");
    f.goawayAfter(1);
    expect((await p.send({ id: hexId(), token: deviceToken(), payload: alert })).kind).toBe("sent");
    await Bun.sleep(50);
    expect((await p.send({ id: hexId(), token: deviceToken(), payload: alert })).kind).toBe("sent");
    expect(f.connections).toBe(2);
    expect(f.deliveries.map((d) => d.connection)).toEqual([1, 1, 2]);
  });
});

describe("provider token", () => {
  const MIN = 60_000;

  test("one JWT is reused for 50 minutes, then replaced", async () => {
    const f = await fake();
    let now = Date.now() - 30 * MIN; // The fake accepts iat within an hour of real time either way.
    const p = provider(f, { clock: () => now });
    const send = async () => expect((await p.send({ id: hexId(), token: deviceToken(), payload: alert })).kind).toBe("sent");
    await send();
    now += 20 * MIN;
    await send();
    now += 29 * MIN;
    await send();
    expect(f.jwtsSeen.size).toBe(1);
    now += 1 * MIN; // 50 minutes old.
    await send();
    expect(f.jwtsSeen.size).toBe(2);
    now += 10 * MIN;
    await send();
    expect(f.jwtsSeen.size).toBe(2);
    const iats = [...f.jwtsSeen].map((jwt) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()).iat);
    expect(iats[1] - iats[0]).toBe(50 * 60);
  });

  test("ExpiredProviderToken replaces the JWT, but never sooner than 20 minutes after the last one", async () => {
    const f = await fake();
    let now = Date.now() - 30 * MIN;
    const p = provider(f, { clock: () => now });
    const refused = deviceToken();
    f.answer(refused, { status: 403, reason: "ExpiredProviderToken" });
    const ok = async () => expect((await p.send({ id: hexId(), token: deviceToken(), payload: alert })).kind).toBe("sent");

    await ok(); // JWT 1 at t=0.
    now += 5 * MIN;
    expect(await p.send({ id: hexId(), token: refused, payload: alert })).toEqual({
      kind: "retry",
      reason: "ExpiredProviderToken",
      afterMs: 15 * MIN,
    });
    await ok();
    now += 14 * MIN; // 19 minutes: still too early.
    await ok();
    expect(f.jwtsSeen.size).toBe(1);
    now += 1 * MIN; // 20 minutes: the refused JWT may be replaced.
    await ok();
    expect(f.jwtsSeen.size).toBe(2);

    // Refused again right away: the new JWT stays for 20 minutes, however often APNs refuses it.
    for (let i = 0; i < 3; i++) {
      const r = await p.send({ id: hexId(), token: refused, payload: alert });
      expect(r).toEqual({ kind: "retry", reason: "ExpiredProviderToken", afterMs: JWT_MIN_AGE_MS });
    }
    now += 19 * MIN;
    await ok();
    expect(f.jwtsSeen.size).toBe(2);
    now += 1 * MIN;
    const r = await p.send({ id: hexId(), token: refused, payload: alert }); // Made with JWT 3, refused too.
    expect(r).toEqual({ kind: "retry", reason: "ExpiredProviderToken", afterMs: JWT_MIN_AGE_MS });
    expect(f.jwtsSeen.size).toBe(3);
  });

  test("a JWT from a key APNs does not know is refused, and retried later", async () => {
    const f = await fake();
    const now = Date.now();
    const p = provider(f, {
      auth: { kind: "token", keyP8: otherPki().p8.pem, keyId: TEST_KEY_ID, teamId: TEST_TEAM_ID },
      clock: () => now,
    });
    const r = await p.send({ id: hexId(), token: deviceToken(), payload: alert });
    expect(r).toEqual({ kind: "retry", reason: "InvalidProviderToken", afterMs: JWT_MIN_AGE_MS });
    expect(f.deliveries).toHaveLength(0);
  });
});

describe("validateApnsCredentials", () => {
  const token = (over: Partial<{ keyP8: string; keyId: string; teamId: string }>) => ({
    kind: "token" as const,
    keyP8: pki.p8.pem,
    keyId: TEST_KEY_ID,
    teamId: TEST_TEAM_ID,
    ...over,
  });
  const cert = (p12Base64: string, password = TEST_P12_PASSWORD) => ({ kind: "certificate" as const, p12Base64, password });

  test("good credentials pass; a .p12 tells its bundle id", () => {
    expect(validateApnsCredentials(token({}))).toEqual({});
    const info = validateApnsCredentials(cert(pki.p12Base64));
    expect(info.bundleId).toBe(TEST_TOPIC);
    expect(info.expiresAt!.getTime()).toBeGreaterThan(Date.now());
  });

  test("bad .p8 keys and ids are refused with a clear message", () => {
    expect(() => validateApnsCredentials(token({ keyP8: "garbage" }))).toThrow("the .p8 key is not a valid EC private key");
    const rsaPem = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" });
    expect(() => validateApnsCredentials(token({ keyP8: rsaPem }))).toThrow("the .p8 key is not a valid EC private key (it is rsa)");
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey.export({ type: "pkcs8", format: "pem" });
    expect(() => validateApnsCredentials(token({ keyP8: p384 }))).toThrow("not a P-256");
    expect(() => validateApnsCredentials(token({ keyId: "abc" }))).toThrow("10-character Key ID");
    expect(() => validateApnsCredentials(token({ teamId: "" }))).toThrow("10-character Team ID");
  });

  test("bad .p12 files are refused with a clear message", () => {
    expect(() => validateApnsCredentials(cert(pki.p12Base64, "wrong"))).toThrow("the .p12 password is wrong");
    expect(() => validateApnsCredentials(cert(pki.p12NoKeyBase64))).toThrow("the .p12 holds no private key");
    expect(() => validateApnsCredentials(cert(pki.p12WrongCertBase64))).toThrow("the .p12 holds no certificate matching its key");
    expect(() => validateApnsCredentials(cert(Buffer.from("hello world").toString("base64")))).toThrow(
      "the .p12 is not a readable PKCS#12 file",
    );
    expect(() => validateApnsCredentials(cert(""))).toThrow("the .p12 is empty or not base64");
  });

  test("an expired certificate is refused", () => {
    expect(() => validateApnsCredentials(cert(pki.p12Base64), new Date(Date.now() + 400 * 24 * 3600_000))).toThrow(
      "the .p12 certificate expired on",
    );
  });

  test("a provider with bad credentials fails its sends instead of throwing", async () => {
    const p = createApnsProvider({
      url: "https://127.0.0.1:1",
      topic: TEST_TOPIC,
      auth: { kind: "certificate", p12Base64: pki.p12Base64, password: "wrong" },
    });
    expect(await p.send({ id: hexId(), token: deviceToken(), payload: alert })).toEqual({
      kind: "failed",
      reason: "APNs credentials: the .p12 password is wrong",
    });
    p.close();
  });
});
