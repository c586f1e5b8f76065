// Datastore routes: /<schema> and /<schema>/<id> for create (single and batch), read, list, update, delete,
// and the relationship sub-resources /<schema>/<id>/<field>[/<values>].

import { Elysia, NotFoundError } from "elysia";
import { MAX_PASSWORDS_PER_REQUEST, hasNested } from "../../datastore/datastore.ts";
import { type ReadShape, parseConditions, parseQuery, parseReadShape } from "../../datastore/query/parse.ts";
import { parseRelationsHeader } from "../../schema/infer.ts";
import type { Burrow } from "../burrow.ts";
import type { ApiContext } from "../../request-context.ts";
import { apiContextStep, resolveApi } from "../api-context.ts";
import { decodeSegment } from "../path-params.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { objectDocs as docs } from "../openapi-docs.ts";
import { json, rawJson } from "../respond.ts";
import { jsonBodyOf } from "../body.ts";
import { callMethod, methodOf } from "../method-call.ts";
import { clientIp } from "../origin.ts";

/** Schema names in paths are case-insensitive (clients have sent "User" for "user"). */
export const schemaParam = (s: string) => s.toLowerCase();

/** X-Service-Select / X-Service-Expand / `_expand` of a read by key (null for the plain object). */
export function readShape(request: Request): ReadShape | null {
  const url = request.url;
  const qi = url.indexOf("?");
  return parseReadShape(qi < 0 ? "" : url.slice(qi + 1), request.headers);
}

/** The key segment of /<schema>/<key> as sent (user-schema endpoint names are read by key on other schemas). */
export const keyOfPath = (request: Request) => new URL(request.url).pathname.split("/")[2]!;

export function objectRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const data = burrow.data;
  const list = async (ctx: ApiContext, schema: string, request: Request): Promise<Response> => {
    const tree = parseQuery(new URL(request.url).searchParams, request.headers);
    const found = await data.list(ctx, schema, tree);
    return found.contentRange === null ? rawJson(found.body) : rawJson(found.body, 206, { "content-range": found.contentRange });
  };

  return (
    new Elysia({ name: "objects" })
      .use(parsers)
      // The hottest route is declared before the group's derive step and resolves the same context itself:
      // measured, the per-request derive (an extra context merge and, in the minified build, an awaited step)
      // cost GET by key several points of throughput. No async frame when the context is ready.
      .get(
        "/:schema/:id",
        ({ params, request }) => {
          const api = resolveApi(burrow, info, request, params);
          const shape = readShape(request);
          const read = (ctx: ApiContext) => data.get(ctx, schemaParam(params.schema), params.id, shape).then(rawJson);
          return api instanceof Promise ? api.then(read) : read(api);
        },
        { detail: docs.get },
      )
      // A list, or a custom code method called with GET (the hottest way to call one): the same, for the same reason.
      .get(
        "/:schema",
        ({ params, request }) => {
          const api = resolveApi(burrow, info, request, params);
          const answer = (ctx: ApiContext) => {
            const method = methodOf(burrow, ctx, schemaParam(params.schema));
            if (method) return callMethod(burrow, ctx, request, method, "GET");
            return list(ctx, schemaParam(params.schema), request);
          };
          return api instanceof Promise ? api.then(answer) : answer(api);
        },
        { detail: docs.list },
      )
      .derive(apiContextStep(burrow, info))
      .post(
        "/:schema",
        async ({ api, request, params, body: text }) => {
          const ctx = await api;
          const name = schemaParam(params.schema);
          const method = methodOf(burrow, ctx, name);
          if (method) return callMethod(burrow, ctx, request, method, "POST");
          const body = jsonBodyOf(request, text as string);
          if (ctx.schemas.schemas.get(name)?.def.user)
            await burrow.accounts.limitSignups(
              ctx,
              clientIp(request, info, burrow.config.trustedProxy),
              Array.isArray(body) ? Math.min(body.length, MAX_PASSWORDS_PER_REQUEST) : 1,
            );
          const header = request.headers.get("x-service-relations");
          const relations = parseRelationsHeader(header);
          if (relations.size && hasNested(body)) {
            const r = await data.upsert(ctx, name, body, relations);
            return rawJson(r.body, r.status);
          }
          if (Array.isArray(body)) return json(await data.create(ctx, name, body, relations));
          // X-Service-Relations, even empty, makes one object's POST a save: an existing key is updated (200).
          if (header !== null) {
            const r = await data.save(ctx, name, body, relations);
            return rawJson(r.body, r.status);
          }
          return rawJson(await data.create(ctx, name, body, relations), 201);
        },
        { parse: "raw", detail: docs.create },
      )
      // PUT /<name> exists for custom code methods only (app.ts keeps it out of Allow); elsewhere it is "no route",
      // which the edge answers as for any other unrouted method: 405 with the path's Allow.
      .put(
        "/:schema",
        async ({ api, request, params }) => {
          const ctx = await api;
          const method = methodOf(burrow, ctx, schemaParam(params.schema));
          if (method) return callMethod(burrow, ctx, request, method, "PUT");
          throw new NotFoundError();
        },
        { parse: "none", detail: docs.callMethod },
      )
      .delete(
        "/:schema",
        async ({ api, request, params }) => {
          const ctx = await api;
          const method = methodOf(burrow, ctx, schemaParam(params.schema));
          if (method) return callMethod(burrow, ctx, request, method, "DELETE");
          await data.removeWhere(ctx, schemaParam(params.schema), parseConditions(new URL(request.url).searchParams));
          return json({});
        },
        { detail: docs.removeWhere },
      )
      .put(
        "/:schema/:id",
        async ({ api, request, params, body }) => {
          const ctx = await api;
          const relations = parseRelationsHeader(request.headers.get("x-service-relations"));
          return rawJson(await data.update(ctx, schemaParam(params.schema), params.id, body, relations));
        },
        { parse: "datastore", detail: docs.update },
      )
      .delete(
        "/:schema/:id",
        async ({ api, params }) => {
          await data.remove(await api, schemaParam(params.schema), params.id);
          return json({});
        },
        { detail: docs.remove },
      )
      .post(
        "/:schema/:id/:field",
        async ({ api, params, body, request }) => {
          const ctx = await api;
          const field = ctx.schemas.schemas.get(schemaParam(params.schema))?.fields.get(params.field);
          if (field?.type === "relationship" && ctx.schemas.schemas.get(field.schema!)?.def.user)
            await burrow.accounts.limitSignups(
              ctx,
              clientIp(request, info, burrow.config.trustedProxy),
              Array.isArray(body) ? Math.min(body.length, MAX_PASSWORDS_PER_REQUEST) : 1,
            );
          return json(await data.createRelated(ctx, schemaParam(params.schema), params.id, params.field, body));
        },
        { parse: "datastore", detail: docs.createRelated },
      )
      .put(
        "/:schema/:id/:field",
        async ({ api, params, body }) => rawJson(await data.append(await api, schemaParam(params.schema), params.id, params.field, body)),
        { parse: "datastore", detail: docs.append },
      )
      .delete(
        "/:schema/:id/:field/:values",
        async ({ api, request, params }) => {
          const ctx = await api;
          // Values are percent-encoded one by one and joined with commas: split the raw segment, then decode.
          const path = new URL(request.url).pathname;
          const values = path
            .slice(path.lastIndexOf("/") + 1)
            .split(",")
            .map(decodeSegment);
          const cascade = (request.headers.get("x-service-cascadedelete") ?? "false").trim().toLowerCase() !== "false";
          await data.pull(ctx, schemaParam(params.schema), params.id, params.field, values, cascade);
          return json({});
        },
        { detail: docs.pull },
      )
  );
}
