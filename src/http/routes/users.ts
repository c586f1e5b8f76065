// User-schema endpoints under /<userSchema>/<name>: accessToken (form, JSON or GET), refreshToken, logout,
// loggedInUser, forgotPassword, resetPassword. These names take precedence over object keys on user schemas.

import type { ApiContext } from "../../datastore/context.ts";
import { ApiError } from "../../errors.ts";
import type { Services } from "../../services.ts";
import { objectBody, requestParams } from "../params.ts";
import { clientIp } from "../origin.ts";
import type { RequestInfo } from "../request-meta.ts";
import { json, rawJson } from "../respond.ts";

type Endpoint = (ctx: ApiContext, schema: string, request: Request) => Promise<Response>;

export const USER_GET_ENDPOINTS = new Set(["accessToken", "logout", "loggedInUser"]);
export const USER_POST_ENDPOINTS = new Set(["accessToken", "refreshToken", "forgotPassword", "resetPassword"]);

export function userEndpoints(services: Services, info: RequestInfo): { get: Map<string, Endpoint>; post: Map<string, Endpoint> } {
  const { accounts } = services;
  const limit = services.config.bodyLimit;
  const ip = (request: Request) => clientIp(request, info, services.config.trustedProxy);
  const login: Endpoint = async (ctx, schema, request) => rawJson(await accounts.login(ctx, accounts.userSchema(ctx, schema), await requestParams(request, limit), ip(request)));
  return {
    get: new Map<string, Endpoint>([
      ["accessToken", login],
      ["logout", async (ctx, schema) => {
        await accounts.logout(ctx, accounts.userSchema(ctx, schema));
        return json({});
      }],
      ["loggedInUser", async (ctx, schema) => rawJson(await accounts.loggedInUser(ctx, accounts.userSchema(ctx, schema)))],
    ]),
    post: new Map<string, Endpoint>([
      ["accessToken", login],
      ["refreshToken", async (ctx, schema, request) => rawJson(await accounts.refresh(ctx, accounts.userSchema(ctx, schema), await requestParams(request, limit), ip(request)))],
      ["forgotPassword", async (ctx, schema, request) => {
        await accounts.forgotPassword(ctx, accounts.userSchema(ctx, schema), await objectBody(request, limit), ip(request));
        return json({});
      }],
      ["resetPassword", async (ctx, schema, request) => {
        await accounts.resetPassword(ctx, accounts.userSchema(ctx, schema), await objectBody(request, limit), ip(request));
        return json({});
      }],
    ]),
  };
}

/** A POST to /<schema>/<id> that is not a user endpoint. */
export function notAnEndpoint(): ApiError {
  return new ApiError(405, "POST is not allowed here", { headers: { allow: "GET, PUT, DELETE" } });
}
