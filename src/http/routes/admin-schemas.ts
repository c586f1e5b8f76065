// The admin API's schema routes: the definitions of development and of each production version, creating,
// changing and dropping development schemas (with their migrations), deploying development as a production API
// version, and the deploy history.

import { Elysia, t } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import { isValidName } from "../../schema/definition.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDoc as admin, flag, versionParam } from "../admin-context.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

export function adminSchemaRoutes(burrow: Burrow, parsers: BodyParsers) {
  const { catalog } = burrow;
  return new Elysia({ name: "admin-schemas", prefix: "/_admin/api" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get(
      "/schemas",
      async ({ request }) => {
        const v = versionParam(new URL(request.url));
        const defs = catalog.definitions(v);
        if (!defs) throw notFound(`API version ${v} is not deployed`);
        return json(defs);
      },
      {
        role: "viewer",
        query: S.SchemaVersionQuery,
        detail: admin("Schema definitions of development or of a production version"),
        response: { 200: t.Array(S.AnyObject), ...S.errors(400, 401, 404) },
      },
    )
    .get(
      "/schemas/:name",
      async ({ request, params }) => {
        const v = versionParam(new URL(request.url));
        const defs = catalog.definitions(v);
        if (!defs) throw notFound(`API version ${v} is not deployed`);
        const def = defs.find((d) => d.name === params.name);
        if (!def) throw notFound(`schema "${params.name}" does not exist`);
        return json(def);
      },
      {
        role: "viewer",
        query: S.SchemaVersionQuery,
        detail: admin("One schema definition"),
        response: { 200: S.AnyObject, ...S.errors(400, 401, 404) },
      },
    )
    .put(
      "/schemas/:name",
      async ({ request, params, body }) => {
        const url = new URL(request.url);
        if (versionParam(url) !== 0) throw badRequest("production schemas change only by deploying development (POST /_admin/api/deploy)");
        if (!isValidName(params.name))
          throw badRequest(
            `"${params.name}" is not a valid schema name (lowercase letters, digits and _, starting with a letter, at most 64)`,
          );
        const input = body;
        if (input === undefined) throw badRequest("send the schema definition as the JSON body");
        const r = await catalog.put(input, { name: params.name, force: flag(url, "force"), dryRun: flag(url, "dryRun") });
        return json({ ...r.definition, changes: r.changes }, r.created && !flag(url, "dryRun") ? 201 : 200);
      },
      {
        role: "editor",
        parse: "admin",
        query: S.SchemaPutQuery,
        body: t.Optional(S.AnyObject),
        detail: {
          ...admin(
            "Create or change a development schema",
            "The body is a schema definition (fields, permissions, indexes, user block); the answer lists the migration's changes. Destructive changes need ?force=true.",
          ),
          ...S.jsonBody(S.AnyObject, "a schema definition"),
        },
        response: { 200: S.AnyObject, 201: S.AnyObject, ...S.errors(400, 401, 403, 409) },
      },
    )
    .delete(
      "/schemas/:name",
      async ({ request, params }) => {
        if (versionParam(new URL(request.url)) !== 0) throw badRequest("only development schemas can be deleted");
        await catalog.remove(params.name);
        // A user schema's sessions ended with its table; this node forgets those it cached.
        burrow.sessions.development.forgetSchema(params.name);
        return json({});
      },
      {
        role: "editor",
        query: S.SchemaVersionQuery,
        detail: admin("Drop a development schema and its objects"),
        response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 404) },
      },
    )
    .post(
      "/deploy",
      async ({ admin, body }) => {
        const b = (body ?? {}) as Record<string, unknown>;
        if (typeof b !== "object" || b === null || Array.isArray(b)) throw badRequest('send {} or {"version": N, "force": true}');
        for (const k of Object.keys(b)) if (!["version", "force", "dryRun"].includes(k)) throw badRequest(`unknown deploy option "${k}"`);
        const r = await catalog.deploy({ version: b.version, force: b.force === true, dryRun: b.dryRun === true, admin: admin.email });
        if (b.dryRun !== true) for (const w of r.warnings) burrow.log.warn(w);
        return json(r);
      },
      {
        role: "editor",
        parse: "admin",
        body: S.DeployRequest,
        detail: {
          ...admin(
            "Deploy development's schemas as a production API version",
            "Snapshots development as version N and migrates production.db additively.",
          ),
          ...S.jsonBody(S.DeployRequest),
        },
        response: { 200: S.DeployResult, ...S.errors(400, 401, 403, 409) },
      },
    )
    .get(
      "/deploys",
      async () => {
        return json(await catalog.history());
      },
      {
        role: "viewer",
        detail: admin("Deploy history, newest first"),
        response: { 200: S.DeployHistory, ...S.errors(401) },
      },
    );
}
