// Datastore routes: /<schema> and /<schema>/<id> for create (single and batch), read, list, update, delete,
// and the relationship sub-resources /<schema>/<id>/<field>[/<values>].

import { Elysia } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import { hasNested, upsert } from "../../datastore/upsert.ts";
import { deleteObjects, findObjects } from "../../datastore/find.ts";
import { type ReadShape, parseConditions, parseQuery, parseReadShape } from "../../datastore/query/parse.ts";
import { parseRelationsHeader } from "../../schema/infer.ts";
import type { Services } from "../../services.ts";
import type { ApiContext } from "../../datastore/context.ts";
import { apiContextStep } from "../api-context.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { json, rawJson } from "../respond.ts";

/** Schema names in paths are case-insensitive (clients have sent "User" for "user"). */
export const schemaParam = (s: string) => s.toLowerCase();

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw badRequest("malformed percent-encoding in the URL path");
  }
}

/** X-Service-Select / X-Service-Expand / `_expand` of a read by key (null for the plain object). */
export function readShape(request: Request): ReadShape | null {
  const url = request.url;
  const qi = url.indexOf("?");
  return parseReadShape(qi < 0 ? "" : url.slice(qi + 1), request.headers);
}

export function objectRoutes(services: Services, info: RequestInfo, parsers: BodyParsers) {
  const objects = services.objects;
  const subresources = services.relations;

  return new Elysia({ name: "objects" })
    .use(parsers)
    .derive(apiContextStep(services, info))
    .get("/:schema", async ({ api, request, params }) => {
      const ctx = await api;
      const s = objects.schemaForRead(ctx, schemaParam(params.schema));
      const tree = parseQuery(new URL(request.url).searchParams, request.headers);
      const found = await findObjects(ctx, s, tree);
      return found.contentRange === null ? rawJson(found.body) : rawJson(found.body, 206, { "content-range": found.contentRange });
    })
    .post(
      "/:schema",
      async ({ api, request, params, body }) => {
        const ctx = await api;
        const relations = parseRelationsHeader(request.headers.get("x-service-relations"));
        const name = schemaParam(params.schema);
        if (relations.size && hasNested(body)) {
          const r = await upsert(objects, ctx, name, body, relations);
          return rawJson(r.body, r.status);
        }
        if (Array.isArray(body)) return json(await objects.createMany(ctx, name, body, relations));
        return rawJson(await objects.create(ctx, name, body, relations), 201);
      },
      { parse: "datastore" },
    )
    .delete("/:schema", async ({ api, request, params }) => {
      const ctx = await api;
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
    // The hottest route: no async frame when the context is ready (unsigned requests).
    .get("/:schema/:id", ({ api, params, request }) => {
      const shape = readShape(request);
      const read = (ctx: ApiContext) => objects.get(ctx, schemaParam(params.schema), params.id, shape).then(rawJson);
      return api instanceof Promise ? api.then(read) : read(api);
    })
    .put(
      "/:schema/:id",
      async ({ api, request, params, body }) => {
        const ctx = await api;
        const relations = parseRelationsHeader(request.headers.get("x-service-relations"));
        return rawJson(await objects.update(ctx, schemaParam(params.schema), params.id, body, relations));
      },
      { parse: "datastore" },
    )
    .delete("/:schema/:id", async ({ api, params }) => {
      await objects.remove(await api, schemaParam(params.schema), params.id);
      return json({});
    })
    .post(
      "/:schema/:id/:field",
      async ({ api, params, body }) => json(await subresources.createRelated(await api, schemaParam(params.schema), params.id, params.field, body)),
      { parse: "datastore" },
    )
    .put(
      "/:schema/:id/:field",
      async ({ api, params, body }) => rawJson(await subresources.append(await api, schemaParam(params.schema), params.id, params.field, body)),
      { parse: "datastore" },
    )
    .delete("/:schema/:id/:field/:values", async ({ api, request, params }) => {
      const ctx = await api;
      // Values are percent-encoded one by one and joined with commas: split the raw segment, then decode.
      const path = new URL(request.url).pathname;
      const values = path.slice(path.lastIndexOf("/") + 1).split(",").map(decodeSegment);
      const cascade = (request.headers.get("x-service-cascadedelete") ?? "false").trim().toLowerCase() !== "false";
      await subresources.pull(ctx, schemaParam(params.schema), params.id, params.field, values, cascade);
      return json({});
    });
}
