// The admin API's data browser (the console's data screens): objects of any schema in either environment, read
// and written as the server itself (every permission passes). Queries take the public API's syntax: conditions
// in the query string, X-Service-OrderBy / -Select / -Expand and Range headers. A page is counted only when
// asked (`?_count=true`): counting a big table is what makes other dashboards slow, so the browser asks once.

import { Elysia, t } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import { parseQuery } from "../../datastore/query/parse.ts";
import type { ApiContext } from "../../request-context.ts";
import { adminDataContext } from "../admin-context.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { json, rawJson } from "../respond.ts";
import { adminGuard } from "../admin-guard.ts";
import * as S from "../schemas.ts";

const doc = (summary: string, description?: string) => ({ tags: ["admin"], summary, description, security: [{ adminBearer: [] }] });
const Params = t.Object({ env: t.String({ description: "development or production" }), schema: t.String() });
const KeyParams = t.Object({ env: t.String({ description: "development or production" }), schema: t.String(), key: t.String() });

/** Query parameters of the browser itself; field names never start with "_", so they cannot collide. */
const OWN_PARAMS = ["_count", "_version"];

function knownSchema(ctx: ApiContext, name: string): string {
  if (!ctx.schemas.schemas.has(name))
    throw notFound(
      `schema "${name.slice(0, 64)}" does not exist in ${ctx.env}${ctx.env === "production" ? ` version ${ctx.version}` : ""}`,
    );
  return name;
}

export function adminDataRoutes(burrow: Burrow, parsers: BodyParsers) {
  const data = burrow.data;
  const contextOf = (env: string, request: Request) => {
    const url = new URL(request.url);
    return adminDataContext(burrow, env, url.searchParams.get("_version"), url.origin);
  };
  return new Elysia({ name: "admin-data", prefix: "/_admin/api/data" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get(
      "/:env/:schema",
      async ({ params, request }) => {
        const url = new URL(request.url);
        const ctx = adminDataContext(burrow, params.env, url.searchParams.get("_version"), url.origin);
        const schema = knownSchema(ctx, params.schema);
        const count = url.searchParams.get("_count");
        if (count !== null && count !== "true" && count !== "false") throw badRequest("_count must be true or false");
        const conditions = new URLSearchParams([...url.searchParams].filter(([k]) => !OWN_PARAMS.includes(k)));
        const tree = parseQuery(conditions, request.headers);
        if (tree.range && count !== "true") tree.range.uncounted = true;
        const found = await data.list(ctx, schema, tree);
        return found.contentRange === null ? rawJson(found.body) : rawJson(found.body, 206, { "content-range": found.contentRange });
      },
      {
        role: "viewer",
        params: Params,
        detail: doc(
          "Objects of a schema, as the server sees them",
          "Conditions as in GET /<schema>; X-Service-OrderBy, X-Service-Select, X-Service-Expand and Range headers. With a Range the answer is 206 with Content-Range `objects a-b/<total>` when `?_count=true`, else `objects a-b/*`. `?_version=N` reads production through version N's schemas (default: the newest).",
        ),
      },
    )
    .get(
      "/:env/:schema/:key",
      async ({ params, request }) => {
        const ctx = contextOf(params.env, request);
        return rawJson(await data.get(ctx, knownSchema(ctx, params.schema), params.key));
      },
      { role: "viewer", params: KeyParams, detail: doc("One object by key") },
    )
    .post(
      "/:env/:schema",
      async ({ params, request, body }) => {
        const ctx = contextOf(params.env, request);
        if (Array.isArray(body)) throw badRequest("send one object; batches go through the public API");
        return rawJson(await data.create(ctx, knownSchema(ctx, params.schema), body), 201);
      },
      {
        role: "editor",
        parse: "datastore",
        params: Params,
        detail: { ...doc("Create an object"), ...S.jsonBody(S.AnyObject, "the object") },
      },
    )
    .put(
      "/:env/:schema/:key",
      async ({ params, request, body }) => {
        const ctx = contextOf(params.env, request);
        return rawJson(await data.update(ctx, knownSchema(ctx, params.schema), params.key, body));
      },
      {
        role: "editor",
        parse: "datastore",
        params: KeyParams,
        detail: {
          ...doc("Change fields of an object", "Fields not sent are kept; null clears one."),
          ...S.jsonBody(S.AnyObject, "the fields to change"),
        },
      },
    )
    .delete(
      "/:env/:schema/:key",
      async ({ params, request }) => {
        const ctx = contextOf(params.env, request);
        await data.remove(ctx, knownSchema(ctx, params.schema), params.key);
        return json({});
      },
      { role: "editor", params: KeyParams, detail: doc("Delete an object") },
    );
}
