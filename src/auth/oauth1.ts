// OAuth 1.0 (RFC 5849) HMAC-SHA1 for two-legged private-key calls: header parsing, the signature base string,
// verification, and signing (tests and our own server-side clients). Pure.

import { createHmac } from "node:crypto";
import { base64DigestEquals, firstDistinct, withinWindow } from "./mac.ts";

export const OAUTH1_WINDOW_SECONDS = 300;

/** Longest accepted Authorization header (bounds parsing and decoding). */
const MAX_OAUTH_HEADER = 4096;

type OAuth1Result = { ok: true } | { ok: false; reason: "method" | "timestamp" | "signature" | "version" };

const SCHEME = /^OAuth[ \t]+/i;
const PARAM = /[ \t]*([A-Za-z0-9%._~-]+)[ \t]*=[ \t]*"([^"]*)"[ \t]*/y;

function decodeStrict(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * `OAuth realm="..", oauth_consumer_key="..", ...` → decoded parameters (§3.5.1). The realm is not part of the
 * signature and is dropped. Duplicates, bad escapes or anything unparseable → null.
 */
export function parseOAuthHeader(header: string): Record<string, string> | null {
  if (header.length > MAX_OAUTH_HEADER) return null;
  const text = header.trim();
  const scheme = SCHEME.exec(text);
  if (!scheme) return null;
  const params = new Map<string, string>();
  let pos = scheme[0].length;
  for (;;) {
    PARAM.lastIndex = pos;
    const m = PARAM.exec(text);
    if (!m) return null;
    const name = decodeStrict(m[1]!);
    const value = name === "realm" ? m[2]! : decodeStrict(m[2]!);
    if (name === null || value === null || params.has(name)) return null;
    params.set(name, value);
    pos = PARAM.lastIndex;
    if (pos === text.length) break;
    if (text[pos] !== ",") return null;
    pos++;
  }
  params.delete("realm");
  return Object.fromEntries(params);
}

/** Byte → its §3.6 encoding: RFC 3986 unreserved characters as they are, everything else as uppercase %XX. */
const ENCODED_BYTE = Array.from({ length: 256 }, (_, b) =>
  /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
);

/** RFC 5849 §3.6 percent-encoding of the UTF-8 bytes. */
export function percentEncode(s: string): string {
  let out = "";
  for (const b of Buffer.from(s, "utf8")) out += ENCODED_BYTE[b]!;
  return out;
}

interface BaseUriParts {
  scheme: string;
  host: string;
  port: number | null;
  path: string;
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/** §3.4.1.2: lowercase scheme and host, the default port dropped, the path as sent, no query. */
export function baseStringUri(url: URL | BaseUriParts): string {
  const p: BaseUriParts =
    url instanceof URL
      ? { scheme: url.protocol.slice(0, -1), host: url.hostname, port: url.port === "" ? null : Number(url.port), path: url.pathname }
      : url;
  const scheme = p.scheme.toLowerCase();
  const port = p.port === null || p.port === DEFAULT_PORTS[scheme] ? "" : `:${p.port}`;
  return `${scheme}://${p.host.toLowerCase()}${port}${p.path || "/"}`;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** §3.4.1.3.2: encode, sort by name then value (encoded strings are ASCII, so code-unit order is byte order). */
export function normalizeParameters(params: [string, string][]): string {
  return params
    .map(([name, value]) => [percentEncode(name), percentEncode(value)] as const)
    .sort(([an, av], [bn, bv]) => byCodeUnit(an, bn) || byCodeUnit(av, bv))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

/** x-www-form-urlencoded decoding; a malformed escape is kept as written rather than failing the request. */
function formDecode(s: string): string {
  const spaced = s.replace(/\+/g, " ");
  return decodeStrict(spaced) ?? spaced;
}

function formPairs(s: string): [string, string][] {
  return s
    .split("&")
    .filter((part) => part !== "")
    .map((part) => {
      const eq = part.indexOf("=");
      return eq < 0 ? [formDecode(part), ""] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))];
    });
}

/** §3.4.1.3.1: query pairs, form-body pairs (only for form-encoded bodies) and the header parameters. */
export function collectParameters(args: { query: string; oauth: Record<string, string>; formBody?: string }): [string, string][] {
  const header = Object.entries(args.oauth).filter(([name]) => name !== "oauth_signature" && name !== "realm");
  return [...formPairs(args.query), ...(args.formBody === undefined ? [] : formPairs(args.formBody)), ...header];
}

/** §3.4.1.1: `METHOD&enc(base string URI)&enc(normalized parameters)`. */
export function signatureBaseString(method: string, baseUri: string, normalizedParams: string): string {
  return `${percentEncode(method.toUpperCase())}&${percentEncode(baseUri)}&${percentEncode(normalizedParams)}`;
}

function hmacSha1Digest(base: string, consumerSecret: string, tokenSecret: string): Buffer {
  return createHmac("sha1", `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`)
    .update(base, "utf8")
    .digest();
}

/** §3.4.2: base64(HMAC-SHA1(enc(consumer secret) & enc(token secret), base string)). */
export function hmacSha1Signature(base: string, consumerSecret: string, tokenSecret = ""): string {
  return hmacSha1Digest(base, consumerSecret, tokenSecret).toString("base64");
}

/**
 * Verification: HMAC-SHA1 only, version absent or 1.0, timestamp within the window, then the signature for each
 * method × base URI (≤ 2 each). Two-legged (our API's private-key calls) has no token secret; a provider checking
 * a three-legged call passes the token's. Consumer and token lookup and nonce replay are the caller's, since
 * they need storage.
 */
export function verifyOAuth1(args: {
  header: Record<string, string>;
  consumerSecret: string;
  tokenSecret?: string;
  methods: string[];
  baseUris: string[];
  query: string;
  formBody?: string;
  now: number;
  windowSeconds: number;
}): OAuth1Result {
  const { header } = args;
  if (header.oauth_signature_method?.toUpperCase() !== "HMAC-SHA1") return { ok: false, reason: "method" };
  if (header.oauth_version !== undefined && header.oauth_version !== "1.0") return { ok: false, reason: "version" };
  if (!withinWindow(header.oauth_timestamp ?? "", args.now, args.windowSeconds)) return { ok: false, reason: "timestamp" };
  const params = normalizeParameters(collectParameters({ query: args.query, oauth: header, formBody: args.formBody }));
  for (const method of firstDistinct(args.methods, 2)) {
    for (const uri of firstDistinct(args.baseUris, 2)) {
      const expected = hmacSha1Digest(signatureBaseString(method, uri, params), args.consumerSecret, args.tokenSecret ?? "");
      if (base64DigestEquals(header.oauth_signature ?? "", expected)) return { ok: true };
    }
  }
  return { ok: false, reason: "signature" };
}

/**
 * A complete `OAuth ...` Authorization value: two-legged (no token), or three-legged with the user's token and
 * token secret (a client calling an OAuth 1.0a provider). formBody only when the body is form-encoded.
 */
export function signOAuth1(args: {
  method: string;
  url: string | URL;
  consumerKey: string;
  consumerSecret: string;
  token?: string;
  tokenSecret?: string;
  timestamp: number | string;
  nonce: string;
  formBody?: string;
}): string {
  const url = new URL(args.url);
  const oauth: Record<string, string> = {
    oauth_signature_method: "HMAC-SHA1",
    oauth_version: "1.0",
    oauth_consumer_key: args.consumerKey,
    ...(args.token === undefined ? {} : { oauth_token: args.token }),
    oauth_timestamp: String(args.timestamp),
    oauth_nonce: args.nonce,
  };
  const params = normalizeParameters(collectParameters({ query: url.search.slice(1), oauth, formBody: args.formBody }));
  const signature = hmacSha1Signature(
    signatureBaseString(args.method, baseStringUri(url), params),
    args.consumerSecret,
    args.tokenSecret ?? "",
  );
  const fields = Object.entries({ ...oauth, oauth_signature: signature }).map(([name, value]) => `${name}="${percentEncode(value)}"`);
  return `OAuth ${fields.join(",")}`;
}
