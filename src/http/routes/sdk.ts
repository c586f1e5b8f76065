// The client library at /_sdk/burrow.js (one ES module, docs/api/sdk.md) and its declarations at /_sdk/burrow.d.ts:
// public, importable from any origin (Access-Control-Allow-Origin: *), br or gzip as accepted, a strong ETag with
// 304 on revalidation, cached five minutes so a new server version reaches clients soon.

import { Elysia } from "elysia";
import { sdkAssets } from "../../console/sdk-assets.ts";
import { notFound } from "../../errors.ts";
import { sendAsset } from "../page-files.ts";

const doc = (summary: string) => ({ detail: { tags: ["sdk"], summary } });

async function sendSdkFile(name: string, request: Request, set: { headers: Record<string, string | number> }): Promise<Response> {
  const asset = (await sdkAssets()).get(name);
  if (!asset) throw notFound(`no client library file "${name}"`);
  // On `set` too: the edge's CORS headers (per environment) are merged from there and must not narrow this one.
  set.headers["access-control-allow-origin"] = "*";
  return sendAsset(asset, request, "public, max-age=300", { "access-control-allow-origin": "*", "access-control-expose-headers": "ETag" });
}

export function sdkRoutes() {
  return new Elysia({ name: "sdk" })
    .get(
      "/_sdk/burrow.js",
      ({ request, set }) => sendSdkFile("burrow.js", request, set),
      doc("The JavaScript client library (an ES module)"),
    )
    .get(
      "/_sdk/burrow.d.ts",
      ({ request, set }) => sendSdkFile("burrow.d.ts", request, set),
      doc("The client library's TypeScript declarations"),
    );
}
