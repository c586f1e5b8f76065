// Admin API routes that describe the server to the console: the settings form (types, limits, defaults of every
// setting), so the console draws settings the server knows without a copy of the spec of its own.

import { Elysia } from "elysia";
import { describeSettings } from "../../system/settings.ts";
import type { Services } from "../services.ts";
import { adminGuard } from "../admin-guard.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

export function adminMetaRoutes(services: Services) {
  const spec = describeSettings();
  return new Elysia({ name: "admin-meta", prefix: "/_admin/api" })
    .use(adminGuard(services))
    .get("/settings-spec", () => json(spec), {
      detail: { tags: ["admin"], summary: "Every setting with its type, limits and per-environment defaults", description: "Leaves are {type, secret?, url?, min?, max?, oneOf?, default: {development, production}} (secrets have no default shown); other members are sections.", security: [{ adminBearer: [] }] },
      response: { 200: S.AnyObject, ...S.errors(401, 403) },
    });
}
