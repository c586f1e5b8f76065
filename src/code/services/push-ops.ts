// Custom code's `push` service: device tokens and sends of the method's environment, through the push module
// (the same checks and durable queue as the push API).

import { badRequest } from "../../errors.ts";
import type { PushService } from "../../push/push-service.ts";
import type { Target } from "../../push/queue.ts";
import { normalizeToken, parseTokenType } from "../../push/tokens.ts";
import type { EnvName } from "../../request-context.ts";

export const PUSH_OPS = ["registerToken", "sendToTokens", "sendToUsers", "broadcast", "tokensOfUsers", "removeToken", "expiredTokens"] as const;
const MAX_TARGETS = 10_000;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function tokenOf(op: string, v: unknown) {
  if (!isObj(v)) throw badRequest(`push.${op}: a token is {type: "ios" | "android" | "web", token}`);
  const type = parseTokenType(v.type);
  return { type, token: normalizeToken(type, v.token) };
}

function users(op: string, v: unknown): string[] {
  if (!Array.isArray(v) || v.length > MAX_TARGETS || !v.every((u) => typeof u === "string" && u.length > 0 && u.length <= 256))
    throw badRequest(`push.${op}: users must be an array of at most ${MAX_TARGETS} usernames`);
  return v as string[];
}

export async function pushCall(push: PushService, env: EnvName, op: string, args: unknown[]): Promise<unknown> {
  switch (op) {
    case "registerToken": {
      const [user, token] = args;
      if (user !== null && user !== undefined && (typeof user !== "string" || user.length === 0 || user.length > 256)) throw badRequest("push.registerToken: user must be a username or null");
      const t = tokenOf(op, token);
      await push.tokens(env).register(t.type, t.token, (user as string | null | undefined) ?? null, true);
      return undefined;
    }
    case "sendToTokens": {
      const [tokens, payload] = args;
      if (!Array.isArray(tokens) || tokens.length > MAX_TARGETS) throw badRequest(`push.sendToTokens: tokens must be an array of at most ${MAX_TARGETS}`);
      const target: Target = { kind: "tokens", tokens: tokens.map((t) => tokenOf(op, t)) };
      return push.send(env, target, payload);
    }
    case "sendToUsers":
      return push.send(env, { kind: "users", users: users(op, args[0]) }, args[1]);
    case "broadcast":
      return push.send(env, { kind: "broadcast" }, args[0]);
    case "tokensOfUsers": {
      const byUser = await push.tokens(env).ofUsers(users(op, args[0]));
      return Object.fromEntries(Object.entries(byUser).map(([u, list]) => [u, list.map((t) => ({ type: t.type, token: t.token }))]));
    }
    case "removeToken": {
      const t = tokenOf(op, args[0]);
      return push.tokens(env).remove(t.type, t.token);
    }
    case "expiredTokens":
      if (typeof args[0] !== "boolean") throw badRequest("push.expiredTokens: pass true to clear the list after reading, false to keep it");
      return push.tokens(env).expired(args[0]);
  }
  throw badRequest(`push has no operation "${op}"`);
}
