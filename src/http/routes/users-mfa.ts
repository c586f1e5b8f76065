// The TOTP second factor of a user schema's signed-in user: GET /<userSchema>/mfa (its state), POST
// /<userSchema>/mfa/totp (a new pending secret), POST /<userSchema>/mfa/totp/confirm (a first code turns it on and
// answers the recovery codes), DELETE /<userSchema>/mfa/totp (a code turns it off). A login completes with
// accessToken grant_type=mfa (users.ts). Each is limited per IP as logins are. On a schema without a user block the
// paths keep their datastore meaning: GET reads the object "mfa", POST .../mfa/totp creates related objects.

import { Elysia } from "elysia";
import type { ApiContext } from "../../request-context.ts";
import type { Burrow } from "../burrow.ts";
import { apiContextStep } from "../api-context.ts";
import { readJsonBody } from "../body.ts";
import { clientIp } from "../origin.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { mfaDocs as docs } from "../openapi-mfa-docs.ts";
import { json, rawJson } from "../respond.ts";
import { keyOfPath, readShape, schemaParam } from "./objects.ts";
import { MAX_PASSWORDS_PER_REQUEST } from "../../datastore/datastore.ts";

export function userMfaRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { accounts, data, secondFactor } = burrow;
  const ip = (request: Request) => clientIp(request, info, burrow.config.trustedProxy);
  const NO_STORE = { "cache-control": "no-store" };
  const isUserSchema = (ctx: ApiContext, name: string) => !!ctx.schemas.schemas.get(name)?.def.user;
  /** The user schema addressed (404 for another), after the per-IP limit. */
  const userSchema = async (ctx: ApiContext, name: string, request: Request) => {
    await accounts.limitIp(ctx, ip(request));
    return accounts.userSchema(ctx, name);
  };

  return new Elysia({ name: "users-mfa" })
    .use(parsers)
    .derive(apiContextStep(burrow, info))
    .get(
      "/:schema/mfa",
      async ({ api, params, request }) => {
        const ctx = await api;
        const name = schemaParam(params.schema);
        if (!isUserSchema(ctx, name)) return rawJson(await data.get(ctx, name, keyOfPath(request), readShape(request)));
        return json(await secondFactor.status(ctx, await userSchema(ctx, name, request)), 200, NO_STORE);
      },
      { detail: docs.status },
    )
    .post(
      "/:schema/mfa/totp",
      async ({ api, params, request }) => {
        const ctx = await api;
        const name = schemaParam(params.schema);
        if (!isUserSchema(ctx, name)) return createRelated(burrow, ctx, name, request, ip(request));
        return json(await secondFactor.enrol(ctx, await userSchema(ctx, name, request)), 200, NO_STORE);
      },
      // The body is read by the handler: none is needed on a user schema, JSON objects on another.
      { parse: "none", detail: docs.enrol },
    )
    .post(
      "/:schema/mfa/totp/confirm",
      async ({ api, params, body, request }) => {
        const ctx = await api;
        const s = await userSchema(ctx, schemaParam(params.schema), request);
        return json(await secondFactor.confirm(ctx, s, body as Record<string, unknown>), 200, NO_STORE);
      },
      { parse: "object", detail: docs.confirm },
    )
    .delete(
      "/:schema/mfa/totp",
      async ({ api, params, body, request }) => {
        const ctx = await api;
        const s = await userSchema(ctx, schemaParam(params.schema), request);
        // The code in the body, or in the query for clients that send no body with DELETE.
        const query = new URL(request.url).searchParams.get("code");
        const given = (body ?? {}) as Record<string, unknown>;
        await secondFactor.disable(ctx, s, given.code === undefined && query !== null ? { code: query } : given);
        return json({});
      },
      { parse: "object", detail: docs.disable },
    );
}

/** POST /<schema>/mfa/totp on a schema without a user block: what the datastore route answers (objects.ts). */
async function createRelated(burrow: Burrow, ctx: ApiContext, name: string, request: Request, ip: string | null): Promise<Response> {
  const body = await readJsonBody(request, burrow.config.bodyLimit);
  const field = ctx.schemas.schemas.get(name)?.fields.get("totp");
  if (field?.type === "relationship" && ctx.schemas.schemas.get(field.schema!)?.def.user)
    await burrow.accounts.limitSignups(ctx, ip, Array.isArray(body) ? Math.min(body.length, MAX_PASSWORDS_PER_REQUEST) : 1);
  return json(await burrow.data.createRelated(ctx, name, "mfa", "totp", body));
}
