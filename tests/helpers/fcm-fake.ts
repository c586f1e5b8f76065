// A fake of Firebase Cloud Messaging HTTP v1 on loopback: an OAuth2 token endpoint that verifies the service
// account's RS256 JWT, and messages:send that checks the bearer token, project id and message shape, records
// deliveries and peak concurrency, and answers chosen device tokens with FCM errors. Plus a test service account.

import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from "node:crypto";

export interface TestServiceAccount {
  /** The JSON text the provider is configured with. */
  json: string;
  projectId: string;
  clientEmail: string;
  publicKey: KeyObject;
}

/** A service account with a fresh RSA key whose token_uri points at `tokenUri`. */
export function makeServiceAccount(tokenUri: string, opts: { projectId?: string; keyType?: "rsa" | "ec" } = {}): TestServiceAccount {
  const projectId = opts.projectId ?? "burrow-test";
  const clientEmail = `burrow-push@${projectId}.iam.gserviceaccount.com`;
  const pair =
    opts.keyType === "ec" ? generateKeyPairSync("ec", { namedCurve: "P-256" }) : generateKeyPairSync("rsa", { modulusLength: 2048 });
  const privateKey = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const json = JSON.stringify({
    type: "service_account",
    project_id: projectId,
    private_key_id: randomBytes(20).toString("hex"),
    private_key: privateKey,
    client_email: clientEmail,
    client_id: "1234567890",
    token_uri: tokenUri,
  });
  return { json, projectId, clientEmail, publicKey: createPublicKey(pair.privateKey) };
}

export interface FcmDelivery {
  token: string;
  data: Record<string, string>;
  collapseKey: string;
  priority: string;
}

/** How the fake answers one device token. */
export type FcmBehaviour =
  | "unregistered" // 404 UNREGISTERED
  | "invalid-token" // 400 INVALID_ARGUMENT naming message.token
  | "invalid-payload" // 400 INVALID_ARGUMENT about the data
  | "sender-id-mismatch" // 403 SENDER_ID_MISMATCH
  | "unauthenticated" // 401: the access token is rejected
  | "hang" // never answers
  | { status: 429 | 500 | 503; retryAfter?: string };

export interface FcmFake {
  url: string;
  tokenUri: string;
  account: TestServiceAccount;
  deliveries: FcmDelivery[];
  /** Access tokens issued so far. */
  tokenRequests: number;
  /** JWT assertions or bearer tokens the fake refused, with why. */
  rejections: string[];
  /** Most messages:send requests in flight at once. */
  peak: number;
  /** Answer `token` this way from now on (until cleared with `undefined`). */
  respond(token: string, behaviour: FcmBehaviour | undefined): void;
  /** Every send waits this long before answering (to make concurrency observable). */
  delayMs: number;
  /** The token endpoint waits this long before answering. */
  tokenDelayMs: number;
  /** Lifetime of issued access tokens in seconds. */
  expiresIn: number;
  /** Forget all issued access tokens (the next sends get 401). */
  revokeTokens(): void;
  stop(): void;
}

const fcmError = (status: number, code: string, errorCode: string | null, message: string, extra: object[] = []) =>
  Response.json(
    {
      error: {
        code: status,
        message,
        status: code,
        details: [...(errorCode ? [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode }] : []), ...extra],
      },
    },
    { status },
  );

/**
 * Start the fake on 127.0.0.1; `clock` (ms) is the fake's notion of now for JWT and token expiry; `onDelivery`
 * replaces recording in `deliveries` (benchmarks).
 */
export async function startFcmFake(
  opts: { projectId?: string; clock?: () => number; onDelivery?: (token: string, collapseKey: string) => void } = {},
): Promise<FcmFake> {
  const clock = opts.clock ?? Date.now;
  const issued = new Map<string, number>(); // access token -> expiry (ms)
  const behaviours = new Map<string, FcmBehaviour>();
  let inFlight = 0;
  let account: TestServiceAccount;

  const fake: FcmFake = {
    url: "",
    tokenUri: "",
    account: undefined as unknown as TestServiceAccount,
    deliveries: [],
    tokenRequests: 0,
    rejections: [],
    peak: 0,
    delayMs: 0,
    tokenDelayMs: 0,
    expiresIn: 3600,
    respond: (token, b) => void (b === undefined ? behaviours.delete(token) : behaviours.set(token, b)),
    revokeTokens: () => issued.clear(),
    stop: () => void server.stop(true),
  };

  const reject = (why: string, status = 400) => {
    fake.rejections.push(why);
    return Response.json({ error: "invalid_grant", error_description: why }, { status });
  };

  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    if (fake.tokenDelayMs > 0) await Bun.sleep(fake.tokenDelayMs);
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return reject("unsupported grant_type");
    const parts = (form.get("assertion") ?? "").split(".");
    if (parts.length !== 3) return reject("assertion is not a JWT");
    const [h, c, s] = parts as [string, string, string];
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    if (header.alg !== "RS256") return reject(`alg ${header.alg}`);
    if (!verify("RSA-SHA256", Buffer.from(`${h}.${c}`), account.publicKey, Buffer.from(s, "base64url")))
      return reject("Invalid JWT Signature.");
    const claims = JSON.parse(Buffer.from(c, "base64url").toString());
    const now = Math.floor(clock() / 1000);
    if (claims.iss !== account.clientEmail) return reject(`iss ${claims.iss}`);
    if (claims.aud !== fake.tokenUri) return reject(`aud ${claims.aud}`);
    if (claims.scope !== "https://www.googleapis.com/auth/firebase.messaging") return reject(`scope ${claims.scope}`);
    if (typeof claims.iat !== "number" || typeof claims.exp !== "number" || claims.exp - claims.iat > 3600)
      return reject("exp - iat > 3600");
    if (claims.exp <= now || claims.iat > now + 60)
      return reject("Invalid JWT: Token must be a short-lived token and in a reasonable timeframe");
    fake.tokenRequests++;
    const accessToken = `ya29.${randomBytes(24).toString("base64url")}`;
    issued.set(accessToken, clock() + fake.expiresIn * 1000);
    return Response.json({ access_token: accessToken, expires_in: fake.expiresIn, token_type: "Bearer" });
  }

  async function send(req: Request, project: string): Promise<Response> {
    const bearer = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
    const expiry = bearer === undefined ? undefined : issued.get(bearer);
    if (expiry === undefined || expiry <= clock()) {
      fake.rejections.push(bearer === undefined ? "no bearer token" : "unknown or expired access token");
      return fcmError(401, "UNAUTHENTICATED", null, "Request had invalid authentication credentials.");
    }
    if (project !== account.projectId) return fcmError(403, "PERMISSION_DENIED", null, `Permission denied on project ${project}`);
    const body = (await req.json().catch(() => null)) as { message?: Record<string, unknown> } | null;
    const m = body?.message;
    const android = m?.android as { collapse_key?: unknown; priority?: unknown } | undefined;
    const data = m?.data as Record<string, unknown> | undefined;
    const keys = m ? Object.keys(m).sort().join(",") : "";
    if (
      !m ||
      keys !== "android,data,token" ||
      typeof m.token !== "string" ||
      typeof data !== "object" ||
      data === null ||
      !Object.values(data).every((v) => typeof v === "string") ||
      typeof android?.collapse_key !== "string" ||
      android.priority !== "high"
    ) {
      return fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid JSON payload received.", [
        { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "message", description: "bad shape" }] },
      ]);
    }
    const b = behaviours.get(m.token);
    if (fake.delayMs > 0) await Bun.sleep(fake.delayMs);
    if (b === "hang") return new Promise<Response>(() => {});
    if (b === "unregistered") return fcmError(404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.");
    if (b === "invalid-token") {
      return fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "message.token", description: "The registration token is not a valid FCM registration token" }],
        },
      ]);
    }
    if (b === "invalid-payload") {
      return fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid data payload key: from", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "message.data[0].key", description: "Invalid data payload key: from" }],
        },
      ]);
    }
    if (b === "sender-id-mismatch") return fcmError(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", "SenderId mismatch");
    if (b === "unauthenticated") {
      behaviours.delete(m.token); // once: the retry after a fresh token succeeds
      return fcmError(401, "UNAUTHENTICATED", null, "Request had invalid authentication credentials.");
    }
    if (typeof b === "object") {
      const code = b.status === 429 ? "RESOURCE_EXHAUSTED" : b.status === 503 ? "UNAVAILABLE" : "INTERNAL";
      const errorCode = b.status === 429 ? "QUOTA_EXCEEDED" : b.status === 503 ? "UNAVAILABLE" : "INTERNAL";
      const res = fcmError(b.status, code, errorCode, "try later");
      if (b.retryAfter !== undefined) res.headers.set("retry-after", b.retryAfter);
      return res;
    }
    if (opts.onDelivery) opts.onDelivery(m.token, android.collapse_key);
    else
      fake.deliveries.push({
        token: m.token,
        data: data as Record<string, string>,
        collapseKey: android.collapse_key,
        priority: android.priority,
      });
    return Response.json({ name: `projects/${project}/messages/${randomBytes(8).toString("hex")}` });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === "POST" && path === "/token") return token(req);
      const m = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path);
      if (req.method !== "POST" || !m) return new Response("not found", { status: 404 });
      inFlight++;
      fake.peak = Math.max(fake.peak, inFlight);
      try {
        return await send(req, decodeURIComponent(m[1]!));
      } finally {
        inFlight--;
      }
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  fake.tokenUri = `${fake.url}/token`;
  account = makeServiceAccount(fake.tokenUri, { projectId: opts.projectId });
  fake.account = account;
  return fake;
}

/** The collapse keys each device token received, in order (one entry per delivery). */
export function collapseKeysByToken(deliveries: readonly FcmDelivery[]): Map<string, string[]> {
  const byToken = new Map<string, string[]>();
  for (const d of deliveries) byToken.set(d.token, [...(byToken.get(d.token) ?? []), d.collapseKey]);
  return byToken;
}
