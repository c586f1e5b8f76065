// Passkey endpoints of user schemas under /<userSchema>/passkeys: registerOptions and register (signed in),
// loginOptions (the API key), the signed-in user's list and removal. The login itself is accessToken with
// grant_type=passkey (src/auth/passkeys.ts's grant). On a schema without a user block a GET of /passkeys is an
// ordinary read by key; the other routes answer the 404 of a schema that is not a user schema.

import { Elysia } from "elysia";
import type { RequestPlace } from "../../auth/passkeys.ts";
import type { ApiContext } from "../../request-context.ts";
import type { Burrow } from "../burrow.ts";
import { apiContextStep } from "../api-context.ts";
import { clientIp, originText, requestOrigin } from "../origin.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { passkeyDocs as docs } from "../openapi-passkey-docs.ts";
import { json, rawJson } from "../respond.ts";
import { keyOfPath, readShape, schemaParam } from "./objects.ts";

type Api = { api: ApiContext | Promise<ApiContext>; params: { schema: string }; request: Request };

export function userPasskeyRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { accounts, passkeys, data } = burrow;
  const ip = (request: Request) => clientIp(request, info, burrow.config.trustedProxy);
  /** The host and origin the client addressed (forwarded by a trusted proxy): the relying party unless settings name one. */
  const place = (request: Request): RequestPlace => {
    const o = requestOrigin(request, info, burrow.config.trustedProxy);
    return { host: o.host, origin: originText(o) };
  };
  const context = async ({ api, params }: Api) => {
    const ctx = await api;
    return { ctx, s: accounts.userSchema(ctx, schemaParam(params.schema)) };
  };
  const NO_STORE = { "cache-control": "no-store" };

  return new Elysia({ name: "users-passkeys" })
    .use(parsers)
    .derive(apiContextStep(burrow, info))
    .post(
      "/:schema/passkeys/registerOptions",
      async (c) => {
        const { ctx, s } = await context(c);
        return json(await passkeys.registerOptions(ctx, s, place(c.request), ip(c.request)), 200, NO_STORE);
      },
      { parse: "object", detail: docs.registerOptions },
    )
    .post(
      "/:schema/passkeys/register",
      async (c) => {
        const { ctx, s } = await context(c);
        return json(await passkeys.register(ctx, s, c.body as Record<string, unknown>, ip(c.request)), 201);
      },
      { parse: "object", detail: docs.register },
    )
    .post(
      "/:schema/passkeys/loginOptions",
      async (c) => {
        const { ctx, s } = await context(c);
        return json(await passkeys.loginOptions(ctx, s, c.body as Record<string, unknown>, place(c.request), ip(c.request)), 200, NO_STORE);
      },
      { parse: "object", detail: docs.loginOptions },
    )
    .get(
      "/:schema/passkeys",
      async ({ api, params, request }) => {
        const ctx = await api;
        const name = schemaParam(params.schema);
        if (!ctx.schemas.schemas.get(name)?.def.user) return rawJson(await data.get(ctx, name, keyOfPath(request), readShape(request)));
        return json({ passkeys: await passkeys.list(ctx, accounts.userSchema(ctx, name), ip(request)) });
      },
      { detail: docs.list },
    )
    .delete(
      "/:schema/passkeys/:id",
      async (c) => {
        const { ctx, s } = await context(c);
        await passkeys.remove(ctx, s, c.params.id, ip(c.request));
        return json({});
      },
      { detail: docs.remove },
    );
}
