// The files of the server's pages (the admin console, the status page, the API reference) as the server sends
// them: each kept with a strong ETag and gzip and brotli encodings, made once and off this thread. From the
// compiled binary they come from its embedded console/, status/ and docs/ folders; from source they are built on
// first use (console-build.ts).

import type Zlib from "node:zlib";
import { onFirstUse } from "../on-first-use.ts";
import { type ConsoleFile, type Site, buildSite } from "./console-build.ts";

const nodeZlib = onFirstUse(() => require("node:zlib") as typeof Zlib);

export interface ConsoleAsset {
  name: string;
  type: string;
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  /** The body in gzip and brotli, made in the background from the moment the file is loaded. */
  encoded: Promise<{ gzip: Uint8Array; br: Uint8Array }>;
}

/** A site's files embedded in a compiled binary (`--asset <staging>/<site>`, also `sdk`), or null when running from source. */
export async function embeddedFiles(site: Site | "sdk"): Promise<ConsoleFile[] | null> {
  const prefix = `${site}/`;
  const found = Bun.embeddedFiles.filter((f) => (f as Blob & { name?: string }).name?.startsWith(prefix));
  if (!found.length) return null;
  return Promise.all(
    found.map(async (f) => ({
      name: (f as Blob & { name: string }).name.slice(prefix.length),
      type: f.type,
      body: new Uint8Array(await f.arrayBuffer()),
    })),
  );
}

/** Best brotli and gzip, made on zlib's worker threads: the API reference's bundle takes about a second at
 * brotli 11, which must hold up neither the requests this thread answers meanwhile nor the index page. */
function encode(body: Uint8Array): Promise<{ gzip: Uint8Array; br: Uint8Array }> {
  const { brotliCompress, gzip, constants } = nodeZlib();
  const br = new Promise<Uint8Array>((resolve, reject) =>
    brotliCompress(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }, (e, out) =>
      e ? reject(e) : resolve(new Uint8Array(out)),
    ),
  );
  const gz = new Promise<Uint8Array>((resolve, reject) =>
    gzip(body, { level: 9 }, (e, out) => (e ? reject(e) : resolve(new Uint8Array(out)))),
  );
  return Promise.all([gz, br]).then(([g, b]) => ({ gzip: g, br: b }));
}

export function toAsset(f: ConsoleFile): ConsoleAsset {
  const hash = new Bun.CryptoHasher("sha256").update(f.body).digest("base64url").slice(0, 22);
  const encoded = encode(f.body);
  // Awaited by whoever sends an encoding; a failure reaches that request, not the process.
  encoded.catch(() => {});
  return {
    name: f.name,
    type: f.type.includes("charset") || !/^text\/|javascript|json|svg/.test(f.type) ? f.type : `${f.type};charset=utf-8`,
    body: f.body,
    etag: `"${hash}"`,
    encoded,
  };
}

const loading = new Map<Site, Promise<Map<string, ConsoleAsset>>>();

/** Every file of a site by name, loaded once per process. */
export function siteAssets(site: Site): Promise<Map<string, ConsoleAsset>> {
  let p = loading.get(site);
  if (!p) {
    p = (async () => {
      const files = (await embeddedFiles(site)) ?? (await buildSite(site));
      return new Map(files.map((f) => [f.name, toAsset(f)]));
    })();
    p.catch(() => loading.delete(site));
    loading.set(site, p);
  }
  return p;
}

/** The admin console's files. */
export const consoleAssets = () => siteAssets("console");

/** The best encoding the client accepts: br, then gzip, then none. */
export function pickEncoding(acceptEncoding: string | null): "br" | "gzip" | null {
  if (!acceptEncoding) return null;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(",")) {
    const [name, ...params] = part.trim().split(";");
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name!.trim(), q === undefined ? 1 : Number(q) || 0);
  }
  const ok = (n: string) => (accepted.get(n) ?? accepted.get("*") ?? 0) > 0;
  return ok("br") ? "br" : ok("gzip") ? "gzip" : null;
}

/** Whether an If-None-Match header names this ETag (weak comparison, as for GET). */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}
