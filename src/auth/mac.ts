// OAuth 2.0 MAC access authentication (draft-ietf-oauth-v2-http-mac-01 as the SDKs implement it): header parsing,
// the normalized request string, HMAC-SHA1 signatures and verification against the URI forms the SDKs sign. Pure.

import { timingSafeEqual } from "node:crypto";

export const MAC_WINDOW_SECONDS = 600;

/** Request targets longer than this are only compared as received (bounds the decoding work per request). */
export const MAX_DECODED_TARGET = 8192;

export interface MacHeader {
  id: string;
  ts: string;
  nonce: string;
  mac: string;
  ext?: string;
}

export type MacResult = { ok: true } | { ok: false; reason: "timestamp" | "signature" };

/** Longest accepted value per attribute; anything else in the header is refused. */
const MAC_LIMITS = { id: 256, ts: 20, nonce: 256, mac: 128, ext: 256 } as const;

const isBlank = (c: number) => c === 32 || c === 9;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** `MAC id="..",ts="..",nonce="..",mac=".."[,ext=".."]` in any order; null when anything is off. */
export function parseMacHeader(header: string): MacHeader | null {
  const text = header.trim();
  const n = text.length;
  // The scheme, case-insensitively, then at least one blank.
  if (
    n < 4 ||
    (text.charCodeAt(0) | 32) !== 109 ||
    (text.charCodeAt(1) | 32) !== 97 ||
    (text.charCodeAt(2) | 32) !== 99 ||
    !isBlank(text.charCodeAt(3))
  )
    return null;
  let id: string | undefined, ts: string | undefined, nonce: string | undefined, mac: string | undefined, ext: string | undefined;
  let pos = 4;
  for (;;) {
    while (pos < n && isBlank(text.charCodeAt(pos))) pos++;
    const nameStart = pos;
    while (pos < n && isLetter(text.charCodeAt(pos))) pos++;
    const nameEnd = pos;
    while (pos < n && isBlank(text.charCodeAt(pos))) pos++;
    if (text.charCodeAt(pos) !== 61 /* = */) return null;
    pos++;
    while (pos < n && isBlank(text.charCodeAt(pos))) pos++;
    if (text.charCodeAt(pos) !== 34 /* " */) return null;
    const close = text.indexOf('"', pos + 1);
    if (close < 0) return null;
    const value = text.slice(pos + 1, close);
    if (value.includes("\\")) return null;
    const name = text.slice(nameStart, nameEnd);
    // Each attribute once, within its length limit; any other name is refused.
    switch (name) {
      case "id":
        if (id !== undefined || value.length > MAC_LIMITS.id) return null;
        id = value;
        break;
      case "ts":
        if (ts !== undefined || value.length > MAC_LIMITS.ts) return null;
        ts = value;
        break;
      case "nonce":
        if (nonce !== undefined || value.length > MAC_LIMITS.nonce) return null;
        nonce = value;
        break;
      case "mac":
        if (mac !== undefined || value.length > MAC_LIMITS.mac) return null;
        mac = value;
        break;
      case "ext":
        if (ext !== undefined || value.length > MAC_LIMITS.ext) return null;
        ext = value;
        break;
      default:
        return null;
    }
    pos = close + 1;
    while (pos < n && isBlank(text.charCodeAt(pos))) pos++;
    if (pos === n) break;
    if (text.charCodeAt(pos) !== 44 /* , */) return null;
    pos++;
  }
  if (!id || !ts || !nonce || !mac) return null;
  return ext === undefined ? { id, ts, nonce, mac } : { id, ts, nonce, mac, ext };
}

/** `ts\nnonce\nMETHOD\nuri\nhost\nport\next\n`; ext is empty when absent, so the string then ends in "\n\n". */
export function normalizedString(p: {
  ts: string;
  nonce: string;
  method: string;
  uri: string;
  host: string;
  port: number | string;
  ext?: string;
}): string {
  return `${p.ts}\n${p.nonce}\n${p.method.toUpperCase()}\n${p.uri}\n${p.host}\n${p.port}\n${p.ext ?? ""}\n`;
}

/** Base64(HMAC-SHA1(UTF-8 key, normalized string)). */
export function macSignature(key: string, normalized: string): string {
  return new Bun.CryptoHasher("sha1", key).update(normalized).digest("base64");
}

/** Signs normalized strings under one key. */
export type MacSigner = (normalized: string) => string;

/** A signer for a key that is used many times: the key is set up once, each signature copies that state. */
export function macSigner(key: string): MacSigner {
  const keyed = new Bun.CryptoHasher("sha1", key);
  return (normalized) => keyed.copy().update(normalized).digest("base64");
}

/** Equality of two ASCII strings in time that depends only on their lengths (which are public here). */
export function constantTimeEquals(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Escapes the iOS SDK leaves encoded when it signs (CFURLCreateStringByReplacingPercentEscapes' keep list). */
const IOS_KEEP_ESCAPED = new Set(":/.?&=;+!@#$()~ ");
const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
// ignoreBOM: a leading %EF%BB%BF must decode to U+FEFF, not vanish (the client signed it).
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decode a run of non-ASCII escapes as UTF-8; a run that is not valid UTF-8 keeps its escapes. */
function decodeEscapes(escapes: string[]): string {
  if (escapes.length === 0) return "";
  try {
    return UTF8.decode(Uint8Array.from(escapes, (e) => parseInt(e.slice(1), 16)));
  } catch {
    return escapes.join("");
  }
}

function iosForm(target: string): string {
  return target.replace(ESCAPE_RUN, (run) => {
    let out = "";
    let pending: string[] = [];
    for (let i = 0; i < run.length; i += 3) {
      const esc = run.slice(i, i + 3);
      const byte = parseInt(esc.slice(1), 16);
      if (byte >= 0x80) {
        pending.push(esc);
        continue;
      }
      const char = String.fromCharCode(byte);
      out += decodeEscapes(pending) + (IOS_KEEP_ESCAPED.has(char) ? esc : char);
      pending = [];
    }
    return out + decodeEscapes(pending);
  });
}

function fullyDecoded(target: string): string | null {
  try {
    return decodeURIComponent(target);
  } catch {
    return null;
  }
}

/** The request-URIs a client may have signed: as received, the iOS partially decoded form, fully decoded. */
export function uriForms(rawTarget: string): string[] {
  return [...lazyUriForms(rawTarget)];
}

/** The same forms, computed only as far as a verifier needs them (most clients sign the target as sent). */
function* lazyUriForms(rawTarget: string): Generator<string> {
  yield rawTarget;
  if (rawTarget.length > MAX_DECODED_TARGET || !rawTarget.includes("%")) return;
  const ios = iosForm(rawTarget);
  if (ios !== rawTarget) yield ios;
  const full = fullyDecoded(rawTarget);
  if (full !== null && full !== rawTarget && full !== ios) yield full;
}

/** Whether a timestamp in whole seconds lies within ±windowSeconds of now (ms). */
export function withinWindow(ts: string, nowMs: number, windowSeconds: number): boolean {
  if (ts.length === 0 || ts.length > 20) return false;
  for (let i = 0; i < ts.length; i++) {
    const c = ts.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return Math.abs(Number(ts) - nowMs / 1000) <= windowSeconds;
}

/** From 1e11 on (13 digits today) a timestamp is read as milliseconds: 1e11 seconds is the year 5138. */
const MILLISECONDS_FROM = 1e11;

/**
 * Why a timestamp that failed withinWindow failed: not whole seconds at all, milliseconds sent for seconds,
 * or a clock too far from the server's. Only asked after a refusal, so it costs nothing on valid requests.
 */
export function timestampFault(ts: string): "format" | "milliseconds" | "window" {
  if (!/^\d{1,20}$/.test(ts)) return "format";
  return Number(ts) >= MILLISECONDS_FROM ? "milliseconds" : "window";
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Compare a presented base64 digest with the expected bytes in constant time. Malformed base64 never matches
 * (Buffer's decoder would otherwise skip junk); a length mismatch is not secret, the digest length is public.
 */
export function base64DigestEquals(presented: string, expected: Uint8Array): boolean {
  if (!BASE64.test(presented)) return false;
  const bytes = Buffer.from(presented, "base64");
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

/** The first `n` distinct values: bounds the signatures computed per request. */
export function firstDistinct<T>(values: readonly T[], n: number): T[] {
  return [...new Set(values)].slice(0, n);
}

const VALID: MacResult = Object.freeze({ ok: true });
const BAD_TIMESTAMP: MacResult = Object.freeze({ ok: false, reason: "timestamp" });
const BAD_SIGNATURE: MacResult = Object.freeze({ ok: false, reason: "signature" });

/**
 * Verify a parsed MAC header: timestamp window first, then every method × URI form × port combination
 * (methods: request line, then an override; ports: the chosen one, then
 * optionally the other default). Replay (id, ts, nonce) checks are the caller's, since they need storage.
 */
export function verifyMac(args: {
  header: MacHeader;
  /** The MAC key, or a signer made from it by macSigner(). */
  key: string | MacSigner;
  methods: readonly string[];
  rawTarget: string;
  host: string;
  ports: readonly number[];
  now: number;
  windowSeconds: number;
}): MacResult {
  const { header, key } = args;
  if (!withinWindow(header.ts, args.now, args.windowSeconds)) return BAD_TIMESTAMP;
  const sign = typeof key === "string" ? macSigner(key) : key;
  const signs = (method: string, uri: string, port: number) =>
    constantTimeEquals(
      header.mac,
      sign(normalizedString({ ts: header.ts, nonce: header.nonce, method, uri, host: args.host, port, ext: header.ext })),
    );
  // Nearly every client signs the request as sent: try that before the alternatives.
  if (signs(args.methods[0]!, args.rawTarget, args.ports[0]!)) return VALID;
  for (const method of firstDistinct(args.methods, 2)) {
    for (const uri of lazyUriForms(args.rawTarget)) {
      for (const port of firstDistinct(args.ports, 2)) if (signs(method, uri, port)) return VALID;
    }
  }
  return BAD_SIGNATURE;
}
