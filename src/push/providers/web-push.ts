// Web Push (RFC 8030/8291/8292) through the `web-push` library's request builder: the payload encrypted per
// subscription (aes128gcm), a VAPID JWT, and our own outbound request (timeouts, no redirects, capped reads).
// Subscription endpoints come from clients, so unless told otherwise only https endpoints whose every address is
// public are contacted (checked when connecting).
// Also the VAPID key helpers and the subscription parser the token-registration endpoint uses.

import { createECDH, createPublicKey } from "node:crypto";
import type WebPush from "web-push";
import type { RequestDetails } from "web-push";
import { onFirstUse } from "../../on-first-use.ts";
import { outboundRequest } from "../../net/outbound-request.ts";
import { hostNotAllowed, type publicOnlyLookup } from "../../net/public-address.ts";
import type { DeliveryResult, PushMessage, PushProvider } from "../provider.ts";
import { parseJsonObject } from "./json-object.ts";
import { boundedSend, describeFailure, retryAfterMs, semaphore } from "./http-util.ts";

const webpush = onFirstUse(() => require("web-push") as typeof WebPush);

export interface WebPushConfig {
  vapidPublicKey: string;
  vapidPrivateKey: string;
  /** The VAPID contact: a mailto: or https: URL. */
  subject: string;
  /** Contact http:// and private/loopback endpoints (tests only). */
  allowPrivateEndpoints?: boolean;
  /** How long the push service keeps an undelivered message, default 4 weeks (the library's default). */
  ttlSeconds?: number;
  /** Per-request timeout in ms, default 10 s. */
  timeoutMs?: number;
  /** Most requests in flight at once, default 100. */
  concurrency?: number;
  /** The DNS lookup that admits only public addresses (tests give one with a fixed resolver). */
  lookup?: ReturnType<typeof publicOnlyLookup>;
}

/** A browser PushSubscription as JSON (`expirationTime` is ignored). */
export interface Subscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

const DEFAULT_TTL_S = 28 * 24 * 3600;
/** Lifetime of a VAPID JWT (RFC 8292 allows up to 24 hours). */
const VAPID_LIFETIME_S = 12 * 3600;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_CONCURRENCY = 100;
const MAX_ENDPOINT = 2048;
/** RFC 8030 push services must accept 4096 bytes of encrypted body; more is refused (413) by the big ones. */
const MAX_BODY_SENT = 4096;
/** Answers of push services are read up to this size (only for the failure reason). */
const MAX_BODY_READ = 4096;

const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const decode = (s: string) => Buffer.from(s.replace(/=+$/, ""), "base64url");

/** Throws unless `s` is base64url of a 65-byte uncompressed point on P-256. */
function checkP256Point(s: string, what: string): void {
  const bytes = B64URL.test(s) ? decode(s) : null;
  if (bytes?.length !== 65 || bytes[0] !== 4) throw new Error(`${what} must be base64url of a 65-byte uncompressed P-256 public key`);
  try {
    createPublicKey({
      key: { kty: "EC", crv: "P-256", x: bytes.subarray(1, 33).toString("base64url"), y: bytes.subarray(33).toString("base64url") },
      format: "jwk",
    });
  } catch {
    throw new Error(`${what} is not a point on the P-256 curve`);
  }
}

/** Parse and check a subscription JSON (the device token of the web platform); throws an Error with a one-line message. */
export function parseSubscription(text: string): Subscription {
  if (typeof text !== "string" || text.length > 8192) throw new Error("subscription must be a JSON text of at most 8192 characters");
  const o = parseJsonObject(text, "subscription") as { endpoint?: unknown; keys?: unknown };
  if (typeof o.endpoint !== "string" || o.endpoint === "") throw new Error("subscription endpoint is missing");
  if (o.endpoint.length > MAX_ENDPOINT) throw new Error(`subscription endpoint is longer than ${MAX_ENDPOINT} characters`);
  let url: URL;
  try {
    url = new URL(o.endpoint);
  } catch {
    throw new Error("subscription endpoint is not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("subscription endpoint must be an https URL");
  if (url.username || url.password) throw new Error("subscription endpoint must not contain credentials");
  if (typeof o.keys !== "object" || o.keys === null) throw new Error("subscription keys are missing");
  const keys = o.keys as { p256dh?: unknown; auth?: unknown };
  if (typeof keys.p256dh !== "string") throw new Error("subscription keys.p256dh is missing");
  if (typeof keys.auth !== "string") throw new Error("subscription keys.auth is missing");
  checkP256Point(keys.p256dh, "subscription keys.p256dh");
  if (!B64URL.test(keys.auth) || decode(keys.auth).length !== 16) throw new Error("subscription keys.auth must be base64url of 16 bytes");
  return { endpoint: url.href, keys: { p256dh: keys.p256dh.replace(/=+$/, ""), auth: keys.auth.replace(/=+$/, "") } };
}

/** A new VAPID key pair (base64url, public 65 bytes, private 32 bytes). */
export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = webpush().generateVAPIDKeys();
  return { publicKey, privateKey };
}

/** Throws an Error with a one-line message unless the pair is a usable VAPID key pair. */
export function validateVapidKeys(publicKey: string, privateKey: string): void {
  if (typeof publicKey !== "string" || publicKey === "") throw new Error("VAPID public key is missing");
  if (typeof privateKey !== "string" || privateKey === "") throw new Error("VAPID private key is missing");
  if (!/^[A-Za-z0-9_-]+$/.test(publicKey)) throw new Error("VAPID public key must be base64url without padding");
  if (!/^[A-Za-z0-9_-]+$/.test(privateKey)) throw new Error("VAPID private key must be base64url without padding");
  checkP256Point(publicKey, "VAPID public key");
  const priv = decode(privateKey);
  if (priv.length !== 32) throw new Error("VAPID private key must be base64url of 32 bytes");
  const ecdh = createECDH("prime256v1");
  try {
    ecdh.setPrivateKey(priv);
  } catch {
    throw new Error("VAPID private key is not a valid P-256 private key");
  }
  if (!ecdh.getPublicKey().equals(decode(publicKey))) throw new Error("VAPID private key does not match the public key");
}

/** Throws unless the VAPID subject is a mailto: or https: URL. */
export function validateVapidSubject(subject: string): void {
  let url: URL;
  try {
    url = new URL(subject);
  } catch {
    throw new Error("VAPID subject must be a mailto: or https: URL");
  }
  if (url.protocol !== "mailto:" && url.protocol !== "https:") throw new Error("VAPID subject must be a mailto: or https: URL");
}

/**
 * Why an endpoint must not be contacted, judged from the URL alone, or null when it may: not https, `localhost`,
 * or an IP literal that is not public unicast. Names are resolved when connecting (outboundRequest), and a name
 * with any private address is refused then.
 */
export function endpointNotAllowed(endpoint: string): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "https:") return "not https";
  return hostNotAllowed(url.hostname);
}

/** The Topic header: the message id cut to at most 32 URL-safe characters (a resent delivery replaces the first). */
const topicOf = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 32) || undefined;

export function createWebPushProvider(config: WebPushConfig): PushProvider {
  validateVapidKeys(config.vapidPublicKey, config.vapidPrivateKey);
  validateVapidSubject(config.subject);
  // One VAPID JWT per push service origin, valid 12 hours and renewed with an hour to spare (the library would
  // sign a new one for every message).
  const vapidByAudience = new Map<string, { authorization: string; renewAt: number }>();
  const vapidAuthorization = (endpoint: string): string => {
    const audience = new URL(endpoint).origin;
    const now = Date.now();
    const cached = vapidByAudience.get(audience);
    if (cached && cached.renewAt > now) return cached.authorization;
    const expiration = Math.floor(now / 1000) + VAPID_LIFETIME_S;
    const headers = webpush().getVapidHeaders(
      audience,
      config.subject,
      config.vapidPublicKey,
      config.vapidPrivateKey,
      "aes128gcm",
      expiration,
    );
    if (vapidByAudience.size >= 1000) vapidByAudience.clear();
    vapidByAudience.set(audience, { authorization: String(headers.Authorization), renewAt: now + (VAPID_LIFETIME_S - 3600) * 1000 });
    return String(headers.Authorization);
  };
  const ttl = config.ttlSeconds ?? DEFAULT_TTL_S;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const slots = semaphore(Math.max(1, config.concurrency ?? DEFAULT_CONCURRENCY));
  const closing = new AbortController();

  async function deliver(message: PushMessage): Promise<DeliveryResult> {
    let sub: Subscription;
    try {
      sub = parseSubscription(message.token);
    } catch (e) {
      return { kind: "invalid-token", reason: (e as Error).message };
    }
    const refusal = config.allowPrivateEndpoints ? null : endpointNotAllowed(sub.endpoint);
    if (refusal) return { kind: "invalid-token", reason: `endpoint not allowed (${refusal})` };
    let details: RequestDetails;
    try {
      details = webpush().generateRequestDetails(sub, JSON.stringify(message.payload), {
        // No vapidDetails: the library signs nothing (webpush.setVapidDetails is never called); ours is cached.
        headers: { Authorization: vapidAuthorization(sub.endpoint) },
        contentEncoding: "aes128gcm",
        TTL: ttl,
        topic: topicOf(message.id),
      });
    } catch (e) {
      return { kind: "failed", reason: `web push request: ${describeFailure(e)}` };
    }
    if (details.body && details.body.length > MAX_BODY_SENT)
      return { kind: "failed", reason: `payload too large (${details.body.length} bytes encrypted, at most ${MAX_BODY_SENT})` };
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(details.headers)) if (k.toLowerCase() !== "content-length") headers[k] = String(v);
    let res;
    try {
      res = await outboundRequest(details.endpoint, {
        method: "POST",
        headers,
        body: details.body ?? undefined,
        timeoutMs,
        signal: closing.signal,
        maxBody: MAX_BODY_READ,
        allowPrivate: config.allowPrivateEndpoints === true,
        lookup: config.lookup,
      });
    } catch (e) {
      if ((e as { code?: string }).code === "EADDRNOTPUBLIC")
        return { kind: "invalid-token", reason: `endpoint not allowed (${(e as Error).message})` };
      return { kind: "retry", reason: `web push: ${describeFailure(e)}` };
    }
    const status = res.status;
    if (status === 200 || status === 201 || status === 202) return { kind: "sent" };
    const reason = `web push ${status}${res.body ? `: ${res.body}` : ""}`;
    if (status === 404 || status === 410) return { kind: "invalid-token", reason };
    if (status === 429 || status >= 500) {
      const header = res.headers["retry-after"];
      const afterMs = retryAfterMs(typeof header === "string" ? header : null);
      return afterMs === undefined ? { kind: "retry", reason } : { kind: "retry", reason, afterMs };
    }
    if (status >= 300 && status < 400) return { kind: "failed", reason: `web push ${status}: redirects are not followed` };
    return { kind: "failed", reason };
  }

  return {
    platform: "web",
    send: boundedSend("web push", slots, closing.signal, deliver),
    close() {
      closing.abort();
    },
  };
}
