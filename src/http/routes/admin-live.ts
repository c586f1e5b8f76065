// The admin API's live streams (the console's data grid follows changes with one): a stream acting as the server
// itself on an environment (and production version), so it sees every object and field, and its subscriptions.
// The stream is read at /_live/streams/<id>?token=<token> like any other.

import { Elysia, t } from "elysia";
import { isPlainObject } from "../../plain-object.ts";
import { badRequest } from "../../errors.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDataContext, adminDoc as admin } from "../admin-context.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

const Params = t.Object({ id: t.String(), name: t.String() });

export function adminLiveRoutes(burrow: Burrow, parsers: BodyParsers) {
  const { live } = burrow;
  const contextOf = (request: Request, env: unknown, version: unknown) => {
    if (typeof env !== "string") throw badRequest('send {"env": "development" | "production", "version"?: N}');
    if (version !== undefined && (typeof version !== "number" || !Number.isSafeInteger(version)))
      throw badRequest("version must be an integer");
    return adminDataContext(burrow, env, version === undefined ? null : String(version), new URL(request.url).origin);
  };
  return new Elysia({ name: "admin-live", prefix: "/_admin/api/live" })
    .use(parsers)
    .use(adminGuard(burrow))
    .post(
      "/streams",
      async ({ request, body }) => {
        if (!isPlainObject(body)) throw badRequest('send {"env": "development" | "production", "version"?: N}');
        return json(await live.createStream(contextOf(request, body.env, body.version)), 201);
      },
      {
        role: "viewer",
        parse: "admin",
        detail: admin("A live stream acting as the server", 'Body {"env", "version"?}; connect at /_live/streams/<stream>?token=<token>.'),
        response: { 201: S.AnyObject, ...S.errors(400, 401, 404) },
      },
    )
    .put(
      "/streams/:id/subscriptions/:name",
      async ({ request, params, body }) => {
        const env = params.id.startsWith("p") ? "production" : "development";
        await live.putSubscription(contextOf(request, env, undefined), params.id, params.name, body);
        return json({});
      },
      {
        role: "viewer",
        parse: "admin",
        params: Params,
        detail: admin("Add or replace a subscription of an admin stream", 'Body {"schema", "query", "select", "events"} as for /_live.'),
        response: { 200: S.AnyObject, ...S.errors(400, 401, 429) },
      },
    );
}
