// The admin console at /_admin/ (product.md §2): its index page and hashed chunks, compressed (br or gzip) with
// ETags. The page is revalidated on every load; chunks are cached for a year. Everything it shows comes from the
// admin JSON API under /_admin/api.

import { Elysia } from "elysia";
import { notFound } from "../../errors.ts";
import { type ConsoleAsset, consoleAssets, etagMatches, pickEncoding } from "../../console/console-assets.ts";
import type { Services } from "../services.ts";

const doc = (summary: string) => ({ detail: { tags: ["console"], summary } });

/** Only what the console itself needs: its own scripts and styles, the API on this origin, file previews. */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

function send(asset: ConsoleAsset, request: Request): Response {
  const headers: Record<string, string> = {
    "content-type": asset.type,
    etag: asset.etag,
    vary: "accept-encoding",
    "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    "x-content-type-options": "nosniff",
  };
  if (!asset.immutable) {
    headers["content-security-policy"] = PAGE_POLICY;
    headers["referrer-policy"] = "no-referrer";
    headers["x-frame-options"] = "DENY";
  }
  if (etagMatches(request.headers.get("if-none-match"), asset.etag)) return new Response(null, { status: 304, headers });
  const encoding = pickEncoding(request.headers.get("accept-encoding"));
  if (encoding) headers["content-encoding"] = encoding;
  const body = encoding === "br" ? asset.br : encoding === "gzip" ? asset.gzip : asset.body;
  return new Response(request.method === "HEAD" ? null : body, { headers: { ...headers, "content-length": String(body.length) } });
}

async function file(name: string, request: Request): Promise<Response> {
  const asset = (await consoleAssets()).get(name);
  if (!asset) throw notFound(`no console file "${name.slice(0, 80)}"`);
  return send(asset, request);
}

export function consoleRoutes(_services: Services) {
  return new Elysia({ name: "console" })
    // The router matches /_admin and /_admin/ alike; the page's relative addresses need the slash.
    .get("/_admin/", ({ request }) => {
      const url = new URL(request.url);
      if (!url.pathname.endsWith("/")) return new Response(null, { status: 308, headers: { location: `/_admin/${url.search}` } });
      return file("index.html", request);
    }, doc("The admin console's page (/_admin redirects here)"))
    .get("/_admin/:file", ({ params, request }) => file(params.file, request), doc("A file of the admin console (hashed, cached for a year)"));
}
