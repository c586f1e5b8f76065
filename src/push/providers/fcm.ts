// Firebase Cloud Messaging over the HTTP v1 API: a service-account JWT (RS256) exchanged for an OAuth2 access
// token (cached until 5 minutes before it expires, one fetch at a time), one POST per device token
// (`/v1/projects/<id>/messages:send`), a bounded number of requests in flight, and every answer classified as a
// DeliveryResult (dead token, retry with Retry-After, permanent failure).

import { createPrivateKey, createSign, type KeyObject } from "node:crypto";
import type { DeliveryResult, PushMessage, PushProvider } from "../provider.ts";
import { parseJsonObject } from "./json-object.ts";
import { boundedSend, describeFailure, readCapped, requestSignals, retryAfterMs, semaphore } from "./http-util.ts";

export interface FcmConfig {
  /** The service account JSON text (project_id, client_email, private_key, token_uri). */
  serviceAccount: string;
  /** The API base, default (also when empty) https://fcm.googleapis.com; tests point it at a loopback fake. */
  url?: string;
  /** Per-request timeout in ms (token fetch and send), default 10 s. */
  timeoutMs?: number;
  /** Most requests in flight at once, default 100. */
  concurrency?: number;
  /** Milliseconds since the epoch; injectable for the token cache tests. */
  clock?: () => number;
}

const SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
const DEFAULT_URL = "https://fcm.googleapis.com";
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_CONCURRENCY = 100;
/** The cached token is dropped this long before Google says it expires. */
const TOKEN_MARGIN_S = 300;
/** After the token endpoint refused the credentials, sends fail without asking again for this long. */
const TOKEN_REFUSAL_MS = 10_000;
/** Error bodies are read up to this size. */
const MAX_BODY = 64 * 1024;

interface ServiceAccount {
  projectId: string;
  clientEmail: string;
  tokenUri: string;
  privateKey: KeyObject;
}

/** Parse and check a service account JSON; throws an Error with a one-line message saying what is wrong. */
function parseServiceAccount(json: string): ServiceAccount {
  const o = parseJsonObject(json, "FCM service account");
  const fields = ["project_id", "client_email", "private_key", "token_uri"];
  const missing = fields.filter((f) => typeof o[f] !== "string" || (o[f] as string).trim() === "");
  if (missing.length > 0) throw new Error(`FCM service account is missing ${missing.join(", ")}`);
  if (o.type !== undefined && o.type !== "service_account")
    throw new Error(`FCM service account has type "${String(o.type)}", expected "service_account"`);
  const projectId = o.project_id as string;
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(projectId)) throw new Error("FCM service account project_id is not a valid project id");
  const clientEmail = o.client_email as string;
  if (!/^[^@\s]+@[^@\s]+$/.test(clientEmail)) throw new Error("FCM service account client_email is not an email address");
  let tokenUri: URL;
  try {
    tokenUri = new URL(o.token_uri as string);
  } catch {
    throw new Error("FCM service account token_uri is not an absolute URL");
  }
  if (tokenUri.protocol !== "https:" && tokenUri.protocol !== "http:")
    throw new Error("FCM service account token_uri must be an https URL");
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: o.private_key as string, format: "pem" });
  } catch {
    throw new Error("FCM service account private_key is not a parseable PEM private key");
  }
  if (privateKey.asymmetricKeyType !== "rsa") {
    throw new Error(`FCM service account private_key is not an RSA key (it is ${privateKey.asymmetricKeyType ?? "unknown"})`);
  }
  return { projectId, clientEmail, tokenUri: tokenUri.href, privateKey };
}

/** Check a service account JSON up front (settings endpoint → 400); throws an Error with a clear one-line message. */
export function validateFcmServiceAccount(json: string): { projectId: string; clientEmail: string } {
  const sa = parseServiceAccount(json);
  return { projectId: sa.projectId, clientEmail: sa.clientEmail };
}

const b64url = (s: string | Buffer) => Buffer.from(s).toString("base64url");

/** An outcome that ends the send early (the token could not be obtained). */
class TokenError extends Error {
  constructor(readonly result: DeliveryResult) {
    super("FCM access token unavailable");
  }
}

interface FcmErrorBody {
  status?: string;
  message?: string;
  errorCodes: string[];
  tokenField: boolean;
}

/** The parts of an FCM v1 error body the classification needs (tolerates anything). */
function parseFcmError(text: string): FcmErrorBody {
  const out: FcmErrorBody = { errorCodes: [], tokenField: false };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return out;
  }
  const err = (data as { error?: unknown } | null)?.error;
  if (typeof err !== "object" || err === null) return out;
  const e = err as Record<string, unknown>;
  if (typeof e.status === "string") out.status = e.status;
  if (typeof e.message === "string") out.message = e.message.slice(0, 300);
  for (const d of Array.isArray(e.details) ? e.details : []) {
    if (typeof d !== "object" || d === null) continue;
    const detail = d as Record<string, unknown>;
    if (typeof detail.errorCode === "string") out.errorCodes.push(detail.errorCode);
    for (const v of Array.isArray(detail.fieldViolations) ? detail.fieldViolations : []) {
      const field = (v as { field?: unknown } | null)?.field;
      if (field === "message.token" || field === "token") out.tokenField = true;
    }
  }
  return out;
}

/** Classify a non-2xx answer of messages:send. */
function classify(status: number, body: FcmErrorBody, retryAfter: number | undefined): DeliveryResult {
  const code = body.errorCodes[0] ?? body.status ?? `HTTP ${status}`;
  const reason = `FCM ${status} ${code}${body.message ? `: ${body.message}` : ""}`;
  if (body.errorCodes.includes("UNREGISTERED")) return { kind: "invalid-token", reason };
  const namesToken = body.tokenField || /registration token/i.test(body.message ?? "");
  if (status === 400 && (body.errorCodes.includes("INVALID_ARGUMENT") || body.status === "INVALID_ARGUMENT") && namesToken) {
    return { kind: "invalid-token", reason };
  }
  if (status === 429 || status >= 500)
    return retryAfter === undefined ? { kind: "retry", reason } : { kind: "retry", reason, afterMs: retryAfter };
  return { kind: "failed", reason };
}

/** A flat map of strings, or an error message. */
function dataOf(payload: Record<string, unknown>): Record<string, string> | string {
  for (const [k, v] of Object.entries(payload)) if (typeof v !== "string") return `payload value "${k}" is not a string`;
  return payload as Record<string, string>;
}

export function createFcmProvider(config: FcmConfig): PushProvider {
  const sa = parseServiceAccount(config.serviceAccount);
  const base = (config.url || DEFAULT_URL).replace(/\/+$/, "");
  const sendUrl = `${base}/v1/projects/${encodeURIComponent(sa.projectId)}/messages:send`;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = config.clock ?? Date.now;
  const slots = semaphore(Math.max(1, config.concurrency ?? DEFAULT_CONCURRENCY));
  const closing = new AbortController();

  let cached: { token: string; until: number } | null = null;
  let pending: Promise<string> | null = null;
  let refused: { result: DeliveryResult; until: number } | null = null;

  const signals = requestSignals();

  function assertion(): string {
    const iat = Math.floor(clock() / 1000);
    const header = b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
    const claims = b64url(JSON.stringify({ iss: sa.clientEmail, scope: SCOPE, aud: sa.tokenUri, iat, exp: iat + 3600 }));
    const signature = createSign("RSA-SHA256").update(`${header}.${claims}`).sign(sa.privateKey).toString("base64url");
    return `${header}.${claims}.${signature}`;
  }

  async function fetchToken(): Promise<string> {
    const request = signals.start(timeoutMs);
    try {
      return await fetchTokenWith(request.signal);
    } finally {
      request.done();
    }
  }

  async function fetchTokenWith(signal: AbortSignal): Promise<string> {
    const started = clock();
    let res: Response;
    try {
      res = await fetch(sa.tokenUri, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `grant_type=${encodeURIComponent("urn:ietf:params:oauth:grant-type:jwt-bearer")}&assertion=${assertion()}`,
        signal,
        redirect: "manual",
      });
    } catch (e) {
      throw new TokenError({ kind: "retry", reason: `FCM token endpoint: ${describeFailure(e)}` });
    }
    const text = await readCapped(res, MAX_BODY).catch(() => "");
    if (res.status === 429 || res.status >= 500) {
      const afterMs = retryAfterMs(res.headers.get("retry-after"));
      const reason = `FCM token endpoint answered ${res.status}`;
      throw new TokenError(afterMs === undefined ? { kind: "retry", reason } : { kind: "retry", reason, afterMs });
    }
    let data: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      data = JSON.parse(text);
    } catch {
      // classified below
    }
    if (res.status !== 200 || typeof data.access_token !== "string" || data.access_token === "") {
      const detail = [data.error, data.error_description].filter((x) => typeof x === "string").join(": ");
      const result: DeliveryResult = {
        kind: "failed",
        reason: `FCM token endpoint refused the service account (${res.status}${detail ? ` ${detail}` : ""})`,
      };
      refused = { result, until: clock() + TOKEN_REFUSAL_MS };
      throw new TokenError(result);
    }
    const expiresIn = typeof data.expires_in === "number" && data.expires_in > 0 ? data.expires_in : 3600;
    const lifetime = expiresIn > 2 * TOKEN_MARGIN_S ? expiresIn - TOKEN_MARGIN_S : expiresIn / 2;
    cached = { token: data.access_token, until: started + lifetime * 1000 };
    refused = null;
    return data.access_token;
  }

  /** The cached access token, or the one fetch under way, or a new fetch. */
  function accessToken(): Promise<string> {
    if (cached && clock() < cached.until) return Promise.resolve(cached.token);
    if (refused && clock() < refused.until) return Promise.reject(new TokenError(refused.result));
    cached = null;
    pending ??= fetchToken().finally(() => {
      pending = null;
    });
    return pending;
  }

  async function deliver(message: PushMessage): Promise<DeliveryResult> {
    const data = dataOf(message.payload);
    if (typeof data === "string") return { kind: "failed", reason: data };
    let token: string;
    try {
      token = await accessToken();
    } catch (e) {
      return e instanceof TokenError ? e.result : { kind: "retry", reason: `FCM token: ${describeFailure(e)}` };
    }
    // Fetching a token took the time the row's lease had left for a send: give it back unsent.
    if (message.notAfter !== undefined && Date.now() > message.notAfter) return { kind: "not-sent" };
    const body = JSON.stringify({ message: { token: message.token, data, android: { collapse_key: message.id, priority: "high" } } });
    const request = signals.start(timeoutMs);
    try {
      return await sendWith(token, body, request.signal);
    } finally {
      request.done();
    }
  }

  async function sendWith(token: string, body: string, signal: AbortSignal): Promise<DeliveryResult> {
    let res: Response;
    try {
      res = await fetch(sendUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json; charset=utf-8" },
        body,
        signal,
        redirect: "manual",
      });
    } catch (e) {
      return { kind: "retry", reason: `FCM send: ${describeFailure(e)}` };
    }
    if (res.status >= 200 && res.status < 300) {
      await res.body?.cancel().catch(() => {});
      return { kind: "sent" };
    }
    const text = await readCapped(res, MAX_BODY).catch(() => "");
    const err = parseFcmError(text);
    if (res.status === 401 && !err.errorCodes.includes("THIRD_PARTY_AUTH_ERROR")) {
      if (cached?.token === token) cached = null; // a newer token fetched meanwhile stays
      return { kind: "retry", reason: `FCM 401 ${err.status ?? "UNAUTHENTICATED"}: access token rejected` };
    }
    return classify(res.status, err, retryAfterMs(res.headers.get("retry-after")));
  }

  return {
    platform: "android",
    send: boundedSend("FCM", slots, closing.signal, deliver),
    close() {
      closing.abort();
      signals.close();
    },
  };
}
