// The admin API on user accounts (editors and owners; viewers may read): set a password, revoke every session,
// list and remove linked social accounts and passkeys, see and reset the second factor (TOTP). Development uses its schemas, production those of the latest deployed
// version. Roles are adminGuard's; the account work is src/social/user-admin.ts.

import { Elysia, t } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import type { ApiContext } from "../../request-context.ts";
import { adminDataContext } from "../admin-context.ts";
import type { CompiledSchema } from "../../schema/compiled.ts";
import {
  linkedAccounts,
  revokeUserSessions,
  setUserPassword,
  unlinkAccount,
  userExists,
  userPasswordProblem,
} from "../../social/user-admin.ts";
import { mfaStatus, resetMfa } from "../../auth/second-factor.ts";
import { adminGuard } from "../admin-guard.ts";
import type { BodyParsers } from "../parsers.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";
import type { Burrow } from "../burrow.ts";

const admin = (summary: string, description?: string) => ({ tags: ["admin"], summary, description, security: [{ adminBearer: [] }] });

const UserParams = t.Object({
  env: t.String({ description: "development or production (the latest deployed version's schemas)" }),
  schema: t.String({ description: "a user schema" }),
  key: t.String({ description: "the user's key" }),
});
const ProviderParams = t.Object({
  ...UserParams.properties,
  provider: t.String({ description: "social1, social2, aggregator or oidc:<name>" }),
});
const NewPassword = t.Object(
  { password: t.String({ description: "a non-empty string of at most 1024 characters" }) },
  { additionalProperties: false },
);
const MfaState = t.Object({
  totp: t.String({ description: "off, pending (enrolled, not confirmed) or on" }),
  recovery_codes_left: t.Number({ multipleOf: 1 }),
});
const PasskeyParams = t.Object({
  ...UserParams.properties,
  id: t.String({ description: "the passkey's credential id (base64url)" }),
});
const PasskeyRow = t.Object({
  id: t.String({ description: "the credential id (base64url)" }),
  name: t.String(),
  created: t.String({ format: "date-time" }),
  lastUsed: t.Union([t.String({ format: "date-time" }), t.Null()]),
});
const LinkedAccount = t.Object({
  provider: t.String(),
  subject: t.String({ description: "the provider's id of the account" }),
  created: t.String({ format: "date-time", description: "when it was linked" }),
  lastUsed: t.String({ format: "date-time", description: "when it last signed in" }),
});

/** The server's context on an environment and the user schema named; 404 for either unknown. */
function userSchemaOf(
  burrow: Burrow,
  request: Request,
  params: Record<string, string | null>,
): { ctx: ApiContext; s: CompiledSchema; key: string } {
  const ctx = adminDataContext(burrow, params.env!, null, new URL(request.url).origin);
  return { ctx, s: burrow.accounts.userSchema(ctx, params.schema!), key: params.key! };
}

const noUser = (s: CompiledSchema, key: string) => notFound(`${s.name} "${key.slice(0, 64)}" does not exist`);

export function adminUserRoutes(burrow: Burrow, parsers: BodyParsers) {
  return new Elysia({ name: "admin-users", prefix: "/_admin/api/users" })
    .use(parsers)
    .use(adminGuard(burrow))
    .put(
      "/:env/:schema/:key/password",
      async ({ request, params, body }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        const problem = userPasswordProblem(body.password);
        if (problem) throw badRequest(problem);
        if (!(await setUserPassword(ctx, burrow.sessions[ctx.env], s, key, body.password))) throw noUser(s, key);
        return json({});
      },
      {
        role: "editor",
        parse: "admin",
        params: UserParams,
        body: NewPassword,
        detail: {
          ...admin(
            "Set a user's password (editors and owners)",
            "As a password reset: any temporary password is dropped and every session of the user ends.",
          ),
          ...S.jsonBody(NewPassword),
        },
        response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 404) },
      },
    )
    .delete(
      "/:env/:schema/:key/sessions",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        const revoked = await revokeUserSessions(ctx, burrow.sessions[ctx.env], s.name, key);
        if (revoked === 0 && !(await userExists(ctx, s, key))) throw noUser(s, key);
        return json({ revoked });
      },
      {
        role: "editor",
        params: UserParams,
        detail: admin(
          "Sign a user out everywhere (editors and owners)",
          "Revokes every token and cookie session of the user; answers how many.",
        ),
        response: { 200: t.Object({ revoked: t.Number({ multipleOf: 1 }) }), ...S.errors(401, 403, 404) },
      },
    )
    .get(
      "/:env/:schema/:key/mfa",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        const state = await mfaStatus(ctx, s.name, key);
        if (state.totp === "off" && !(await userExists(ctx, s, key))) throw noUser(s, key);
        return json(state);
      },
      {
        role: "viewer",
        params: UserParams,
        detail: admin("A user's second factor", "Whether TOTP is off, pending or on, and how many recovery codes are unused."),
        response: { 200: MfaState, ...S.errors(401, 404) },
      },
    )
    .delete(
      "/:env/:schema/:key/mfa",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        if (!(await resetMfa(ctx, s.name, key)) && !(await userExists(ctx, s, key))) throw noUser(s, key);
        return json({});
      },
      {
        role: "editor",
        params: UserParams,
        detail: admin(
          "Reset a user's second factor (editors and owners)",
          "Turns TOTP off (or drops a pending enrolment) with its recovery codes; the next password login needs no code.",
        ),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404) },
      },
    )
    .get(
      "/:env/:schema/:key/passkeys",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        const passkeys = await burrow.passkeys.ofUser(ctx, s.name, key);
        if (passkeys.length === 0 && !(await userExists(ctx, s, key))) throw noUser(s, key);
        return json(passkeys);
      },
      {
        role: "viewer",
        params: UserParams,
        detail: admin("A user's passkeys", "Name, credential id, when it was registered and last used; never the keys."),
        response: { 200: t.Array(PasskeyRow), ...S.errors(401, 404) },
      },
    )
    .delete(
      "/:env/:schema/:key/passkeys/:id",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        if (!(await burrow.passkeys.removeOf(ctx, s.name, key, params.id))) {
          if (!(await userExists(ctx, s, key))) throw noUser(s, key);
          throw notFound(`${s.name} "${key.slice(0, 64)}" has no passkey of that id`);
        }
        return json({});
      },
      {
        role: "editor",
        params: PasskeyParams,
        detail: admin("Remove a user's passkey (editors and owners)", "It stops signing in at once."),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404) },
      },
    )
    .get(
      "/:env/:schema/:key/social",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        const accounts = await linkedAccounts(ctx, s.name, key);
        if (accounts.length === 0 && !(await userExists(ctx, s, key))) throw noUser(s, key);
        return json(
          accounts.map((a) => ({
            provider: a.provider,
            subject: a.subject,
            created: new Date(a.linked).toISOString(),
            lastUsed: new Date(a.used).toISOString(),
          })),
        );
      },
      {
        role: "viewer",
        params: UserParams,
        detail: admin("A user's linked social accounts", "Provider, the provider's account id and times; never tokens or secrets."),
        response: { 200: t.Array(LinkedAccount), ...S.errors(401, 404) },
      },
    )
    .delete(
      "/:env/:schema/:key/social/:provider",
      async ({ request, params }) => {
        const { ctx, s, key } = userSchemaOf(burrow, request, params);
        if (!(await unlinkAccount(ctx, s.name, key, params.provider))) {
          if (!(await userExists(ctx, s, key))) throw noUser(s, key);
          throw notFound(`${s.name} "${key.slice(0, 64)}" has no ${params.provider.slice(0, 64)} account linked`);
        }
        return json({});
      },
      {
        role: "editor",
        params: ProviderParams,
        detail: admin("Unlink a user's social account (editors and owners)"),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404) },
      },
    );
}
