// User-schema endpoints under /<userSchema>/<name>: accessToken (form, JSON or GET), refreshToken, logout,
// loggedInUser, forgotPassword, resetPassword. On a schema without a user block, a GET of these names is an
// ordinary read by key and a POST answers the 404 of a schema that is not a user schema.

import { Elysia } from "elysia";
import type { ApiContext } from "../../request-context.ts";
import type { Services } from "../services.ts";
import { apiContextStep } from "../api-context.ts";
import { requestParams } from "../params.ts";
import { clientIp } from "../origin.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { userDocs as docs } from "../openapi-docs.ts";
import { json, rawJson } from "../respond.ts";
import { readShape, schemaParam } from "./objects.ts";

export function userRoutes(services: Services, info: RequestInfo, parsers: BodyParsers) {
  const { accounts, data } = services;
  const limit = services.config.bodyLimit;
  const ip = (request: Request) => clientIp(request, info, services.config.trustedProxy);
  const isUserSchema = (ctx: ApiContext, name: string) => !!ctx.schemas.schemas.get(name)?.def.user;
  /** A GET endpoint, or the object of that key when the schema has no user block. */
  const getEndpoint = (run: (ctx: ApiContext, schema: string, request: Request) => Promise<Response>) =>
    async ({ api, params, request }: { api: ApiContext | Promise<ApiContext>; params: { schema: string }; request: Request }) => {
      const ctx = await api;
      const name = schemaParam(params.schema);
      if (isUserSchema(ctx, name)) return run(ctx, name, request);
      const key = new URL(request.url).pathname.split("/")[2]!;
      return rawJson(await data.get(ctx, name, key, readShape(request)));
    };

  return new Elysia({ name: "users" })
    .use(parsers)
    .derive(apiContextStep(services, info))
    .get("/:schema/accessToken", getEndpoint(async (ctx, schema, request) => rawJson(await accounts.login(ctx, accounts.userSchema(ctx, schema), await requestParams(request, limit), ip(request)))), { detail: docs.accessTokenGet })
    .get("/:schema/logout", getEndpoint(async (ctx, schema) => {
      await accounts.logout(ctx, accounts.userSchema(ctx, schema));
      return json({});
    }), { detail: docs.logout })
    .get("/:schema/loggedInUser", getEndpoint(async (ctx, schema) => rawJson(await accounts.loggedInUser(ctx, accounts.userSchema(ctx, schema)))), { detail: docs.loggedInUser })
    .post("/:schema/accessToken", async ({ api, params, body, request }) => {
      const ctx = await api;
      return rawJson(await accounts.login(ctx, accounts.userSchema(ctx, schemaParam(params.schema)), body as Record<string, string>, ip(request)));
    }, { parse: "params", detail: docs.accessToken })
    .post("/:schema/refreshToken", async ({ api, params, body, request }) => {
      const ctx = await api;
      return rawJson(await accounts.refresh(ctx, accounts.userSchema(ctx, schemaParam(params.schema)), body as Record<string, string>, ip(request)));
    }, { parse: "params", detail: docs.refreshToken })
    .post("/:schema/forgotPassword", async ({ api, params, body, request }) => {
      const ctx = await api;
      await accounts.forgotPassword(ctx, accounts.userSchema(ctx, schemaParam(params.schema)), body as Record<string, unknown>, ip(request));
      return json({});
    }, { parse: "object", detail: docs.forgotPassword })
    .post("/:schema/resetPassword", async ({ api, params, body, request }) => {
      const ctx = await api;
      await accounts.resetPassword(ctx, accounts.userSchema(ctx, schemaParam(params.schema)), body as Record<string, unknown>, ip(request));
      return json({});
    }, { parse: "object", detail: docs.resetPassword });
}
