// The admin API's one access check, as an Elysia macro: a route declares the least role it needs next to it,
//
//   new Elysia({ name: "admin-things", prefix: "/_admin/api/things" })
//     .use(adminGuard(burrow))
//     .get("/:id", ({ admin, params }) => ..., { role: "viewer" })
//
// and the macro turns `Authorization: Bearer <token>` (from POST /_admin/api/login) into the admin with its
// current role, as `admin` ({id, email, role, expires, tokenHash}) in the context: 401 without a valid, unexpired
// token, 403 when the role is below the route's, then 400 for a malformed percent-escape in the path. A route
// without a role would take no token at all, so tests/api/admin-roles.test.ts sends every admin route (but login)
// a request without one and expects 401.

import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { type Role, allows, withArticle } from "../system/admin-roles.ts";
import type { AdminSession } from "../system/admins.ts";
import type { Burrow } from "./burrow.ts";
import { bearerToken } from "./admin-context.ts";
import { checkPathParams } from "./path-params.ts";

const NO_TOKEN = "admin authorization required: send Authorization: Bearer <token> from POST /_admin/api/login";

/** The admin of a request's bearer token, or 401. */
async function bearerAdmin(burrow: Burrow, request: Request): Promise<AdminSession> {
  const due = burrow.refreshIfDue();
  if (due) await due;
  const token = bearerToken(request);
  const admin = token ? await burrow.admins.authenticate(token) : null;
  if (!admin) throw new ApiError(401, NO_TOKEN, { headers: { "www-authenticate": 'Bearer realm="burrow-admin"' } });
  return admin;
}

export function adminGuard(burrow: Burrow) {
  // The check runs at transform, as a derive would: before the route's body and params are validated, so a
  // request without a token learns nothing about the route's input (401, not 400). resolve then hands the
  // admin to the handler, typed.
  const checked = new WeakMap<Request, AdminSession>();
  return new Elysia().macro({
    role: (need: Role) => ({
      async transform({ request, params }: { request: Request; params?: Record<string, string | null> }) {
        const admin = await bearerAdmin(burrow, request);
        if (!allows(admin.role, need)) throw new ApiError(403, `this needs the ${need} role; ${admin.email} is ${withArticle(admin.role)}`);
        if (params !== undefined) checkPathParams(params, request);
        checked.set(request, admin);
      },
      resolve({ request }: { request: Request }) {
        const admin = checked.get(request);
        if (!admin) throw new ApiError(401, NO_TOKEN);
        return { admin };
      },
    }),
  });
}
