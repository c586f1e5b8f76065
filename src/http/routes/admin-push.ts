// The admin API's push routes for the console's push screen: send a notification to everyone, to users or to
// tokens of an environment (the same body and limits as POST /_push/notifications), the tokens the providers
// refused, the recent notifications with their delivery results, and the queue.

import { Elysia, t } from "elysia";
import { badRequest } from "../../errors.ts";
import { sendTarget } from "../../push/targets.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import type { EnvName } from "../../system/environments.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDoc as admin, environmentOf } from "../admin-context.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

const EnvQuery = t.Object({ env: t.Optional(t.String({ description: "development or production (default production)" })) });

const envOf = (request: Request): EnvName => environmentOf(new URL(request.url).searchParams.get("env") ?? "production");

export function adminPushRoutes(burrow: Burrow, parsers: BodyParsers) {
  return new Elysia({ name: "admin-push", prefix: "/_admin/api/push" })
    .use(parsers)
    .use(adminGuard(burrow))
    .post(
      "/send",
      async ({ request, body }) => {
        if (!isObj(body)) throw badRequest('send {"payload": {...}} with "users" or "tokens" to target, or none to broadcast');
        for (const k of Object.keys(body))
          if (!["payload", "users", "tokens"].includes(k))
            throw badRequest(`unknown member "${k.slice(0, 32)}"; send payload, users or tokens`);
        if (body.payload === undefined) throw badRequest("payload is missing");
        return json(await burrow.push.send(envOf(request), sendTarget(body), body.payload));
      },
      {
        role: "editor",
        parse: "datastore",
        query: EnvQuery,
        detail: {
          ...admin(
            "Send a push notification",
            'The body of POST /_push/notifications: {"payload": {...}} broadcasts; "users": [...] or "tokens": [{"type", "token"}] target. Answers {"queued": n}.',
          ),
          ...S.jsonBody(S.AnyObject),
        },
      },
    )
    .get(
      "/notifications",
      async ({ request }) => {
        const url = new URL(request.url);
        const limit = Math.min(200, Math.max(1, Number(url.searchParams.get("limit") ?? 50) || 50));
        return json(await burrow.push.queue(environmentOf(url.searchParams.get("env") ?? "production")).recent(limit));
      },
      {
        role: "viewer",
        detail: admin(
          "Recent push notifications",
          "Newest first: target, queued, sent, failed, expired, retries, still pending, and the first errors. ?env=development|production (default production), ?limit=1..200.",
        ),
      },
    )
    .get(
      "/queue",
      async ({ request }) => {
        const env = environmentOf(new URL(request.url).searchParams.get("env") ?? "production");
        return json({
          env,
          ...(await burrow.push.queue(env).stats()),
          tokens: await burrow.push.tokens(env).count(),
          inFlight: burrow.push.deliveryLimits(env),
        });
      },
      {
        role: "viewer",
        detail: admin(
          "The push queue",
          "Deliveries waiting (depth), the age of the oldest, those waiting for a retry, leased ones, registered tokens, and per platform the sends allowed in flight now with the shortest round trip seen (they adapt to each provider). ?env=development|production.",
        ),
      },
    )
    .get("/expired", async ({ request }) => json(await burrow.push.tokens(envOf(request)).expired(false)), {
      role: "viewer",
      query: EnvQuery,
      detail: admin(
        "Tokens the providers refused",
        "[{type, token, expired}] of the environment; the list is left as it is (apps clear it through GET /_push/expired_tokens?clear=true).",
      ),
    });
}
