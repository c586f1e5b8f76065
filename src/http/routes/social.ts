// Social sign-in routes under /<userSchema>/<name>, one per name of src/social/endpoints.ts and verb it answers
// (both spellings: ...Social1 / ...Facebook, ...Social2 / ...Twitter, aggregator / gigya, oidc). Parameters come
// from the query, a form or JSON. On a schema without a user block these paths keep their datastore meaning: a
// GET reads the object of that key, a DELETE deletes it, a POST is the 404 of a schema that is not a user schema.

import { Elysia } from "elysia";
import type { ApiContext } from "../../request-context.ts";
import type { Burrow } from "../burrow.ts";
import { apiContextStep } from "../api-context.ts";
import { queryAndBodyParams } from "../params.ts";
import { clientIp, requestOrigin } from "../origin.ts";
import { sessionCookie } from "../../auth/session-cookie.ts";
import { sessionCookieHeaders } from "../set-cookie.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { json, rawJson } from "../respond.ts";
import { keyOfPath, readShape, schemaParam } from "./objects.ts";
import { SOCIAL_ENDPOINTS, type SocialEndpoint } from "../../social/endpoints.ts";

export function socialRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { accounts, data, social } = burrow;
  const limit = burrow.config.bodyLimit;
  const NO_STORE = { "cache-control": "no-store" };

  const run = async (ep: SocialEndpoint, api: ApiContext | Promise<ApiContext>, schema: string, request: Request): Promise<Response> => {
    const ctx = await api;
    const name = schemaParam(schema);
    if (!ctx.schemas.schemas.get(name)?.def.user) {
      if (request.method === "GET") return rawJson(await data.get(ctx, name, keyOfPath(request), readShape(request)));
      if (request.method === "DELETE") {
        await data.remove(ctx, name, keyOfPath(request));
        return json({});
      }
    }
    const s = accounts.userSchema(ctx, name);
    const answer = await social.run(
      ctx,
      s,
      ep,
      await queryAndBodyParams(request, limit),
      clientIp(request, info, burrow.config.trustedProxy),
    );
    if (!answer.session) return rawJson(answer.body, answer.status, NO_STORE);
    const secure = requestOrigin(request, info, burrow.config.trustedProxy).scheme === "https";
    return rawJson(answer.body, answer.status, {
      ...NO_STORE,
      ...sessionCookieHeaders(request, sessionCookie(answer.session.token, answer.session.expiresIn, secure)),
    });
  };

  const app = new Elysia({ name: "social" }).use(parsers).derive(apiContextStep(burrow, info));
  for (const ep of SOCIAL_ENDPOINTS) {
    // A literal type, so Elysia types the :schema parameter.
    const path = `/:schema/${ep.name}` as "/:schema/endpoint";
    const detail = { tags: ["Social sign-in"], summary: `${ep.name} (${ep.provider}: ${ep.action})` };
    // Elysia adds each route to the instance itself; the typed chain is not needed for a loop of them.
    for (const verb of ep.verbs) {
      // The body is read by the handler (query and body merged), so no parser runs first.
      if (verb === "GET") app.get(path, ({ api, params, request }) => run(ep, api, params.schema, request), { detail });
      else if (verb === "POST")
        app.post(path, ({ api, params, request }) => run(ep, api, params.schema, request), { parse: "none", detail });
      else app.delete(path, ({ api, params, request }) => run(ep, api, params.schema, request), { parse: "none", detail });
    }
  }
  return app;
}
