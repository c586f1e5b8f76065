// The admin API's own accounts: who am I and log out (every role), and the admins with their roles (owners:
// adminGuard refuses the others). Password and role rules and the last-owner rule are src/system/admins.ts's.

import { Elysia, t } from "elysia";
import { badRequest } from "../../errors.ts";
import { ROLES } from "../../system/admin-roles.ts";
import type { AdminRecord } from "../../system/admins.ts";
import { adminGuard } from "../admin-guard.ts";
import type { BodyParsers } from "../parsers.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";
import type { Burrow } from "../burrow.ts";

const admin = (summary: string, description?: string) => ({ tags: ["admin"], summary, description, security: [{ adminBearer: [] }] });

const Role = t.String({
  enum: [...ROLES],
  description: "owner: everything; editor: all but admins, keys, settings and test mail; viewer: reads only",
});
const Password = t.String({ description: "8 to 1024 characters" });
const AdminView = t.Object({
  id: t.String(),
  email: t.String(),
  role: Role,
  created: t.String({ format: "date-time" }),
  updated: t.String({ format: "date-time" }),
});
const Me = t.Object({
  id: t.String(),
  email: t.String(),
  role: Role,
  expiresAt: t.String({ format: "date-time", description: "when this token stops working" }),
});
const NewAdmin = t.Object(
  { email: t.String({ description: "an email address" }), password: Password, role: Role },
  { additionalProperties: false },
);
const AdminChange = t.Object({ role: t.Optional(Role), password: t.Optional(Password) }, { additionalProperties: false });
const IdParams = t.Object({ id: t.String({ description: "the admin's id" }) });

const view = (a: AdminRecord) => ({
  id: a.id,
  email: a.email,
  role: a.role,
  created: new Date(a.created).toISOString(),
  updated: new Date(a.updated).toISOString(),
});

export function adminAccountRoutes(burrow: Burrow, parsers: BodyParsers) {
  const admins = burrow.admins;
  return new Elysia({ name: "admin-accounts", prefix: "/_admin/api" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get("/me", ({ admin: a }) => json({ id: a.id, email: a.email, role: a.role, expiresAt: new Date(a.expires).toISOString() }), {
      role: "viewer",
      detail: admin("The admin this token belongs to, its role, and when the token expires"),
      response: { 200: Me, ...S.errors(401) },
    })
    .post(
      "/logout",
      async ({ admin: a }) => {
        await admins.logout(a.tokenHash);
        return json({});
      },
      {
        role: "viewer",
        detail: admin("End this token's session (the token stops working)"),
        response: { 200: S.AnyObject, ...S.errors(401) },
      },
    )
    .get("/admins", async () => json((await admins.list()).map(view)), {
      role: "owner",
      detail: admin("Every admin with its role (owners only)"),
      response: { 200: t.Array(AdminView), ...S.errors(401, 403) },
    })
    .post("/admins", async ({ body }) => json(view(await admins.create(body.email, body.password, body.role)), 201), {
      role: "owner",
      parse: "admin",
      body: NewAdmin,
      detail: { ...admin("Add an admin (owners only)", "409 when an admin has the email."), ...S.jsonBody(NewAdmin) },
      response: { 201: AdminView, ...S.errors(400, 401, 403, 409) },
    })
    .put(
      "/admins/:id",
      async ({ admin: a, params, body }) => {
        if (body.role === undefined && body.password === undefined) throw badRequest("send role, password or both");
        // Admins changing their own password stay signed in here; every other token of theirs is revoked.
        return json(view(await admins.update(params.id, body, a.id === params.id ? a.tokenHash : "")));
      },
      {
        role: "owner",
        parse: "admin",
        params: IdParams,
        body: AdminChange,
        detail: {
          ...admin(
            "Change an admin's role or password (owners only)",
            "A new password revokes the admin's other tokens. The last owner cannot be demoted (409).",
          ),
          ...S.jsonBody(AdminChange),
        },
        response: { 200: AdminView, ...S.errors(400, 401, 403, 404, 409) },
      },
    )
    .delete(
      "/admins/:id",
      async ({ params }) => {
        await admins.remove(params.id);
        return json({});
      },
      {
        role: "owner",
        params: IdParams,
        detail: admin("Remove an admin and its tokens (owners only)", "The last owner cannot be removed (409)."),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404, 409) },
      },
    );
}
