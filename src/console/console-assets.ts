// The files of the server's pages (the admin console, the status page) as the server sends them: each kept with
// gzip and brotli encodings and a strong ETag computed once. From the compiled binary they come from its embedded
// console/ and status/ folders; from source they are built on first use (console-build.ts).

import type Zlib from "node:zlib";
import { onFirstUse } from "../on-first-use.ts";
import { type ConsoleFile, type Site, buildSite } from "./console-build.ts";

const nodeZlib = onFirstUse(() => require("node:zlib") as typeof Zlib);

export interface ConsoleAsset {
  name: string;
  type: string;
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array;
  br: Uint8Array;
  etag: string;
  /** Hashed chunk names never change content: cached for a year; index.html is revalidated each time. */
  immutable: boolean;
}

/** A site's files embedded in a compiled binary (`--asset <staging>/<site>`), or null when running from source. */
async function embeddedFiles(site: Site): Promise<ConsoleFile[] | null> {
  const prefix = `${site}/`;
  const found = Bun.embeddedFiles.filter((f) => (f as Blob & { name?: string }).name?.startsWith(prefix));
  if (!found.length) return null;
  return Promise.all(
    found.map(async (f) => ({ name: (f as Blob & { name: string }).name.slice(prefix.length), type: f.type, body: new Uint8Array(await f.arrayBuffer()) })),
  );
}

function brotli(body: Uint8Array): Buffer {
  const { brotliCompressSync, constants } = nodeZlib();
  return brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
}

export function toAsset(f: ConsoleFile): ConsoleAsset {
  const hash = new Bun.CryptoHasher("sha256").update(f.body).digest("base64url").slice(0, 22);
  return {
    name: f.name,
    type: f.type.includes("charset") || !/^text\/|javascript|json|svg/.test(f.type) ? f.type : `${f.type};charset=utf-8`,
    body: f.body,
    gzip: Bun.gzipSync(f.body, { level: 9 }),
    br: new Uint8Array(brotli(f.body)),
    etag: `"${hash}"`,
    immutable: f.name !== "index.html",
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
