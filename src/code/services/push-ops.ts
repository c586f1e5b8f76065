// Custom code's `push` service: device tokens and sends of the method's environment, through the push module
// (the same checks and durable queue as the push API).

import { badRequest } from "../../errors.ts";
import type { PushService } from "../../push/push-service.ts";
import { sendTarget, stringList, tokenRef, userOf } from "../../push/targets.ts";
import type { EnvName } from "../../request-context.ts";

export const PUSH_OPS = [
  "registerToken",
  "sendToTokens",
  "sendToUsers",
  "broadcast",
  "tokensOfUsers",
  "removeToken",
  "expiredTokens",
] as const;

export async function pushCall(push: PushService, env: EnvName, op: string, args: unknown[]): Promise<unknown> {
  switch (op) {
    case "registerToken": {
      const t = tokenRef(args[1], "push.registerToken: the token");
      await push.tokens(env).register(t.type, t.token, userOf(args[0]), true);
      return undefined;
    }
    case "sendToTokens":
      return push.send(env, sendTarget({ tokens: args[0] ?? [] }), args[1]);
    case "sendToUsers":
      return push.send(env, sendTarget({ users: args[0] ?? [] }), args[1]);
    case "broadcast":
      return push.send(env, { kind: "broadcast" }, args[0]);
    case "tokensOfUsers": {
      const byUser = await push.tokens(env).ofUsers(stringList(args[0], "users"));
      return Object.fromEntries(Object.entries(byUser).map(([u, list]) => [u, list.map((t) => ({ type: t.type, token: t.token }))]));
    }
    case "removeToken": {
      const t = tokenRef(args[0], "push.removeToken: the token");
      return push.tokens(env).remove(t.type, t.token);
    }
    case "expiredTokens":
      if (typeof args[0] !== "boolean") throw badRequest("push.expiredTokens: pass true to clear the list after reading, false to keep it");
      return push.tokens(env).expired(args[0]);
  }
  throw badRequest(`push has no operation "${op}"`);
}
