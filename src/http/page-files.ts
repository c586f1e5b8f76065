// Sending the files of the server's pages (the admin console, the status page, the API reference). Hashed chunks
// go br or gzip as the client accepts, with strong ETags (304 on revalidation), cached for a year. The index page
// is made per response with a fresh script nonce that its content security policy names (page-policy.ts), so it
// is never stored by a cache (a stored copy would carry a nonce no later policy names) and goes uncompressed: it
// is under 1 KB.

import { notFound } from "../errors.ts";
import { type ConsoleAsset, etagMatches, pickEncoding, siteAssets } from "../console/console-assets.ts";
import { SITES, type Site } from "../console/console-build.ts";
import { newNonce, nonceSlots, pagePolicy, withNonce } from "./page-policy.ts";

const INDEX = "index.html";

// Both kinds of file answer HEAD with the GET's body: Elysia (in process) and Bun (on a socket) drop it and keep
// its length, where a null body would go out as Content-Length 0.

/**
 * An embedded file with its strong ETag (304 on revalidation), br or gzip as the client accepts, under the given
 * Cache-Control and any more headers (the client library's CORS).
 */
export async function sendAsset(
  asset: ConsoleAsset,
  request: Request,
  cacheControl: string,
  more: Record<string, string> = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": asset.type,
    etag: asset.etag,
    vary: "accept-encoding",
    "cache-control": cacheControl,
    ...more,
    "x-content-type-options": "nosniff",
  };
  if (etagMatches(request.headers.get("if-none-match"), asset.etag)) return new Response(null, { status: 304, headers });
  const encoding = pickEncoding(request.headers.get("accept-encoding"));
  if (encoding) headers["content-encoding"] = encoding;
  const body = encoding ? (await asset.encoded)[encoding] : asset.body;
  return new Response(body, { headers: { ...headers, "content-length": String(body.length) } });
}

function sendChunk(asset: ConsoleAsset, request: Request): Promise<Response> {
  return sendAsset(asset, request, "public, max-age=31536000, immutable");
}

/** The index page's HTML cut where nonces go, once per asset. */
const slotsOf = new WeakMap<ConsoleAsset, string[]>();

function sendPage(asset: ConsoleAsset, images: string | null): Response {
  let slots = slotsOf.get(asset);
  if (!slots) slotsOf.set(asset, (slots = nonceSlots(new TextDecoder().decode(asset.body))));
  const nonce = newNonce();
  const html = new TextEncoder().encode(withNonce(slots, nonce));
  const headers: Record<string, string> = {
    "content-type": asset.type,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": pagePolicy(nonce, images),
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
  };
  return new Response(html, { headers: { ...headers, "content-length": String(html.length) } });
}

/** One file of a site, or a JSON 404. `images`: another origin the page shows images from (the files origin). */
export async function pageFile(site: Site, name: string, request: Request, images: string | null = null): Promise<Response> {
  const asset = (await siteAssets(site)).get(name);
  if (!asset) throw notFound(`no ${SITES[site].label} file "${name.slice(0, 80)}"`);
  return name === INDEX ? sendPage(asset, images) : sendChunk(asset, request);
}

/** The site's index page at `<prefix>/`; the router matches `<prefix>` alike, which redirects to the slash. */
export function pageIndex(site: Site, prefix: string, request: Request, images: string | null = null): Promise<Response> | Response {
  const url = new URL(request.url);
  if (!url.pathname.endsWith("/")) return new Response(null, { status: 308, headers: { location: `${prefix}/${url.search}` } });
  return pageFile(site, INDEX, request, images);
}
