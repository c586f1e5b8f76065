// The Web Push provider against a loopback push service fake that checks VAPID and decrypts the payload with the
// subscription's private key: delivery, Topic/TTL, error classification, the SSRF guard, the concurrency bound,
// timeouts, endpoint names looked up again for every new connection (no DNS rebinding through the keep-alive pool),
// and the subscription and VAPID key validators.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import https from "node:https";
import type { PushMessage, PushProvider } from "../../src/push/provider.ts";
import {
  createWebPushProvider,
  endpointNotAllowed,
  generateVapidKeys,
  parseSubscription,
  validateVapidKeys,
} from "../../src/push/providers/web-push.ts";
import { isPrivateAddress, publicOnlyLookup } from "../../src/net/public-address.ts";
import { makeApnsTestPki } from "../helpers/apns-fake.ts";
import { startWebPushFake, type WebPushFake } from "../helpers/web-push-fake.ts";

const vapid = generateVapidKeys();
let fake: WebPushFake;
let seq = 0;

const msg = (token: string, payload: Record<string, unknown> = { title: "Hi", body: "there" }, id?: string): PushMessage => ({
  id: id ?? (++seq).toString(16).padStart(32, "0"),
  token,
  payload,
});

function provider(
  extra: {
    concurrency?: number;
    timeoutMs?: number;
    allowPrivateEndpoints?: boolean;
    vapidPublicKey?: string;
    vapidPrivateKey?: string;
    lookup?: ReturnType<typeof publicOnlyLookup>;
  } = {},
): PushProvider {
  return createWebPushProvider({
    vapidPublicKey: vapid.publicKey,
    vapidPrivateKey: vapid.privateKey,
    subject: "mailto:push@example.com",
    allowPrivateEndpoints: true,
    ttlSeconds: 3600,
    ...extra,
  });
}

beforeAll(() => {
  fake = startWebPushFake(vapid.publicKey);
});
afterAll(() => fake.stop());

describe("Web Push provider", () => {
  test("encrypts per subscription; the fake decrypts it and verifies the VAPID JWT", async () => {
    const p = provider();
    const a = fake.subscribe();
    const b = fake.subscribe();
    const m = msg(a.token, { title: "Hi", body: "there", data: { n: 1 } });
    expect(p.platform).toBe("web");
    expect(await p.send(m)).toEqual({ kind: "sent" });
    expect(await p.send(msg(b.token, { title: "Second" }))).toEqual({ kind: "sent" });
    const [da, db] = fake.deliveries.slice(-2);
    expect(da).toMatchObject({ id: a.id, payload: { title: "Hi", body: "there", data: { n: 1 } }, topic: m.id, ttl: "3600" });
    expect(da!.claims.aud).toBe(fake.url);
    expect(da!.claims.sub).toBe("mailto:push@example.com");
    expect(db).toMatchObject({ id: b.id, payload: { title: "Second" } });
    expect(fake.rejections).toEqual([]);
    p.close();
  });

  test("the Topic is the message id cut to 32 URL-safe characters", async () => {
    const p = provider();
    const s = fake.subscribe();
    expect(await p.send(msg(s.token, { t: 1 }, "abc.def/ghi+jkl=0123456789abcdef0123456789ABCDEF"))).toEqual({ kind: "sent" });
    expect(fake.deliveries.at(-1)!.topic).toBe("abcdefghijkl0123456789abcdef0123");
    p.close();
  });

  test("classifies push service answers", async () => {
    const p = provider();
    const answer = async (status: 400 | 403 | 404 | 410 | 413 | 429 | 500 | 503 | 301, retryAfter?: string) => {
      const s = fake.subscribe();
      fake.respond(s.id, { status, retryAfter });
      return p.send(msg(s.token));
    };
    expect(await answer(410)).toEqual({ kind: "invalid-token", reason: "web push 410: answering 410" });
    expect(await answer(404)).toMatchObject({ kind: "invalid-token" });
    expect(await answer(429, "12")).toMatchObject({ kind: "retry", afterMs: 12_000 });
    expect(await answer(503, "1")).toMatchObject({ kind: "retry", afterMs: 1000 });
    const plain500 = await answer(500);
    expect(plain500.kind === "retry" && plain500.afterMs).toBeUndefined();
    expect(plain500.kind).toBe("retry");
    for (const status of [400, 403, 413] as const) expect((await answer(status)).kind).toBe("failed");
    const delivered = fake.deliveries.length;
    expect(await answer(301)).toEqual({ kind: "failed", reason: "web push 301: redirects are not followed" });
    expect(fake.deliveries.length).toBe(delivered);
    // an unknown subscription (the browser unsubscribed) is a 404 of the fake
    const gone = JSON.parse(fake.subscribe().token);
    gone.endpoint = `${fake.url}/push/00`;
    expect(await p.send(msg(JSON.stringify(gone)))).toMatchObject({ kind: "invalid-token" });
    p.close();
  });

  test("VAPID keys the push service does not know are refused (403, failed)", async () => {
    const other = generateVapidKeys();
    const p = provider({ vapidPublicKey: other.publicKey, vapidPrivateKey: other.privateKey });
    expect(await p.send(msg(fake.subscribe().token))).toEqual({
      kind: "failed",
      reason: "web push 403: VAPID key does not match the subscription's",
    });
    expect(fake.rejections.pop()).toBe("VAPID key does not match the subscription's");
    p.close();
  });

  test("a malformed token or an oversized payload never reaches the network", async () => {
    const p = provider();
    const requests = fake.deliveries.length + fake.rejections.length;
    expect(await p.send(msg("not json"))).toEqual({ kind: "invalid-token", reason: "subscription is not valid JSON" });
    expect(await p.send(msg(fake.subscribe().token, { body: "x".repeat(5000) }))).toMatchObject({
      kind: "failed",
      reason: expect.stringContaining("payload too large"),
    });
    expect(fake.deliveries.length + fake.rejections.length).toBe(requests);
    p.close();
  });

  test("refuses non-https and private endpoints unless allowPrivateEndpoints", async () => {
    const p = provider({ allowPrivateEndpoints: false });
    const s = fake.subscribe();
    const keys = JSON.parse(s.token).keys;
    const endpoints: [string, string][] = [
      [s.endpoint, "not https"],
      ["http://push.example.com/x", "not https"],
      ["https://127.0.0.1/push", "private address"],
      ["https://127.1.2.3:8443/push", "private address"],
      ["https://10.0.0.7/push", "private address"],
      ["https://172.20.1.1/push", "private address"],
      ["https://192.168.1.1/push", "private address"],
      ["https://169.254.169.254/latest/meta-data", "private address"],
      ["https://100.64.0.1/push", "private address"],
      ["https://0.0.0.0/push", "private address"],
      ["https://0x7f.1/push", "private address"],
      ["https://2130706433/push", "private address"],
      ["https://[::1]/push", "private address"],
      ["https://[::]/push", "private address"],
      ["https://[::ffff:127.0.0.1]/push", "private address"],
      ["https://[::ffff:a9fe:a9fe]/push", "private address"],
      ["https://[64:ff9b::10.0.0.1]/push", "private address"],
      ["https://[2002:c0a8:101::1]/push", "private address"],
      ["https://[fd00::1]/push", "private address"],
      ["https://[fe80::1]/push", "private address"],
      ["https://localhost/push", "localhost"],
      ["https://LOCALHOST./push", "localhost"],
      ["https://api.localhost/push", "localhost"],
    ];
    for (const [endpoint, why] of endpoints) {
      expect(await p.send(msg(JSON.stringify({ endpoint, keys })))).toEqual({
        kind: "invalid-token",
        reason: `endpoint not allowed (${why})`,
      });
    }
    expect(fake.deliveries.filter((d) => d.id === s.id)).toEqual([]);
    for (const ok of [
      "https://fcm.googleapis.com/fcm/send/abc",
      "https://updates.push.services.mozilla.com/wpush/v2/x",
      "https://8.8.8.8/x",
      "https://[2a00:1450:4001::1]/x",
      "https://172.32.0.1/x",
    ]) {
      expect(endpointNotAllowed(ok)).toBeNull();
    }
    p.close();
  });

  test("a name is resolved when connecting, and refused when any of its addresses is private (no DNS rebinding)", async () => {
    const s = fake.subscribe();
    const keys = JSON.parse(s.token).keys;
    const port = new URL(s.endpoint).port;
    const asked: string[] = [];
    const answers: Record<string, string[]> = {
      "push.rebind.test": ["127.0.0.1"],
      "mixed.push.test": ["8.8.8.8", "10.1.2.3"],
      "v6.push.test": ["::ffff:192.168.0.9"],
    };
    const lookup = publicOnlyLookup((host, cb) => {
      asked.push(host);
      cb(
        null,
        (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
      );
    });
    const p = provider({ allowPrivateEndpoints: false, lookup });
    expect(await p.send(msg(JSON.stringify({ endpoint: `https://push.rebind.test:${port}/${s.id}`, keys })))).toEqual({
      kind: "invalid-token",
      reason: "endpoint not allowed (push.rebind.test resolves to a private address (127.0.0.1))",
    });
    expect(await p.send(msg(JSON.stringify({ endpoint: `https://mixed.push.test:${port}/${s.id}`, keys })))).toEqual({
      kind: "invalid-token",
      reason: "endpoint not allowed (mixed.push.test resolves to a private address (10.1.2.3))",
    });
    expect(await p.send(msg(JSON.stringify({ endpoint: `https://v6.push.test:${port}/${s.id}`, keys })))).toEqual({
      kind: "invalid-token",
      reason: "endpoint not allowed (v6.push.test resolves to a private address (::ffff:192.168.0.9))",
    });
    // A name without addresses is a network failure (retried), not a refusal.
    expect((await p.send(msg(JSON.stringify({ endpoint: `https://gone.push.test:${port}/${s.id}`, keys })))).kind).toBe("retry");
    expect(asked).toEqual(["push.rebind.test", "mixed.push.test", "v6.push.test", "gone.push.test"]);
    expect(fake.deliveries.filter((d) => d.id === s.id)).toEqual([]);
    p.close();
  });

  test("a name is looked up for every new connection: public at first, refused once it resolves privately", async () => {
    // A push service over TLS at the same port on 127.0.0.2 (public for this test) and 127.0.0.1 (private).
    const pki = makeApnsTestPki();
    const { pub, priv } = await tlsPair(pki.server);
    const asked: string[] = [];
    const answers = ["127.0.0.2", "127.0.0.1"];
    const lookup = publicOnlyLookup(
      (host, cb) => cb(null, [{ address: answers[Math.min(asked.push(host), answers.length) - 1]!, family: 4 }]),
      (bytes) => !(bytes.length === 4 && bytes.join(".") === "127.0.0.2") && isPrivateAddress(bytes),
    );
    const p = provider({ allowPrivateEndpoints: false, lookup });
    const s = fake.subscribe(`https://push.rebind.test:${pub.port}`);
    // The servers' certificate is for 127.0.0.1; what is tested here is where connections go, not the chain.
    const rejectUnauthorized = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      expect(await p.send(msg(s.token))).toEqual({ kind: "sent" });
      // Kept alive: the second message goes over the connection to the address checked, without a lookup; the
      // service closes that connection after answering it.
      pub.closeAfterNext = true;
      expect(await p.send(msg(s.token))).toEqual({ kind: "sent" });
      expect([asked.length, pub.connections, pub.requests]).toEqual([1, 1, 2]);
      // A new connection is needed: looked up again, the name now resolves to loopback and is refused.
      expect(await p.send(msg(s.token))).toEqual({
        kind: "invalid-token",
        reason: "endpoint not allowed (push.rebind.test resolves to a private address (127.0.0.1))",
      });
      expect(asked).toEqual(["push.rebind.test", "push.rebind.test"]);
      expect([pub.connections, pub.requests, priv.connections, priv.requests]).toEqual([1, 2, 0, 0]);
    } finally {
      if (rejectUnauthorized === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = rejectUnauthorized;
      p.close();
      pub.stop();
      priv.stop();
    }
  });

  test("never has more than `concurrency` requests in flight", async () => {
    const p = provider({ concurrency: 6 });
    const subs = Array.from({ length: 10 }, () => fake.subscribe());
    fake.peak = 0;
    fake.delayMs = 15;
    try {
      const results = await Promise.all(Array.from({ length: 90 }, (_, i) => p.send(msg(subs[i % 10]!.token))));
      expect(results.every((r) => r.kind === "sent")).toBe(true);
      expect(fake.peak).toBe(6);
    } finally {
      fake.delayMs = 0;
      p.close();
    }
  });

  test("a timeout is a retry, and a closed provider answers retry", async () => {
    const p = provider({ timeoutMs: 200 });
    const s = fake.subscribe();
    fake.respond(s.id, "hang");
    const started = performance.now();
    expect(await p.send(msg(s.token))).toEqual({ kind: "retry", reason: "web push: timed out" });
    expect(performance.now() - started).toBeLessThan(2000);
    p.close();
    expect((await p.send(msg(fake.subscribe().token))).kind).toBe("retry");
  });

  test("1000 sends", async () => {
    const p = provider();
    const subs = Array.from({ length: 50 }, () => fake.subscribe());
    const before = fake.deliveries.length;
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => p.send(msg(subs[i % 50]!.token, { i }))));
    const ms = performance.now() - started;
    expect(results.filter((r) => r.kind === "sent").length).toBe(1000);
    expect(fake.deliveries.length - before).toBe(1000);
    console.log(
      `Web Push: 1000 sends in ${ms.toFixed(0)} ms (${Math.round(1000 / (ms / 1000))} deliveries/s, concurrency 100, fake decrypting)`,
    );
    p.close();
  });
});

/** A push service answering 201 over TLS on `host`, counting TCP connections and requests. */
interface TlsPushService {
  port: number;
  connections: number;
  requests: number;
  /** Answer the next request with Connection: close. */
  closeAfterNext: boolean;
  stop(): void;
}

async function tlsPushService(cert: { certPem: string; keyPem: string }, host: string, port: number): Promise<TlsPushService> {
  const service: TlsPushService = { port: 0, connections: 0, requests: 0, closeAfterNext: false, stop: () => {} };
  const server = https.createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    service.requests++;
    req.resume();
    req.on("end", () => {
      if (service.closeAfterNext) res.setHeader("connection", "close");
      service.closeAfterNext = false;
      res.statusCode = 201;
      res.end();
    });
  });
  server.on("connection", () => service.connections++);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  service.port = (server.address() as { port: number }).port;
  service.stop = () => {
    server.closeAllConnections();
    server.close();
  };
  return service;
}

/** Services on 127.0.0.2 and 127.0.0.1 at the same port (a few tries: the port must be free on both). */
async function tlsPair(cert: { certPem: string; keyPem: string }): Promise<{ pub: TlsPushService; priv: TlsPushService }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pub = await tlsPushService(cert, "127.0.0.2", 0);
    try {
      return { pub, priv: await tlsPushService(cert, "127.0.0.1", pub.port) };
    } catch {
      pub.stop();
    }
  }
  throw new Error("no port free on both 127.0.0.1 and 127.0.0.2");
}

describe("parseSubscription", () => {
  /** A valid subscription (the fake keeps its keys; the endpoint is never contacted). */
  const sub = () => JSON.parse(fake.subscribe("https://push.example.com").token);

  test("accepts a browser subscription and normalizes it", () => {
    const s = sub();
    const padded = { ...s, keys: { p256dh: `${s.keys.p256dh}=`, auth: `${s.keys.auth}==` } };
    expect(parseSubscription(JSON.stringify(padded))).toEqual({ endpoint: s.endpoint, keys: s.keys });
  });

  test("says what is wrong", () => {
    const s = sub();
    const with_ = (patch: Record<string, unknown>) => JSON.stringify({ ...s, ...patch });
    const keys = (patch: Record<string, unknown>) => with_({ keys: { ...s.keys, ...patch } });
    const offCurve = Buffer.alloc(65, 1);
    offCurve[0] = 4;
    const cases: [string, string][] = [
      ["{", "subscription is not valid JSON"],
      ['"x"', "subscription must be a JSON object"],
      [with_({ endpoint: undefined }), "subscription endpoint is missing"],
      [with_({ endpoint: "/push/1" }), "subscription endpoint is not an absolute URL"],
      [with_({ endpoint: `https://push.example.com/${"a".repeat(2048)}` }), "subscription endpoint is longer than 2048 characters"],
      [with_({ endpoint: "ftp://push.example.com/1" }), "subscription endpoint must be an https URL"],
      [with_({ endpoint: "https://u:p@push.example.com/1" }), "subscription endpoint must not contain credentials"],
      [with_({ keys: undefined }), "subscription keys are missing"],
      [keys({ p256dh: undefined }), "subscription keys.p256dh is missing"],
      [keys({ auth: 7 }), "subscription keys.auth is missing"],
      [
        keys({ p256dh: Buffer.alloc(33, 2).toString("base64url") }),
        "subscription keys.p256dh must be base64url of a 65-byte uncompressed P-256 public key",
      ],
      [keys({ p256dh: "not base64!" }), "subscription keys.p256dh must be base64url of a 65-byte uncompressed P-256 public key"],
      [keys({ p256dh: offCurve.toString("base64url") }), "subscription keys.p256dh is not a point on the P-256 curve"],
      [keys({ auth: Buffer.alloc(12).toString("base64url") }), "subscription keys.auth must be base64url of 16 bytes"],
    ];
    for (const [text, message] of cases) expect(() => parseSubscription(text)).toThrow(message);
  });
});

describe("VAPID keys", () => {
  test("generated keys validate; malformed or mismatched keys say why", () => {
    const k = generateVapidKeys();
    expect(() => validateVapidKeys(k.publicKey, k.privateKey)).not.toThrow();
    const other = generateVapidKeys();
    const cases: [string, string, string][] = [
      ["", k.privateKey, "VAPID public key is missing"],
      [k.publicKey, "", "VAPID private key is missing"],
      [`${k.publicKey}=`, k.privateKey, "VAPID public key must be base64url without padding"],
      [k.publicKey, "a+b/", "VAPID private key must be base64url without padding"],
      [k.privateKey, k.privateKey, "VAPID public key must be base64url of a 65-byte uncompressed P-256 public key"],
      [k.publicKey, k.publicKey, "VAPID private key must be base64url of 32 bytes"],
      [k.publicKey, Buffer.alloc(32).toString("base64url"), "VAPID private key is not a valid P-256 private key"],
      [k.publicKey, other.privateKey, "VAPID private key does not match the public key"],
    ];
    for (const [pub, priv, message] of cases) expect(() => validateVapidKeys(pub, priv)).toThrow(message);
    expect(() =>
      createWebPushProvider({ vapidPublicKey: k.publicKey, vapidPrivateKey: k.privateKey, subject: "http://example.com" }),
    ).toThrow("VAPID subject must be a mailto: or https: URL");
  });
});
