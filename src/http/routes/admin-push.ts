// The admin API's push routes for the console's push screen: send a notification to everyone, to users or to
// tokens of an environment (the same body and limits as POST /_push/notifications), and the tokens the
// providers refused. The queue and delivery results are GET /_admin/api/push/queue and /push/notifications.

import { Elysia, t } from "elysia";
import { badRequest } from "../../errors.ts";
import { sendTarget } from "../../push/targets.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import type { EnvName } from "../../system/environments.ts";
import type { Services } from "../services.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { environmentOf } from "../admin-context.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

const doc = (summary: string, description?: string) => ({ tags: ["admin"], summary, description, security: [{ adminBearer: [] }] });
const EnvQuery = t.Object({ env: t.Optional(t.String({ description: "development or production (default production)" })) });

const envOf = (request: Request): EnvName => environmentOf(new URL(request.url).searchParams.get("env") ?? "production");

export function adminPushRoutes(services: Services, parsers: BodyParsers) {
  return new Elysia({ name: "admin-push", prefix: "/_admin/api/push" })
    .use(parsers)
    .use(adminGuard(services))
    .post("/send", async ({ request, body }) => {
      if (!isObj(body)) throw badRequest('send {"payload": {...}} with "users" or "tokens" to target, or none to broadcast');
      for (const k of Object.keys(body)) if (!["payload", "users", "tokens"].includes(k)) throw badRequest(`unknown member "${k.slice(0, 32)}"; send payload, users or tokens`);
      if (body.payload === undefined) throw badRequest("payload is missing");
      return json(await services.push.send(envOf(request), sendTarget(body), body.payload));
    }, {
      parse: "datastore",
      query: EnvQuery,
      detail: { ...doc("Send a push notification", "The body of POST /_push/notifications: {\"payload\": {...}} broadcasts; \"users\": [...] or \"tokens\": [{\"type\", \"token\"}] target. Answers {\"queued\": n}."), ...S.jsonBody(S.AnyObject) },
    })
    .get("/expired", async ({ request }) => json(await services.push.tokens(envOf(request)).expired(false)), {
      query: EnvQuery,
      detail: doc("Tokens the providers refused", "[{type, token, expired}] of the environment; the list is left as it is (apps clear it through GET /_push/expired_tokens?clear=true)."),
    });
}
