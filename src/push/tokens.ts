// Device tokens as the push API takes them: the type names clients send (case-insensitive, `android` as the
// old name of `androidgcm`), and each platform's token checked and put in one canonical form. Pure.

import { badRequest } from "../errors.ts";
import type { PushPlatform } from "./provider.ts";
import { parseSubscription } from "./providers/web-push.ts";

/** The stored type names, as the API answers them. */
export type TokenType = "ios" | "androidgcm" | "web";

export const PLATFORM_OF: Record<TokenType, PushPlatform> = { ios: "ios", androidgcm: "android", web: "web" };

const MAX_ANDROID = 4096;

/** `ios`, `androidgcm` (also `android`, `androidGCM`) or `web`; anything else is 400. */
export function parseTokenType(raw: unknown): TokenType {
  const t = typeof raw === "string" ? raw.toLowerCase() : "";
  if (t === "ios") return "ios";
  if (t === "androidgcm" || t === "android") return "androidgcm";
  if (t === "web") return "web";
  throw badRequest(`unknown token type ${JSON.stringify(String(raw).slice(0, 32))}: expected ios, androidgcm (or android) or web`);
}

/**
 * The canonical token: iOS tokens lose spaces, `<` and `>` and must then be hex (lower-cased); Android
 * registration tokens are printable without spaces; a web token is a PushSubscription as JSON, stored
 * re-serialized as `{"endpoint", "keys": {"p256dh", "auth"}}`.
 */
export function normalizeToken(type: TokenType, raw: unknown): string {
  if (type === "web") {
    let sub: unknown = raw;
    if (typeof raw === "string") {
      try {
        sub = JSON.parse(raw);
      } catch {
        throw badRequest('a web token is a PushSubscription as JSON: {"endpoint", "keys": {"p256dh", "auth"}}');
      }
    }
    try {
      const s = parseSubscription(JSON.stringify(sub));
      return JSON.stringify({ endpoint: s.endpoint, keys: { p256dh: s.keys.p256dh, auth: s.keys.auth } });
    } catch (e) {
      throw badRequest(`invalid web push subscription: ${(e as Error).message}`);
    }
  }
  if (typeof raw !== "string" || raw.length === 0) throw badRequest("the device token is missing");
  if (type === "ios") {
    const hex = raw.replace(/[\s<>]/g, "").toLowerCase();
    if (!/^[0-9a-f]{16,200}$/.test(hex) || hex.length % 2 !== 0)
      throw badRequest("an iOS device token is hex (spaces, < and > are removed first)");
    return hex;
  }
  if (raw.length > MAX_ANDROID || !/^[\x21-\x7e]+$/.test(raw))
    throw badRequest(`an Android registration token is 1 to ${MAX_ANDROID} printable characters without spaces`);
  return raw;
}
