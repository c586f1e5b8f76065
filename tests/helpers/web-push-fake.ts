// A fake Web Push service on loopback: browser-like subscriptions (P-256 ECDH key pair and 16-byte auth secret)
// whose endpoint it serves; each push is checked (VAPID ES256 JWT against the VAPID public key, aud = origin, exp,
// sub), decrypted (aes128gcm via http_ece with the subscription's private key) and recorded with its Topic;
// chosen subscriptions answer 404/410/429/413/500 or hang on demand.

import { createECDH, createPublicKey, randomBytes, verify, type ECDH } from "node:crypto";
import { createRequire } from "node:module";

interface Ece {
  decrypt(buffer: Buffer, params: { version: "aes128gcm"; privateKey: ECDH; authSecret: string }): Buffer;
}
const ece = createRequire(import.meta.url)("http_ece") as Ece;

export interface WebPushDelivery {
  /** The subscription's id (last path segment). */
  id: string;
  payload: unknown;
  topic: string | null;
  ttl: string | null;
  urgency: string | null;
  /** VAPID JWT claims. */
  claims: { aud: string; exp: number; sub: string };
}

export type WebPushBehaviour = { status: 404 | 410 | 413 | 400 | 403 | 429 | 500 | 503 | 301; retryAfter?: string } | "hang";

export interface TestSubscription {
  id: string;
  /** The subscription JSON text (the device token). */
  token: string;
  endpoint: string;
}

export interface WebPushFake {
  url: string;
  deliveries: WebPushDelivery[];
  /** Requests refused for a bad VAPID signature, claims, encoding or body, with why. */
  rejections: string[];
  peak: number;
  delayMs: number;
  /** A new browser-like subscription served by this fake (or pointing at `endpointBase` if given). */
  subscribe(endpointBase?: string): TestSubscription;
  respond(id: string, behaviour: WebPushBehaviour | undefined): void;
  stop(): void;
}

interface WebPushFakeOptions {
  /** Called for every accepted delivery instead of recording it in `deliveries` (benchmarks). */
  onDelivery?: (id: string, topic: string | null) => void;
  /**
   * Subscriptions share one key pair and any hex id is a subscription (benchmarks: a hundred thousand
   * subscriptions without a key pair each; every message is still encrypted and decrypted on its own).
   */
  sharedKeys?: boolean;
}

/** Start a fake push service on 127.0.0.1 that accepts pushes signed with `vapidPublicKey`. */
export function startWebPushFake(vapidPublicKey: string, opts: WebPushFakeOptions = {}): WebPushFake {
  const subs = new Map<string, { ecdh: ECDH; auth: string }>();
  const shared = opts.sharedKeys
    ? (() => {
        const ecdh = createECDH("prime256v1");
        ecdh.generateKeys();
        return { ecdh, auth: randomBytes(16).toString("base64url") };
      })()
    : null;
  const behaviours = new Map<string, WebPushBehaviour>();
  const vapidKey = (() => {
    const raw = Buffer.from(vapidPublicKey, "base64url");
    return createPublicKey({
      key: { kty: "EC", crv: "P-256", x: raw.subarray(1, 33).toString("base64url"), y: raw.subarray(33).toString("base64url") },
      format: "jwk",
    });
  })();
  let inFlight = 0;

  const fake: WebPushFake = {
    url: "",
    deliveries: [],
    rejections: [],
    peak: 0,
    delayMs: 0,
    subscribe(endpointBase) {
      const keys =
        shared ??
        (() => {
          const ecdh = createECDH("prime256v1");
          ecdh.generateKeys();
          return { ecdh, auth: randomBytes(16).toString("base64url") };
        })();
      const { ecdh, auth } = keys;
      const id = randomBytes(12).toString("hex");
      if (!shared) subs.set(id, keys);
      const endpoint = `${endpointBase ?? fake.url}/push/${id}`;
      return {
        id,
        endpoint,
        token: JSON.stringify({ endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey("base64url"), auth } }),
      };
    },
    respond: (id, b) => void (b === undefined ? behaviours.delete(id) : behaviours.set(id, b)),
    stop: () => void server.stop(true),
  };

  const refuse = (status: number, why: string) => {
    fake.rejections.push(why);
    return new Response(why, { status });
  };

  async function push(req: Request, id: string): Promise<Response> {
    const sub = subs.get(id) ?? shared;
    if (!sub) return new Response("no such subscription", { status: 404 });
    const auth = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(req.headers.get("authorization") ?? "");
    if (!auth) return refuse(401, "missing vapid authorization");
    if (auth[2] !== vapidPublicKey) return refuse(403, "VAPID key does not match the subscription's");
    const [h, c, s] = auth[1]!.split(".") as [string, string, string];
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    if (header.alg !== "ES256") return refuse(401, `alg ${header.alg}`);
    if (!verify("sha256", Buffer.from(`${h}.${c}`), { key: vapidKey, dsaEncoding: "ieee-p1363" }, Buffer.from(s ?? "", "base64url")))
      return refuse(401, "bad VAPID signature");
    const claims = JSON.parse(Buffer.from(c, "base64url").toString());
    const now = Math.floor(Date.now() / 1000);
    if (claims.aud !== new URL(req.url).origin) return refuse(401, `aud ${claims.aud}`);
    if (typeof claims.exp !== "number" || claims.exp <= now || claims.exp > now + 24 * 3600) return refuse(401, `exp ${claims.exp}`);
    if (typeof claims.sub !== "string" || !/^(mailto:|https:)/.test(claims.sub)) return refuse(401, `sub ${claims.sub}`);
    if (req.headers.get("content-encoding") !== "aes128gcm") return refuse(415, `content-encoding ${req.headers.get("content-encoding")}`);
    if (!req.headers.get("ttl")) return refuse(400, "missing TTL");
    const body = Buffer.from(await req.arrayBuffer());
    if (body.length > 4096) return refuse(413, "payload too large");
    let payload: unknown;
    try {
      payload = JSON.parse(ece.decrypt(body, { version: "aes128gcm", privateKey: sub.ecdh, authSecret: sub.auth }).toString("utf8"));
    } catch (e) {
      return refuse(400, `cannot decrypt: ${(e as Error).message}`);
    }
    const b = behaviours.get(id);
    if (fake.delayMs > 0) await Bun.sleep(fake.delayMs);
    if (b === "hang") return new Promise<Response>(() => {});
    if (b) {
      const headers: Record<string, string> = b.retryAfter === undefined ? {} : { "retry-after": b.retryAfter };
      if (b.status === 301) headers.location = `${fake.url}/push/${id}`;
      return new Response(`answering ${b.status}`, { status: b.status, headers });
    }
    if (opts.onDelivery) opts.onDelivery(id, req.headers.get("topic"));
    else
      fake.deliveries.push({
        id,
        payload,
        topic: req.headers.get("topic"),
        ttl: req.headers.get("ttl"),
        urgency: req.headers.get("urgency"),
        claims,
      });
    return new Response(null, { status: 201, headers: { location: `${fake.url}/message/${randomBytes(8).toString("hex")}` } });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const m = /^\/push\/([0-9a-f]+)$/.exec(new URL(req.url).pathname);
      if (req.method !== "POST" || !m) return new Response("not found", { status: 404 });
      inFlight++;
      fake.peak = Math.max(fake.peak, inFlight);
      try {
        return await push(req, m[1]!);
      } finally {
        inFlight--;
      }
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}
