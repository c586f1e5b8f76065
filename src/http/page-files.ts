// Sending the files of the server's pages (the admin console, the status page): br or gzip as the client
// accepts, strong ETags (304 on revalidation), the index page revalidated every time with a strict content
// security policy, hashed chunks cached for a year.

import { notFound } from "../errors.ts";
import { type ConsoleAsset, etagMatches, pickEncoding, siteAssets } from "../console/console-assets.ts";
import type { Site } from "../console/console-build.ts";

/** Only what the pages need: their own scripts and styles, the API on this origin, file previews. */
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

/** One file of a site, or a JSON 404. */
export async function pageFile(site: Site, name: string, request: Request): Promise<Response> {
  const asset = (await siteAssets(site)).get(name);
  if (!asset) throw notFound(`no ${site === "console" ? "console" : "status page"} file "${name.slice(0, 80)}"`);
  return send(asset, request);
}

/** The site's index page at `<prefix>/`; the router matches `<prefix>` alike, which redirects to the slash. */
export function pageIndex(site: Site, prefix: string, request: Request): Promise<Response> | Response {
  const url = new URL(request.url);
  if (!url.pathname.endsWith("/")) return new Response(null, { status: 308, headers: { location: `${prefix}/${url.search}` } });
  return pageFile(site, "index.html", request);
}
