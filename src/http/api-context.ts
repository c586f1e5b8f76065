// Resolve who and what an API request addresses: the environment and version (Accept header), the app (the
// X-Service-API-Key, or the consumer key of an OAuth 1.0 signature) and the caller (anonymous, a user signed in
// with a MAC token or a session cookie, or the app itself with its private key), giving the ApiContext every
// operation takes.

import { NotFoundError } from "elysia";
import { MAC_WINDOW_SECONDS, type MacHeader, normalizedString, parseMacHeader, timestampFault, verifyMac } from "../auth/mac.ts";
import { OAUTH1_WINDOW_SECONDS, baseStringUri, parseOAuthHeader, verifyOAuth1 } from "../auth/oauth1.ts";
import type { Session, Sessions } from "../auth/sessions.ts";
import { sessionToken } from "../auth/session-cookie.ts";
import type { ApiContext, Principal } from "../request-context.ts";
import { ApiError, unauthorized } from "../errors.ts";
import type { Burrow } from "./burrow.ts";
import type { EnvName } from "../system/environments.ts";
import { parseAcceptVersion } from "./accept.ts";
import { isFormType, readText } from "./body.ts";
import { candidatePorts, clientIp, defaultPort, fileLinkBase, rawTarget, requestOrigin } from "./origin.ts";
import { isLoopbackIp } from "../net/ip.ts";
import { checkPathParams } from "./path-params.ts";
import type { RequestInfo } from "./request-meta.ts";

const API_KEY_HEADER = "x-service-api-key";

/**
 * Who and what an API request addresses, for every API route: the path's parameters are checked (a malformed
 * percent-escape is a 400; a first segment starting with "_" is the system's, never a schema), then the context is
 * resolved from the API key or signature and, unless `cookie` is "ignore", the session cookie. It is a plain value
 * for unsigned requests (the hot path) and a Promise when a signature check or a configuration refresh has to wait.
 */
export function resolveApi(
  burrow: Burrow,
  info: RequestInfo,
  request: Request,
  params: Record<string, string | null> | undefined,
  cookie: "use" | "ignore" = "use",
): ApiContext | Promise<ApiContext> {
  // Static routes (/_push/notifications) have no params at all.
  if (params !== undefined) {
    checkPathParams(params, request);
    // Not a route at all: the edge answers 404, or 405 where another method has a route at this path.
    if (params.schema !== undefined && params.schema!.charCodeAt(0) === 95) throw new SystemPath();
  }
  const ctx = keyContext(burrow, info, request);
  if (cookie === "ignore") return ctx;
  // Without a Cookie header (nearly every request) this is one header lookup.
  const header = request.headers.get("cookie");
  return header === null ? ctx : withSessionCookie(burrow, ctx, sessionToken(header));
}

/**
 * resolveApi as the derive step of a route group (declared once per group), giving `api` to its handlers. The
 * hottest routes call resolveApi themselves, before the step (src/http/routes/objects.ts says why).
 */
export function apiContextStep(burrow: Burrow, info: RequestInfo) {
  return ({
    request,
    params,
  }: {
    request: Request;
    params?: Record<string, string | null>;
  }): { api: ApiContext | Promise<ApiContext> } => ({
    api: resolveApi(burrow, info, request, params),
  });
}

/** A first path segment starting with "_" taken by a parametric route: the system's paths are never schemas. */
export class SystemPath extends NotFoundError {}

/** The context from the API key or the signature alone, any session cookie left aside. */
function keyContext(burrow: Burrow, info: RequestInfo, request: Request): ApiContext | Promise<ApiContext> {
  const due = burrow.refreshIfDue();
  const auth = request.headers.get("authorization");
  if (auth !== null) return due ? due.then(() => signedContext(burrow, info, request, auth)) : signedContext(burrow, info, request, auth);
  return due ? due.then(() => unsignedContext(burrow, info, request)) : unsignedContext(burrow, info, request);
}

function keyEnvironment(burrow: Burrow, request: Request): EnvName {
  const key = request.headers.get(API_KEY_HEADER);
  if (key === null || key === "") throw unauthorized("missing X-Service-API-Key header with the app's public key");
  const env = burrow.keys.byPublic.get(key);
  if (env === undefined) throw unauthorized("invalid API key");
  return env;
}

const COOKIE_REFUSED = "the session cookie is not valid (logged out or expired); log in again";

/**
 * The caller of a request that carries a session cookie (legacy /login). The cookie counts only beside the API
 * key or an OAuth 1.0 signature of its environment, which the context already required (no cookie-only path);
 * it makes the caller that user, also for an OAuth 1.0 signature. A MAC signature wins over it. A cookie that
 * names no live session of this environment is 401, never an anonymous call.
 */
export function withSessionCookie(
  burrow: Burrow,
  ctx: ApiContext | Promise<ApiContext>,
  token: string | null,
): ApiContext | Promise<ApiContext> {
  if (token === null) return ctx;
  if (ctx instanceof Promise) return ctx.then((c) => withSessionCookie(burrow, c, token));
  if (ctx.principal.kind === "user") return ctx;
  const session = burrow.sessions[ctx.env].lookup(token);
  return session instanceof Promise ? session.then((s) => cookieCaller(ctx, s)) : cookieCaller(ctx, session);
}

function cookieCaller(ctx: ApiContext, session: Session | null): ApiContext {
  // A MAC session's access token travels in clear as the MAC id of every signed request: alone it proves nothing.
  if (!session?.cookie) throw unauthorized(COOKIE_REFUSED);
  return {
    ...ctx,
    principal: { kind: "user", schema: session.schema, username: session.username, family: session.family },
    auth: "cookie",
  };
}

/** The environment a request addresses, for the request log: by its API key or OAuth consumer key; "-" if none. */
export function loggedEnvironment(burrow: Burrow, request: Request): string {
  const key = request.headers.get(API_KEY_HEADER) ?? /oauth_consumer_key="([^"]*)"/.exec(request.headers.get("authorization") ?? "")?.[1];
  return (key && burrow.keys.byPublic.get(key)) || "-";
}

function unsignedContext(burrow: Burrow, info: RequestInfo, request: Request): ApiContext {
  const version = parseAcceptVersion(request.headers.get("accept"));
  return contextFor(burrow, info, request, keyEnvironment(burrow, request), version, { kind: "anonymous" });
}

/** Environment and version from the key's environment and the Accept version (docs/api/README.md#environments-and-versions). */
function contextFor(
  burrow: Burrow,
  info: RequestInfo,
  request: Request,
  keyEnv: EnvName,
  version: number | null,
  principal: Principal,
): ApiContext {
  const fileBase = () => fileLinkBase(burrow.config, request, info);
  if (keyEnv === "development") {
    if (version !== null && version !== 0)
      throw unauthorized(`the development API key cannot call API version ${version}; use the production key`);
    return {
      env: "development",
      version: 0,
      db: burrow.envDbs.development,
      schemas: burrow.catalog.development(),
      infer: burrow.config.infer,
      principal,
      fileBase,
    };
  }
  if (version === 0) throw unauthorized("the production API key cannot call version 0 (development); use the development key");
  const v = version ?? burrow.catalog.latestVersion();
  if (v === null) throw new ApiError(404, "no API version is deployed to production yet");
  const schemas = burrow.catalog.production(v);
  if (!schemas) throw new ApiError(404, `API version ${v} is not deployed`);
  return { env: "production", version: v, db: burrow.envDbs.production, schemas, infer: false, principal, fileBase };
}

/** Methods a signature may cover: the request line's, then the overriding one (docs/api/signing.md#method-override). */
function signedMethods(info: RequestInfo, request: Request): string[] {
  const original = info.original(request).method;
  return original === request.method ? [original] : [original, request.method];
}

function signedContext(burrow: Burrow, info: RequestInfo, request: Request, auth: string): ApiContext | Promise<ApiContext> {
  if (/^MAC\s/i.test(auth)) {
    const env = keyEnvironment(burrow, request);
    const header = parseMacHeader(auth);
    if (!header) throw unauthorized("malformed MAC Authorization header");
    const session = burrow.sessions[env].lookup(header.id);
    return session instanceof Promise
      ? session.then((s) => macContext(burrow, info, request, env, header, s))
      : macContext(burrow, info, request, env, header, session);
  }
  if (/^OAuth\s/i.test(auth)) return oauthContext(burrow, info, request, auth);
  if (/^Bearer\s/i.test(auth)) return bearerContext(burrow, info, request, auth);
  throw unauthorized("unsupported Authorization scheme; use MAC or Bearer (OAuth 2.0) or OAuth (OAuth 1.0)");
}

/**
 * A bearer token: the access token of a bearer session (never a MAC id, which travels in clear in every MAC header,
 * nor a cookie session's), accepted over https (directly or through a trusted proxy) and from loopback; elsewhere
 * only with the setting auth.bearerOverHttp.
 */
function bearerContext(burrow: Burrow, info: RequestInfo, request: Request, auth: string): ApiContext | Promise<ApiContext> {
  const env = keyEnvironment(burrow, request);
  const token = /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
  if (!token) throw unauthorized("malformed Bearer Authorization header");
  if (!bearerTransportOk(burrow, info, request, env))
    throw unauthorized("bearer tokens are accepted over https only (or from loopback); set auth.bearerOverHttp to allow plain http");
  const session = burrow.sessions[env].lookup(token);
  const use = (s: Session | null): ApiContext | Promise<ApiContext> => {
    if (s?.kind !== "bearer") return refusedToken(burrow.sessions[env], token);
    const ctx = contextFor(burrow, info, request, env, parseAcceptVersion(request.headers.get("accept")), {
      kind: "user",
      schema: s.schema,
      username: s.username,
      family: s.family,
    });
    return { ...ctx, auth: "bearer" };
  };
  return session instanceof Promise ? session.then(use) : use(session);
}

function bearerTransportOk(burrow: Burrow, info: RequestInfo, request: Request, env: EnvName): boolean {
  if (requestOrigin(request, info, burrow.config.trustedProxy).scheme === "https") return true;
  const ip = clientIp(request, info, burrow.config.trustedProxy);
  if (ip !== null && isLoopbackIp(ip)) return true;
  return (burrow.settings.get(env).auth as { bearerOverHttp: boolean }).bearerOverHttp === true;
}

function macContext(
  burrow: Burrow,
  info: RequestInfo,
  request: Request,
  env: EnvName,
  header: MacHeader,
  session: Session | null,
): ApiContext | Promise<ApiContext> {
  // A cookie or bearer session's token is not a MAC id (it has no MAC key); it is refused like an unknown token.
  if (session?.kind !== "mac") return refusedToken(burrow.sessions[env], header.id);
  const now = Date.now();
  const origin = requestOrigin(request, info, burrow.config.trustedProxy);
  const result = verifyMac({
    header,
    key: session.sign,
    methods: signedMethods(info, request),
    rawTarget: rawTarget(request, info),
    host: origin.host,
    ports: candidatePorts(origin),
    now,
    windowSeconds: MAC_WINDOW_SECONDS,
  });
  if (!result.ok)
    throw result.reason === "timestamp"
      ? timestampRefusal("the MAC timestamp", header.ts, MAC_WINDOW_SECONDS, now)
      : badMac(header, info, request, origin.host, candidatePorts(origin));
  // A replay is the same signature again. It covers ts, nonce, method, URI, host and port under the session's
  // own key, so it alone names the request (two sessions never share one); requests sharing ts and nonce differ.
  // Base64 has no '|', so it never equals an OAuth 1.0 key below.
  const first = burrow.nonces.firstUse(header.mac, (Number(header.ts) + MAC_WINDOW_SECONDS + 1) * 1000);
  const context = () =>
    contextFor(burrow, info, request, env, parseAcceptVersion(request.headers.get("accept")), {
      kind: "user",
      schema: session.schema,
      username: session.username,
      family: session.family,
    });
  // In memory (one node) the answer is immediate; a shared store answers with a promise.
  if (first instanceof Promise)
    return first.then((ok) => (ok ? context() : Promise.reject(unauthorized("replayed request: this signature was already used"))));
  if (!first) throw unauthorized("replayed request: this signature was already used");
  return context();
}

/** 401 for a MAC that matches no form of the request; the debug log gets what the server signed (never the key). */
function badMac(header: MacHeader, info: RequestInfo, request: Request, host: string, ports: readonly number[]): ApiError {
  const expected = normalizedString({
    ts: header.ts,
    nonce: header.nonce,
    method: signedMethods(info, request)[0]!,
    uri: rawTarget(request, info),
    host,
    port: ports[0]!,
    ext: header.ext,
  });
  return new ApiError(401, "invalid MAC signature", {
    debug: `host ${host}, port ${ports.join(" or ")}; normalized string expected (first form tried): ${JSON.stringify(expected)}`,
  });
}

async function oauthContext(burrow: Burrow, info: RequestInfo, request: Request, auth: string): Promise<ApiContext> {
  const version = parseAcceptVersion(request.headers.get("accept"));
  const now = Date.now();
  const params = parseOAuthHeader(auth);
  const consumerKey = params?.oauth_consumer_key;
  if (!params || !consumerKey || !params.oauth_nonce || !params.oauth_timestamp)
    throw unauthorized("malformed OAuth Authorization header: consumer key, timestamp and nonce are required");
  const env = burrow.keys.byPublic.get(consumerKey);
  if (env === undefined) throw unauthorized("invalid OAuth consumer key");
  const origin = requestOrigin(request, info, burrow.config.trustedProxy);
  const target = rawTarget(request, info);
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  const ports = candidatePorts(origin).map((p) => (p === defaultPort(origin.scheme) ? null : p));
  const baseUris = [...new Set(ports.map((port) => baseStringUri({ scheme: origin.scheme, host: origin.host, port, path })))];
  const formBody = isFormType(request.headers.get("content-type")) ? await readText(request, burrow.config.bodyLimit) : undefined;
  const result = verifyOAuth1({
    header: params,
    consumerSecret: burrow.keys.set[env].privateKey,
    methods: signedMethods(info, request),
    baseUris,
    query: q < 0 ? "" : target.slice(q + 1),
    formBody,
    now,
    windowSeconds: OAUTH1_WINDOW_SECONDS,
  });
  if (!result.ok) {
    if (result.reason === "timestamp") throw timestampRefusal("the OAuth timestamp", params.oauth_timestamp, OAUTH1_WINDOW_SECONDS, now);
    if (result.reason === "signature")
      throw new ApiError(401, "invalid OAuth signature", {
        debug: `base string URIs tried: ${baseUris.join(", ")}; methods: ${signedMethods(info, request).join(", ")}`,
      });
    throw unauthorized(`unsupported OAuth ${result.reason}`);
  }
  if (
    !(await burrow.nonces.firstUse(
      `oauth1|${consumerKey}|${params.oauth_timestamp}|${params.oauth_nonce}`,
      (Number(params.oauth_timestamp) + OAUTH1_WINDOW_SECONDS + 1) * 1000,
    ))
  )
    throw unauthorized("replayed request: this OAuth nonce was already used");
  return contextFor(burrow, info, request, env, version, { kind: "app" });
}

/** The 401 of a token that is not live: refresh is suggested only when the refresh token can still work. */
async function refusedToken(sessions: Sessions, accessToken: string): Promise<never> {
  throw unauthorized(
    (await sessions.whyRefused(accessToken)) === "expired"
      ? "the access token has expired; refresh it with the refresh token"
      : "the access token is not valid (logged out or expired); log in again",
  );
}

/** The 401 of a refused timestamp: milliseconds named as such, otherwise the window and the server's clock. */
function timestampRefusal(label: string, ts: string, windowSeconds: number, nowMs: number): ApiError {
  const serverTime = `server time ${Math.floor(nowMs / 1000)}`;
  switch (timestampFault(ts)) {
    case "milliseconds":
      return unauthorized(`${label} must be in seconds since 1970, not milliseconds`);
    case "format":
      return unauthorized(`${label} must be a whole number of seconds since 1970 (${serverTime})`);
    case "window":
      return unauthorized(`${label} is outside the allowed window of ±${windowSeconds} s (${serverTime})`);
  }
}
