// The admin API's hook routes (the console's hooks screen): the hooks each schema has in an environment's current
// code with the after-hook queue's figures, and the dead-letter list - changes whose after-hook failed every try -
// with a retry (back to the queue, tries counted afresh) and a removal per change.

import { Elysia, t } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import type { EnvName } from "../../system/environments.ts";
import { hookFigures, listDead, removeDead, retryDead } from "../../code/hook-dead.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDoc as admin, environmentOf } from "../admin-context.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

const EnvQuery = t.Object({
  env: t.Optional(t.String({ description: "development or production (default development)" })),
  limit: t.Optional(t.String({ description: "dead changes listed, 1..500 (default 100)" })),
  before: t.Optional(t.String({ description: "only dead changes with a smaller id (paging)" })),
});
const IdParams = t.Object({ id: t.String() });

const envOf = (url: URL): EnvName => environmentOf(url.searchParams.get("env") ?? "development");

function idOf(raw: string): number {
  if (!/^[1-9]\d{0,15}$/.test(raw)) throw badRequest("the id of a dead change is a positive integer");
  return Number(raw);
}

export function adminHookRoutes(burrow: Burrow, parsers: BodyParsers) {
  return new Elysia({ name: "admin-hooks", prefix: "/_admin/api/hooks" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get(
      "/",
      async ({ request }) => {
        const env = envOf(new URL(request.url));
        const version = env === "development" ? 0 : (burrow.catalog.latestVersion() ?? 0);
        const code = env === "development" ? burrow.code.development() : burrow.code.production(version);
        return json({ env, version, hooks: code?.hooks ?? {}, queue: await hookFigures(burrow.envDbs[env]) });
      },
      {
        role: "viewer",
        query: EnvQuery,
        detail: admin(
          "Hooks and the after-hook queue",
          "The hooks per schema of the environment's current code; changes queued for after-hooks (and the oldest one's age) and dead ones.",
        ),
        response: { 200: S.AnyObject, ...S.errors(400, 401) },
      },
    )
    .get(
      "/dead",
      async ({ request }) => {
        const url = new URL(request.url);
        const limit = url.searchParams.get("limit");
        const before = url.searchParams.get("before");
        if (limit !== null && !/^([1-9]\d{0,2})$/.test(limit)) throw badRequest("limit must be an integer from 1 to 500");
        if (limit !== null && Number(limit) > 500) throw badRequest("limit must be an integer from 1 to 500");
        const dead = await listDead(
          burrow.envDbs[envOf(url)],
          limit === null ? 100 : Number(limit),
          before === null ? undefined : idOf(before),
        );
        return json({ dead });
      },
      {
        role: "viewer",
        query: EnvQuery,
        detail: admin(
          "After-hooks that failed every try",
          "Newest first: the change (schema, event, key, object, previous, caller, source), its tries and the last error.",
        ),
        response: { 200: S.AnyObject, ...S.errors(400, 401) },
      },
    )
    .post(
      "/dead/:id/retry",
      async ({ request, params }) => {
        if (!(await retryDead(burrow.envDbs[envOf(new URL(request.url))], idOf(params.id)))) throw notFound("there is no such dead change");
        return json({ queued: true }, 202);
      },
      {
        role: "editor",
        params: IdParams,
        query: EnvQuery,
        detail: admin("Try a dead change's after-hook again", "Back to the queue with its tries counted afresh: 202."),
        response: { 202: S.AnyObject, ...S.errors(400, 401, 404) },
      },
    )
    .delete(
      "/dead/:id",
      async ({ request, params }) => {
        if (!(await removeDead(burrow.envDbs[envOf(new URL(request.url))], idOf(params.id))))
          throw notFound("there is no such dead change");
        return json({ removed: true });
      },
      {
        role: "editor",
        params: IdParams,
        query: EnvQuery,
        detail: admin("Remove a dead change", '200 {"removed": true}.'),
        response: { 200: S.AnyObject, ...S.errors(400, 401, 404) },
      },
    );
}
