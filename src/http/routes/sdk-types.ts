// GET /_sdk/types.d.ts: TypeScript declarations of an API version's schemas and method names (src/sdk/types-gen.ts),
// for apps written against the client module (docs/api/types.md). The environment's public key is needed, as for
// every API call; `?version=` picks the version with the API's rules (the development key: 0; the production key:
// a deployed version, the newest by default). A weak ETag over the declarations answers 304 on revalidation.

import { Elysia, t } from "elysia";
import { ApiError, badRequest, unauthorized } from "../../errors.ts";
import type { SchemaSet } from "../../schema/compiled.ts";
import { generateTypes, typesBody } from "../../sdk/types-gen.ts";
import { etagMatches } from "../../console/console-assets.ts";
import type { Burrow } from "../burrow.ts";
import { MAX_API_VERSION } from "../accept.ts";
import { errors } from "../schemas.ts";

export const TYPES_CONTENT_TYPE = "application/typescript; charset=utf-8";

const Query = t.Object({
  version: t.Optional(
    t.String({ description: "0: development (the development key); N: production API version N (the production key, default the newest)" }),
  ),
});

/** The version asked for: a whole number up to MAX_API_VERSION, or null when absent. */
function parseVersion(raw: string | undefined): number | null {
  if (raw === undefined || raw === "") return null;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) > MAX_API_VERSION)
    throw badRequest(`invalid version "${raw.slice(0, 32)}"; expected version=0 (development) or version=N (production)`);
  return Number(raw);
}

/** The schemas and method names of the version the key and `version` select (the API's rules and messages). */
function selected(burrow: Burrow, key: string | null, version: number | null): { set: SchemaSet; methods: string[] } {
  if (key === null || key === "") throw unauthorized("missing X-Service-API-Key header with the app's public key");
  const env = burrow.keys.byPublic.get(key);
  if (env === undefined) throw unauthorized("invalid API key");
  if (env === "development") {
    if (version !== null && version !== 0)
      throw unauthorized(`the development API key cannot call API version ${version}; use the production key`);
    return { set: burrow.catalog.development(), methods: burrow.code.development()?.methods.map((m) => m.name) ?? [] };
  }
  if (version === 0) throw unauthorized("the production API key cannot call version 0 (development); use the development key");
  const v = version ?? burrow.catalog.latestVersion();
  if (v === null) throw new ApiError(404, "no API version is deployed to production yet");
  const set = burrow.catalog.production(v);
  if (!set) throw new ApiError(404, `API version ${v} is not deployed`);
  return { set, methods: burrow.code.production(v)?.methods.map((m) => m.name) ?? [] };
}

export function sdkTypesRoutes(burrow: Burrow) {
  return new Elysia({ name: "sdk-types" }).get(
    "/_sdk/types.d.ts",
    async ({ request, query }) => {
      await burrow.refreshIfDue();
      const { set, methods } = selected(burrow, request.headers.get("x-service-api-key"), parseVersion(query.version));
      const body = typesBody(set, methods);
      const etag = `W/"${new Bun.CryptoHasher("sha256").update(`${set.version}\n${body}`).digest("base64url").slice(0, 22)}"`;
      const headers = { "content-type": TYPES_CONTENT_TYPE, etag, "cache-control": "no-cache", vary: "X-Service-API-Key" };
      if (etagMatches(request.headers.get("if-none-match"), etag.slice(2))) return new Response(null, { status: 304, headers });
      return new Response(generateTypes({ set, methods, server: burrow.version }, new Date()), { headers });
    },
    {
      query: Query,
      detail: {
        tags: ["sdk"],
        summary: "TypeScript declarations of an API version's schemas and custom code method names",
        description:
          "An interface per schema (objects as the API answers them), `Schemas` and `MethodName`, as application/typescript. The key selects the environment as for every API call; `version` the version (the development key: 0; the production key: a deployed version, by default the newest). A weak ETag answers 304 to If-None-Match.",
        security: [{ apiKey: [] }],
      },
      response: { 200: t.String({ description: "the declarations" }), ...errors(400, 401, 404) },
    },
  );
}
