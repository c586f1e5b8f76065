// CORS per environment (settings cors.origins; development defaults to "*", production to none). The
// environment comes from the API key (or the key named in an X-Service-API-Key-<key> header during a preflight);
// a request that names no key is judged by the union of both environments' origins.

import type { Burrow } from "./burrow.ts";
import type { EnvName } from "../system/environments.ts";
import { ENVIRONMENTS } from "../system/environments.ts";

const ALLOW_METHODS = "GET, POST, PUT, DELETE, HEAD, OPTIONS";
const EXPOSE = "Content-Range, Retry-After, ETag, Content-Disposition, Location, Date";
const FIXED_HEADERS = new Set(["authorization", "range", "content-type", "accept", "x-http-method-override", "if-none-match", "if-range"]);

function allowedHeader(name: string): boolean {
  return FIXED_HEADERS.has(name) || /^x-service-[a-z0-9-]+$/.test(name);
}

function environmentOf(burrow: Burrow, request: Request, requested: string[]): EnvName | null {
  const key =
    request.headers.get("x-service-api-key") ?? /oauth_consumer_key="([^"]+)"/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (key) return burrow.keys.byPublic.get(key) ?? null;
  for (const h of requested) {
    const m = /^x-service-api-key-(.+)$/.exec(h);
    const env = m && [...burrow.keys.byPublic].find(([k]) => k.toLowerCase() === m[1])?.[1];
    if (env) return env;
  }
  return null;
}

/** The Access-Control-Allow-Origin value for this origin, or null when it is not allowed. */
function allowOrigin(burrow: Burrow, env: EnvName | null, origin: string): string | null {
  for (const e of env ? [env] : ENVIRONMENTS) {
    const origins = (burrow.settings.get(e).cors as { origins: string[] }).origins;
    if (origins.includes(origin)) return origin;
    if (origins.includes("*")) return "*";
  }
  return null;
}

/** Answer a preflight (OPTIONS with Access-Control-Request-Method). */
export function preflight(burrow: Burrow, request: Request, origin: string): Response {
  const requested = (request.headers.get("access-control-request-headers") ?? "")
    .toLowerCase()
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  const allow = allowOrigin(burrow, environmentOf(burrow, request, requested), origin);
  const headers: Record<string, string> = { vary: "Origin" };
  if (allow === null || !requested.every(allowedHeader)) return new Response(null, { status: 403, headers });
  headers["access-control-allow-origin"] = allow;
  headers["access-control-allow-methods"] = ALLOW_METHODS;
  if (requested.length) headers["access-control-allow-headers"] = requested.join(", ");
  headers["access-control-max-age"] = "600";
  return new Response(null, { status: 204, headers });
}

/** CORS headers for the actual response to a request from `origin` (Vary always; the rest when it is allowed). */
export function corsHeaders(burrow: Burrow, request: Request, origin: string): Record<string, string> {
  const allow = allowOrigin(burrow, environmentOf(burrow, request, []), origin);
  if (allow === null) return { vary: "Origin" };
  return { vary: "Origin", "access-control-allow-origin": allow, "access-control-expose-headers": EXPOSE };
}
