// Datastore routes: /<schema> and /<schema>/<id> for create (single and batch), read, list, update, delete.

import { Routes } from "../router.ts";
import { badRequest, notFound } from "../../errors.ts";
import { hasNested, upsert } from "../../datastore/upsert.ts";
import { deleteObjects, findObjects } from "../../datastore/find.ts";
import { parseConditions, parseQuery } from "../../datastore/query/parse.ts";
import { parseRelationsHeader } from "../../schema/infer.ts";
import type { Services } from "../../services.ts";
import type { ApiContext } from "../../datastore/context.ts";
import { apiContext } from "../api-context.ts";
import type { RequestInfo } from "../request-meta.ts";
import { notAnEndpoint, userEndpoints } from "./users.ts";
import { readJsonBody } from "../body.ts";
import { json, rawJson } from "../respond.ts";

/** Schema names in paths are case-insensitive (clients have sent "User" for "user"). */
const schemaParam = (s: string) => s.toLowerCase();

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw badRequest("malformed percent-encoding in the URL path");
  }
}

export function objectRoutes(services: Services, info: RequestInfo) {
  const limit = services.config.bodyLimit;
  const objects = services.objects;
  const subresources = services.relations;
  const users = userEndpoints(services, info);
  const context = (request: Request) => apiContext(services, info, request);

  return new Routes()
    .get("/:schema", async ({ request, params }) => {
      const ctx = await context(request);
      const s = objects.schemaForRead(ctx, schemaParam(params.schema));
      const tree = parseQuery(new URL(request.url).searchParams, request.headers);
      const found = await findObjects(ctx, s, tree);
      return found.contentRange === null ? rawJson(found.body) : rawJson(found.body, 206, { "content-range": found.contentRange });
    })
    .post("/:schema", async ({ request, params }) => {
      const ctx = await context(request);
      const body = await readJsonBody(request, limit);
      const relations = parseRelationsHeader(request.headers.get("x-service-relations"));
      const name = schemaParam(params.schema);
      if (relations.size && hasNested(body)) {
        const r = await upsert(objects, ctx, name, body, relations);
        return rawJson(r.body, r.status);
      }
      if (Array.isArray(body)) return json(await objects.createMany(ctx, name, body, relations));
      return rawJson(await objects.create(ctx, name, body, relations), 201);
    })
    .delete("/:schema", async ({ request, params }) => {
      const ctx = await context(request);
      const s = ctx.schemas.schemas.get(schemaParam(params.schema));
      if (!s) throw notFound("This object does not exist");
      const tree = parseConditions(new URL(request.url).searchParams);
      const deleted = await deleteObjects(ctx, s, tree);
      await objects.afterDelete(ctx, [s]);
      // The documented single-object form ?<key>=<id> keeps the 404 of a missing object.
      const single = !tree.or && tree.where.length === 1 && tree.where[0]!.field === s.pk && tree.where[0]!.op === "eq";
      if (single && deleted === 0) throw notFound("This object does not exist");
      return json({});
    })
    // The hottest route: written without async frames (the context is synchronous unless a refresh is due
    // or the request is signed). User endpoints (loggedInUser, logout, accessToken) come first on user schemas.
    .get("/:schema/:id", ({ request, params }) => {
      const name = schemaParam(params.schema);
      const read = (ctx: ApiContext) => {
        const endpoint = users.get.get(params.id);
        if (endpoint && ctx.schemas.schemas.get(name)?.def.user) return endpoint(ctx, name, request);
        return objects.get(ctx, name, params.id).then(rawJson);
      };
      const ctx = context(request);
      return ctx instanceof Promise ? ctx.then(read) : read(ctx);
    })
    .post("/:schema/:id", async ({ request, params }) => {
      const ctx = await context(request);
      const endpoint = users.post.get(params.id);
      if (!endpoint) throw notAnEndpoint();
      return endpoint(ctx, schemaParam(params.schema), request);
    })
    .put("/:schema/:id", async ({ request, params }) => {
      const ctx = await context(request);
      const body = await readJsonBody(request, limit);
      const relations = parseRelationsHeader(request.headers.get("x-service-relations"));
      return rawJson(await objects.update(ctx, schemaParam(params.schema), params.id, body, relations));
    })
    .delete("/:schema/:id", async ({ request, params }) => {
      const ctx = await context(request);
      await objects.remove(ctx, schemaParam(params.schema), params.id);
      return json({});
    })
    .post("/:schema/:id/:field", async ({ request, params }) => {
      const ctx = await context(request);
      const body = await readJsonBody(request, limit);
      return json(await subresources.createRelated(ctx, schemaParam(params.schema), params.id, params.field, body));
    })
    .put("/:schema/:id/:field", async ({ request, params }) => {
      const ctx = await context(request);
      const body = await readJsonBody(request, limit);
      return rawJson(await subresources.append(ctx, schemaParam(params.schema), params.id, params.field, body));
    })
    .delete("/:schema/:id/:field/:values", async ({ request, params }) => {
      const ctx = await context(request);
      // Values are percent-encoded one by one and joined with commas: split the raw segment, then decode.
      const path = new URL(request.url).pathname;
      const values = path.slice(path.lastIndexOf("/") + 1).split(",").map(decodeSegment);
      const cascade = (request.headers.get("x-service-cascadedelete") ?? "false").trim().toLowerCase() !== "false";
      await subresources.pull(ctx, schemaParam(params.schema), params.id, params.field, values, cascade);
      return json({});
    });
}
