// The client library at /_sdk/burrow.js (one ES module, docs/api/sdk.md) and its declarations at /_sdk/burrow.d.ts:
// public, importable from any origin (Access-Control-Allow-Origin: *), br or gzip as accepted, a strong ETag with
// 304 on revalidation, cached five minutes so a new server version reaches clients soon.

import { Elysia } from "elysia";
import { etagMatches, pickEncoding } from "../../console/console-assets.ts";
import { sdkAssets } from "../../console/sdk-assets.ts";
import { notFound } from "../../errors.ts";

const doc = (summary: string) => ({ detail: { tags: ["sdk"], summary } });

async function sendSdkFile(name: string, request: Request, set: { headers: Record<string, string | number> }): Promise<Response> {
  const asset = (await sdkAssets()).get(name);
  if (!asset) throw notFound(`no client library file "${name}"`);
  // On `set` too: the edge's CORS headers (per environment) are merged from there and must not narrow this one.
  set.headers["access-control-allow-origin"] = "*";
  const headers: Record<string, string> = {
    "content-type": asset.type,
    etag: asset.etag,
    vary: "accept-encoding",
    "cache-control": "public, max-age=300",
    "access-control-allow-origin": "*",
    "access-control-expose-headers": "ETag",
    "x-content-type-options": "nosniff",
  };
  if (etagMatches(request.headers.get("if-none-match"), asset.etag)) return new Response(null, { status: 304, headers });
  const encoding = pickEncoding(request.headers.get("accept-encoding"));
  if (encoding) headers["content-encoding"] = encoding;
  const body = encoding ? (await asset.encoded)[encoding] : asset.body;
  return new Response(body, { headers: { ...headers, "content-length": String(body.length) } });
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
