// The admin API's one access check, as an Elysia plugin: `Authorization: Bearer <token>` (from POST
// /_admin/api/login) becomes the admin with its current role, as `admin` ({id, email, role, expires, tokenHash})
// in the context; 401 without a valid, unexpired token, 403 when the role does not allow the request
// (src/system/admin-roles.ts decides from the method and the route's path, so new routes need no code of their own).
//
// How a route file uses it: in its own Elysia instance, whose prefix starts with /_admin/api, after the routes
// that need no token (login):
//
//   new Elysia({ name: "admin-things", prefix: "/_admin/api/things" })
//     .use(parsers)
//     .use(adminGuard(services))
//     .get("/:id", ({ admin, params }) => ...)
//
// It is a scoped derive: it runs for every route that instance registers after the .use (any method, HEAD
// included), and for no route outside the instance. The plugin has no name on purpose: a named plugin is used
// once per app, so a second route file using it would go unguarded (tests/api/admin-roles.test.ts checks both).

import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { adminMayDo, withArticle } from "../system/admin-roles.ts";
import type { AdminSession } from "../system/admins.ts";
import type { Services } from "./services.ts";
import { bearerToken } from "./admin-context.ts";

const PREFIX = "/_admin/api";

const NO_TOKEN = "admin authorization required: send Authorization: Bearer <token> from POST /_admin/api/login";

/** The admin of a request's bearer token, or 401. */
async function bearerAdmin(services: Services, request: Request): Promise<AdminSession> {
  const due = services.refreshIfDue();
  if (due) await due;
  const token = bearerToken(request);
  const admin = token ? await services.admins.authenticate(token) : null;
  if (!admin) throw new ApiError(401, NO_TOKEN, { headers: { "www-authenticate": 'Bearer realm="burrow-admin"' } });
  return admin;
}

export function adminGuard(services: Services) {
  return new Elysia().derive({ as: "scoped" }, async ({ request, route }) => {
    const admin = await bearerAdmin(services, request);
    // The route's pattern ("/_admin/api/admins/:id"), not the request's path: escapes and extra slashes cannot
    // make a request look like another route.
    const pattern = route || new URL(request.url).pathname;
    const may = adminMayDo(admin.role, request.method, pattern.startsWith(PREFIX) ? pattern.slice(PREFIX.length) : pattern);
    if (!may.ok) throw new ApiError(403, `this needs the ${may.need} role; ${admin.email} is ${withArticle(admin.role)}`);
    return { admin };
  });
}
