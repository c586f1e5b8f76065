// Checking who a push goes to, as the push API and custom code's push service both take it: a token
// reference {type, token}, a user link, a list of usernames, and the target of a send (tokens, users or a
// broadcast). Errors are 400s naming the member.

import { badRequest } from "../errors.ts";
import { isPlainObject } from "../plain-object.ts";
import type { Target } from "./queue.ts";
import { type TokenType, normalizeToken, parseTokenType } from "./tokens.ts";

/** Most tokens or users one send may name. */
export const MAX_TARGETS = 10_000;

/** The optional user link of a registration: a string of at most 256 characters. */
export function userOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length === 0 || v.length > 256) throw badRequest("user must be a string of 1 to 256 characters");
  return v;
}

export function stringList(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.length > MAX_TARGETS || !v.every((u) => typeof u === "string" && u.length <= 256))
    throw badRequest(`${what} must be an array of at most ${MAX_TARGETS} strings`);
  return v as string[];
}

/** A {type, token} reference, its token normalized for its type. */
export function tokenRef(v: unknown, what: string): { type: TokenType; token: string } {
  if (!isPlainObject(v)) throw badRequest(`${what} is {"type", "token"}`);
  const type = parseTokenType(v.type);
  return { type, token: normalizeToken(type, v.token) };
}

/** The target of a send body: tokens, users, or (neither) a broadcast. */
export function sendTarget(body: Record<string, unknown>, tokensKey = "tokens", usersKey = "users"): Target {
  if (body[tokensKey] !== undefined) {
    const raw = body[tokensKey];
    if (!Array.isArray(raw) || raw.length > MAX_TARGETS)
      throw badRequest(`${tokensKey} must be an array of at most ${MAX_TARGETS} {"type", "token"} objects`);
    return { kind: "tokens", tokens: raw.map((t) => tokenRef(t, `each of ${tokensKey}`)) };
  }
  if (body[usersKey] !== undefined) return { kind: "users", users: stringList(body[usersKey], usersKey) };
  return { kind: "broadcast" };
}
