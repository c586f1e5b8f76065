// User-schema endpoints under /<userSchema>/<name>: accessToken (form, JSON or GET), the legacy session login
// (a cookie), refreshToken, logout, loggedInUser, forgotPassword, resetPassword, requestCode, requestVerification,
// verifyEmail. On a schema without a user
// block, a GET of these names is an ordinary read by key and a POST answers the 404 of a schema that is not a
// user schema.

import { Elysia } from "elysia";
import type { ApiContext } from "../../request-context.ts";
import type { Burrow } from "../burrow.ts";
import { apiContextStep, resolveApi, withSessionCookie } from "../api-context.ts";
import { requestParams } from "../params.ts";
import { clientIp, originText, requestOrigin } from "../origin.ts";
import { endSessionCookie, sessionCookie, sessionToken } from "../../auth/session-cookie.ts";
import { sessionCookieHeaders } from "../set-cookie.ts";
import { familyOf } from "../../auth/sessions.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { userDocs as docs } from "../openapi-docs.ts";
import { json, rawJson } from "../respond.ts";
import { keyOfPath, readShape, schemaParam } from "./objects.ts";

export function userRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { accounts, data } = burrow;
  const limit = burrow.config.bodyLimit;
  const ip = (request: Request) => clientIp(request, info, burrow.config.trustedProxy);
  const isUserSchema = (ctx: ApiContext, name: string) => !!ctx.schemas.schemas.get(name)?.def.user;
  /** A GET endpoint, or the object of that key when the schema has no user block. */
  const getEndpoint =
    (run: (ctx: ApiContext, schema: string, request: Request) => Promise<Response>) =>
    async ({ api, params, request }: { api: ApiContext | Promise<ApiContext>; params: { schema: string }; request: Request }) => {
      const ctx = await api;
      const name = schemaParam(params.schema);
      if (isUserSchema(ctx, name)) return run(ctx, name, request);
      return readByKey(ctx, name, request);
    };
  const readByKey = async (ctx: ApiContext, name: string, request: Request) =>
    rawJson(await data.get(ctx, name, keyOfPath(request), readShape(request)));
  /** Session cookies are Secure when the client reached us over https (directly or through a trusted proxy). */
  const secure = (request: Request) => requestOrigin(request, info, burrow.config.trustedProxy).scheme === "https";
  const NO_STORE = { "cache-control": "no-store" };
  /** Where a mailed verification link points: --public-url, else the origin the request addressed. */
  const linkBase = (request: Request) =>
    (burrow.config.publicUrl ?? originText(requestOrigin(request, info, burrow.config.trustedProxy))).replace(/\/+$/, "");

  return (
    new Elysia({ name: "users" })
      .use(parsers)
      // The legacy session login resolves its context before the group's derive step, without the session cookie:
      // a client replaying a logged-out or expired cookie must still be able to log in.
      .get(
        "/:schema/login",
        async ({ params, request }) => {
          const ctx = await resolveApi(burrow, info, request, params, "ignore");
          const name = schemaParam(params.schema);
          if (!isUserSchema(ctx, name))
            return readByKey(await withSessionCookie(burrow, ctx, sessionToken(request.headers.get("cookie"))), name, request);
          const login = await accounts.sessionLogin(ctx, accounts.userSchema(ctx, name), await requestParams(request, limit), ip(request));
          return rawJson(login.user, 200, {
            ...NO_STORE,
            ...sessionCookieHeaders(request, sessionCookie(login.token, login.expiresIn, secure(request))),
          });
        },
        { detail: docs.login },
      )
      .derive(apiContextStep(burrow, info))
      .get(
        "/:schema/accessToken",
        getEndpoint(async (ctx, schema, request) =>
          rawJson(await accounts.login(ctx, accounts.userSchema(ctx, schema), await requestParams(request, limit), ip(request))),
        ),
        { detail: docs.accessTokenGet },
      )
      .get(
        "/:schema/logout",
        getEndpoint(async (ctx, schema, request) => {
          await accounts.logout(ctx, accounts.userSchema(ctx, schema));
          // A session that came from the cookie ended: the cookie is replaced by an expired "no session" marker.
          const token = sessionToken(request.headers.get("cookie"));
          const family = ctx.principal.kind === "user" ? ctx.principal.family : null;
          if (token === null || familyOf(token) !== family) return json({});
          return json({}, 200, { ...NO_STORE, "set-cookie": endSessionCookie(secure(request)) });
        }),
        { detail: docs.logout },
      )
      .get(
        "/:schema/loggedInUser",
        getEndpoint(async (ctx, schema) => rawJson(await accounts.loggedInUser(ctx, accounts.userSchema(ctx, schema)))),
        { detail: docs.loggedInUser },
      )
      .post(
        "/:schema/accessToken",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          return rawJson(
            await accounts.login(ctx, accounts.userSchema(ctx, schemaParam(params.schema)), body as Record<string, string>, ip(request)),
          );
        },
        { parse: "params", detail: docs.accessToken },
      )
      .post(
        "/:schema/refreshToken",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          return rawJson(
            await accounts.refresh(ctx, accounts.userSchema(ctx, schemaParam(params.schema)), body as Record<string, string>, ip(request)),
          );
        },
        { parse: "params", detail: docs.refreshToken },
      )
      .post(
        "/:schema/forgotPassword",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          await accounts.forgotPassword(
            ctx,
            accounts.userSchema(ctx, schemaParam(params.schema)),
            body as Record<string, unknown>,
            ip(request),
          );
          return json({});
        },
        { parse: "object", detail: docs.forgotPassword },
      )
      .post(
        "/:schema/requestCode",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          const s = accounts.userSchema(ctx, schemaParam(params.schema));
          await burrow.emailAccounts.requestCode(ctx, s, body as Record<string, unknown>, ip(request));
          return json({});
        },
        { parse: "object", detail: docs.requestCode },
      )
      .post(
        "/:schema/requestVerification",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          const s = accounts.userSchema(ctx, schemaParam(params.schema));
          await burrow.emailAccounts.requestVerification(ctx, s, body as Record<string, unknown>, ip(request), linkBase(request));
          return json({});
        },
        { parse: "object", detail: docs.requestVerification },
      )
      .post(
        "/:schema/verifyEmail",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          const s = accounts.userSchema(ctx, schemaParam(params.schema));
          return rawJson(await burrow.emailAccounts.verifyEmail(ctx, s, body as Record<string, unknown>, ip(request)));
        },
        { parse: "object", detail: docs.verifyEmail },
      )
      .post(
        "/:schema/resetPassword",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          await accounts.resetPassword(
            ctx,
            accounts.userSchema(ctx, schemaParam(params.schema)),
            body as Record<string, unknown>,
            ip(request),
          );
          return json({});
        },
        { parse: "object", detail: docs.resetPassword },
      )
  );
}
