// Custom code's `http` service: GET/PUT/POST/DELETE to a URL through outboundRequest (net/), so every hop of
// a request - redirects included, at most MAX_REDIRECTS - connects only to public addresses checked at connect
// time, unless the environment's code.http.allowPrivate setting is on. Deadline: the option, the setting, and
// the time the call has left, whichever is first. Answers status, headers and the body as text, capped.

import { badRequest } from "../../errors.ts";
import { type OutboundResponse, outboundRequest } from "../../net/outbound-request.ts";
import type { publicOnlyLookup } from "../../net/public-address.ts";
import { isHeaderName, isHeaderValue } from "../../net/headers.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";

export const HTTP_OPS = ["get", "post", "put", "delete"] as const;
const MAX_REDIRECTS = 5;
const MAX_REQUEST_BODY = 5 * 1024 * 1024;

export interface HttpSettings {
  allowPrivate: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface HttpCallLimits {
  settings: HttpSettings;
  /** When the method call's own time is up (epoch ms). */
  deadline: number;
  /** A lookup to use instead of the public-only one (tests). */
  lookup?: ReturnType<typeof publicOnlyLookup>;
}

function options(
  op: string,
  raw: unknown,
  settings: HttpSettings,
): { headers: Record<string, string>; timeoutMs: number; maxBytes: number } {
  if (raw === undefined || raw === null) return { headers: {}, timeoutMs: settings.timeoutMs, maxBytes: settings.maxResponseBytes };
  if (!isObj(raw)) throw badRequest(`http.${op}: options must be an object { headers, timeoutMs, maxBytes }`);
  const headers: Record<string, string> = {};
  if (raw.headers !== undefined) {
    if (!isObj(raw.headers)) throw badRequest(`http.${op}: headers must be an object of strings`);
    for (const [k, v] of Object.entries(raw.headers)) {
      if (!isHeaderName(k)) throw badRequest(`http.${op}: ${JSON.stringify(k.slice(0, 64))} is not a header name`);
      if (!isHeaderValue(v)) throw badRequest(`http.${op}: header ${k} must be a one-line string`);
      headers[k.toLowerCase()] = v;
    }
  }
  const num = (v: unknown, name: string, max: number) => {
    if (v === undefined) return max;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw badRequest(`http.${op}: ${name} must be a positive number`);
    return Math.min(v, max);
  };
  return {
    headers,
    timeoutMs: num(raw.timeoutMs, "timeoutMs", settings.timeoutMs),
    maxBytes: num(raw.maxBytes, "maxBytes", settings.maxResponseBytes),
  };
}

function flatHeaders(h: OutboundResponse["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

/** Run one http operation: args are [url, options] (get, delete) or [url, body, options] (post, put). */
export async function httpCall(
  op: string,
  args: unknown[],
  limits: HttpCallLimits,
): Promise<{ status: number; headers: Record<string, string>; body: string; truncated: boolean }> {
  if (!(HTTP_OPS as readonly string[]).includes(op)) throw badRequest(`http has no operation "${op}"`);
  const withBody = op === "post" || op === "put";
  const [rawUrl, second, third] = args;
  if (typeof rawUrl !== "string" || rawUrl.length > 8192) throw badRequest(`http.${op}: the first argument is the URL (a string)`);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw badRequest(`http.${op}: ${JSON.stringify(rawUrl.slice(0, 200))} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`http.${op}: only http and https URLs`);
  let body = withBody ? second : undefined;
  if (withBody && body !== undefined && body !== null && typeof body !== "string")
    throw badRequest(`http.${op}: the body is a string (JSON.stringify objects)`);
  if (typeof body === "string" && Buffer.byteLength(body) > MAX_REQUEST_BODY) throw badRequest(`http.${op}: the body is larger than 5 MB`);
  const opts = options(op, withBody ? third : second, limits.settings);
  let method = op.toUpperCase();
  const started = Date.now();
  const timeLeft = () => Math.min(opts.timeoutMs - (Date.now() - started), limits.deadline - Date.now());
  for (let hop = 0; ; hop++) {
    const ms = timeLeft();
    if (ms <= 0) throw new Error(`http.${op}: timed out`);
    let res: OutboundResponse;
    try {
      res = await outboundRequest(url, {
        method,
        headers: opts.headers,
        body: (body as string | null | undefined) ?? undefined,
        timeoutMs: ms,
        maxBody: opts.maxBytes + 1,
        allowPrivate: limits.settings.allowPrivate,
        ...(limits.lookup ? { lookup: limits.lookup } : {}),
      });
    } catch (e) {
      const err = e as Error & { code?: string };
      if (err.code === "EADDRNOTPUBLIC")
        throw new Error(
          `http.${op}: ${url.host} is not allowed: ${err.message} (loopback, private, link-local and metadata addresses are refused)`,
        );
      if (err.name === "TimeoutError") throw new Error(`http.${op}: ${url.host} did not answer within ${ms} ms`);
      throw new Error(`http.${op}: ${url.host}: ${err.message}`);
    }
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && res.status !== 304 && typeof location === "string") {
      if (hop >= MAX_REDIRECTS) throw new Error(`http.${op}: more than ${MAX_REDIRECTS} redirects`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new Error(`http.${op}: the redirect to ${JSON.stringify(location.slice(0, 200))} is not a URL`);
      }
      if (next.protocol !== "http:" && next.protocol !== "https:")
        throw new Error(`http.${op}: a redirect to ${next.protocol} is not followed`);
      // As fetch does: 303 (and 301/302 after a POST) continue as a GET without a body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      // Credentials do not follow a redirect to another origin.
      if (next.origin !== url.origin) {
        delete opts.headers.authorization;
        delete opts.headers.cookie;
      }
      url = next;
      continue;
    }
    const bytes = Buffer.byteLength(res.body);
    const truncated = bytes > opts.maxBytes;
    return {
      status: res.status,
      headers: flatHeaders(res.headers),
      body: truncated ? Buffer.from(res.body).subarray(0, opts.maxBytes).toString("utf8") : res.body,
      truncated,
    };
  }
}
