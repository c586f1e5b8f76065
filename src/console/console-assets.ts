// The admin console's files as the server sends them: each kept with gzip and brotli encodings and a strong
// ETag computed once. From the compiled binary they come from its embedded dist/console/ files; from source they
// are built on first use (console-build.ts).

import { brotliCompressSync, constants as zlib } from "node:zlib";
import { type ConsoleFile, buildConsole } from "./console-build.ts";

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

const EMBEDDED_PREFIX = "console/";

/** The console files embedded in a compiled binary (`--asset dist/console`), or null when running from source. */
async function embeddedFiles(): Promise<ConsoleFile[] | null> {
  const found = Bun.embeddedFiles.filter((f) => (f as Blob & { name?: string }).name?.startsWith(EMBEDDED_PREFIX));
  if (!found.length) return null;
  return Promise.all(
    found.map(async (f) => ({ name: (f as Blob & { name: string }).name.slice(EMBEDDED_PREFIX.length), type: f.type, body: new Uint8Array(await f.arrayBuffer()) })),
  );
}

export function toAsset(f: ConsoleFile): ConsoleAsset {
  const hash = new Bun.CryptoHasher("sha256").update(f.body).digest("base64url").slice(0, 22);
  return {
    name: f.name,
    type: f.type.includes("charset") || !/^text\/|javascript|json|svg/.test(f.type) ? f.type : `${f.type};charset=utf-8`,
    body: f.body,
    gzip: Bun.gzipSync(f.body, { level: 9 }),
    br: new Uint8Array(brotliCompressSync(f.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: f.body.length } })),
    etag: `"${hash}"`,
    immutable: f.name !== "index.html",
  };
}

let loading: Promise<Map<string, ConsoleAsset>> | null = null;

/** Every console file by name, loaded once per process. */
export function consoleAssets(): Promise<Map<string, ConsoleAsset>> {
  loading ??= (async () => {
    const files = (await embeddedFiles()) ?? (await buildConsole());
    return new Map(files.map((f) => [f.name, toAsset(f)]));
  })();
  loading.catch(() => {
    loading = null;
  });
  return loading;
}

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
