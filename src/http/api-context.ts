// Resolve who and what an API request addresses: the environment and version (Accept header), the app (the
// X-Service-API-Key, or the consumer key of an OAuth 1.0 signature) and the caller (anonymous, a user signed in
// with a MAC token, or the app itself with its private key), giving the ApiContext every operation takes.

import { NotFoundError } from "elysia";
import { MAC_WINDOW_SECONDS, type MacHeader, parseMacHeader, verifyMac } from "../auth/mac.ts";
import { OAUTH1_WINDOW_SECONDS, baseStringUri, parseOAuthHeader, verifyOAuth1 } from "../auth/oauth1.ts";
import type { Session } from "../auth/sessions.ts";
import type { ApiContext, Principal } from "../request-context.ts";
import { ApiError, unauthorized } from "../errors.ts";
import type { Services } from "./services.ts";
import type { EnvName } from "../system/environments.ts";
import { parseAcceptVersion } from "./accept.ts";
import { isFormType, readText } from "./body.ts";
import { candidatePorts, defaultPort, rawTarget, requestOrigin } from "./origin.ts";
import type { RequestInfo } from "./request-meta.ts";

const API_KEY_HEADER = "x-service-api-key";

/**
 * The derive step of the API route groups, declared once per group: the path's parameters are checked (a
 * malformed percent-encoding is a 400; a first segment starting with "_" is the system's, never a schema) and
 * the request's ApiContext is resolved. It is a plain value for unsigned requests (the hot path) and a Promise
 * when a signature check or a configuration refresh has to wait.
 */
export function apiContextStep(services: Services, info: RequestInfo) {
  return ({ request, params }: { request: Request; params: Record<string, string | null> }): { api: ApiContext | Promise<ApiContext> } => {
    checkParams(params);
    return { api: apiContext(services, info, request) };
  };
}

export function checkParams(params: Record<string, string | null>): void {
  for (const k in params) if (params[k] === null) throw new ApiError(400, "malformed percent-encoding in the URL path");
  // Not a route at all: the edge answers 404, or 405 where another method has a route at this path.
  if (params.schema!.charCodeAt(0) === 95) throw new NotFoundError();
}


/** The context of an API request; synchronous for unsigned requests unless a configuration refresh is due. */
export function apiContext(services: Services, info: RequestInfo, request: Request): ApiContext | Promise<ApiContext> {
  const due = services.refreshIfDue();
  const auth = request.headers.get("authorization");
  if (auth !== null) return due ? due.then(() => signedContext(services, info, request, auth)) : signedContext(services, info, request, auth);
  return due ? due.then(() => unsignedContext(services, request)) : unsignedContext(services, request);
}

function keyEnvironment(services: Services, request: Request): EnvName {
  const key = request.headers.get(API_KEY_HEADER);
  if (key === null || key === "") throw unauthorized("missing X-Service-API-Key header with the app's public key");
  const env = services.keys.byPublic.get(key);
  if (env === undefined) throw unauthorized("invalid API key");
  return env;
}

function unsignedContext(services: Services, request: Request): ApiContext {
  const version = parseAcceptVersion(request.headers.get("accept"));
  return contextFor(services, request, keyEnvironment(services, request), version, { kind: "anonymous" });
}

/** Environment and version from the key's environment and the Accept version (product.md §4). */
function contextFor(services: Services, request: Request, keyEnv: EnvName, version: number | null, principal: Principal): ApiContext {
  const baseUrl = () => services.config.publicUrl ?? new URL(request.url).origin;
  if (keyEnv === "development") {
    if (version !== null && version !== 0) throw unauthorized(`the development API key cannot call API version ${version}; use the production key`);
    return { env: "development", version: 0, db: services.envDbs.development, schemas: services.catalog.development(), infer: services.config.infer, principal, baseUrl };
  }
  if (version === 0) throw unauthorized("the production API key cannot call version 0 (development); use the development key");
  const v = version ?? services.catalog.latestVersion();
  if (v === null) throw new ApiError(404, "no API version is deployed to production yet");
  const schemas = services.catalog.production(v);
  if (!schemas) throw new ApiError(404, `API version ${v} is not deployed`);
  return { env: "production", version: v, db: services.envDbs.production, schemas, infer: false, principal, baseUrl };
}

/** Methods a signature may cover: the request line's, then the overriding one (behaviour.md §11.46). */
function signedMethods(info: RequestInfo, request: Request): string[] {
  const original = info.original(request).method;
  return original === request.method ? [original] : [original, request.method];
}

function signedContext(services: Services, info: RequestInfo, request: Request, auth: string): ApiContext | Promise<ApiContext> {
  if (/^MAC\s/i.test(auth)) {
    const env = keyEnvironment(services, request);
    const header = parseMacHeader(auth);
    if (!header) throw unauthorized("malformed MAC Authorization header");
    const session = services.sessions[env].lookup(header.id);
    return session instanceof Promise ? session.then((s) => macContext(services, info, request, env, header, s)) : macContext(services, info, request, env, header, session);
  }
  if (/^OAuth\s/i.test(auth)) return oauthContext(services, info, request, auth);
  throw unauthorized("unsupported Authorization scheme; use MAC (OAuth 2.0) or OAuth (OAuth 1.0)");
}

function macContext(services: Services, info: RequestInfo, request: Request, env: EnvName, header: MacHeader, session: Session | null): ApiContext {
  if (!session) throw unauthorized("the access token is unknown, expired or revoked; refresh it");
  const now = Date.now();
  const origin = requestOrigin(request, info, services.config.trustedProxy);
  const result = verifyMac({ header, key: session.sign, methods: signedMethods(info, request), rawTarget: rawTarget(request, info), host: origin.host, ports: candidatePorts(origin), now, windowSeconds: MAC_WINDOW_SECONDS });
  if (!result.ok) throw unauthorized(result.reason === "timestamp" ? "the MAC timestamp is outside the allowed window" : "invalid MAC signature");
  // A replay is the same signature again. It covers ts, nonce, method, URI, host and port under the session's
  // own key, so it alone names the request (two sessions never share one); requests sharing ts and nonce differ.
  // Base64 has no '|', so it never equals an OAuth 1.0 key below.
  if (!services.nonces.firstUse(header.mac, (Number(header.ts) + MAC_WINDOW_SECONDS + 1) * 1000)) throw unauthorized("replayed request: this signature was already used");
  return contextFor(services, request, env, parseAcceptVersion(request.headers.get("accept")), { kind: "user", schema: session.schema, username: session.username, family: session.family });
}

async function oauthContext(services: Services, info: RequestInfo, request: Request, auth: string): Promise<ApiContext> {
  const version = parseAcceptVersion(request.headers.get("accept"));
  const now = Date.now();
  const params = parseOAuthHeader(auth);
  const consumerKey = params?.oauth_consumer_key;
  if (!params || !consumerKey || !params.oauth_nonce || !params.oauth_timestamp) throw unauthorized("malformed OAuth Authorization header: consumer key, timestamp and nonce are required");
  const env = services.keys.byPublic.get(consumerKey);
  if (env === undefined) throw unauthorized("invalid OAuth consumer key");
  const origin = requestOrigin(request, info, services.config.trustedProxy);
  const target = rawTarget(request, info);
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  const ports = candidatePorts(origin).map((p) => (p === defaultPort(origin.scheme) ? null : p));
  const baseUris = [...new Set(ports.map((port) => baseStringUri({ scheme: origin.scheme, host: origin.host, port, path })))];
  const formBody = isFormType(request.headers.get("content-type")) ? await readText(request, services.config.bodyLimit) : undefined;
  const result = verifyOAuth1({ header: params, consumerSecret: services.keys.set[env].privateKey, methods: signedMethods(info, request), baseUris, query: q < 0 ? "" : target.slice(q + 1), formBody, now, windowSeconds: OAUTH1_WINDOW_SECONDS });
  if (!result.ok) throw unauthorized(result.reason === "timestamp" ? "the OAuth timestamp is outside the allowed window" : result.reason === "signature" ? "invalid OAuth signature" : `unsupported OAuth ${result.reason}`);
  if (!services.nonces.firstUse(`oauth1|${consumerKey}|${params.oauth_timestamp}|${params.oauth_nonce}`, (Number(params.oauth_timestamp) + OAUTH1_WINDOW_SECONDS + 1) * 1000))
    throw unauthorized("replayed request: this OAuth nonce was already used");
  return contextFor(services, request, env, version, { kind: "app" });
}
