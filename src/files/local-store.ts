// File store on local disk: files live at <root>/<key>, written atomically (fsynced temp file, then rename) and
// served directly with immutable caching, If-None-Match and single byte ranges.
import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm, rmdir, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { JSON_TYPE } from "../net/json-response.ts";
import { assertValidKey, contentDisposition, dispositionOf, etagMatches, sha256Etag, type FileMeta, type FileStore } from "./store.ts";

/** Keys are unique per upload, so a served file never changes. */
const CACHE_CONTROL = "public, max-age=31536000, immutable";

type ByteRange = { start: number; end: number };

export class LocalFileStore implements FileStore {
  readonly kind = "local";

  constructor(private readonly root: string) {}

  async put(key: string, bytes: Uint8Array, meta: { contentType: string; filename: string }): Promise<FileMeta> {
    const path = this.path(key);
    const etag = await sha256Etag(bytes);
    const dir = dirname(path);
    await mkdir(dir, { recursive: true });
    // "~" never occurs in a valid key, so a temp file can never be read, served or deleted as a stored file.
    const tmp = join(dir, `.~${randomUUID()}.tmp`);
    try {
      const handle = await open(tmp, "wx");
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, path);
    } catch (e) {
      // Nothing of a failed write stays (a full disk included): the partly written temp file, then the upload's
      // own directory when it is empty (each upload has one, see delete()).
      await rm(tmp, { force: true });
      await rmdir(dir).catch(() => {});
      throw e;
    }
    return { contentType: meta.contentType, filename: meta.filename, size: bytes.byteLength, etag, created: Date.now() };
  }

  async read(key: string): Promise<Uint8Array | null> {
    const path = this.path(key);
    try {
      return await Bun.file(path).bytes();
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await fileSize(this.path(key))) !== null;
  }

  async delete(key: string): Promise<void> {
    const path = this.path(key);
    try {
      await unlink(path);
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
    // Each upload has its own directory (<env>/<id>/): remove it once empty. Nothing else writes there.
    await rmdir(dirname(path)).catch(() => {});
  }

  async serve(key: string, meta: FileMeta, request: Request): Promise<Response> {
    const path = this.path(key);
    const head = request.method === "HEAD";
    const size = await fileSize(path);
    if (size === null) {
      // A HEAD has no body but the Content-Length of the GET's.
      const missing = JSON.stringify({ error: "file not found" });
      return new Response(head ? null : missing, {
        status: 404,
        headers: { "content-type": JSON_TYPE, "content-length": String(Buffer.byteLength(missing)) },
      });
    }
    if (etagMatches(request.headers.get("if-none-match"), meta.etag)) {
      return new Response(null, { status: 304, headers: { ETag: meta.etag, "Cache-Control": CACHE_CONTROL } });
    }
    const range = requestedRange(request, meta.etag, size);
    if (range === "unsatisfiable") return new Response(null, { status: 416, headers: { "Content-Range": `bytes */${size}` } });

    const headers: Record<string, string> = {
      "Content-Type": meta.contentType,
      "Content-Length": String(size),
      "Content-Disposition": contentDisposition(meta.filename, dispositionOf(meta.contentType)),
      ETag: meta.etag,
      "Last-Modified": new Date(meta.created).toUTCString(),
      "Cache-Control": CACHE_CONTROL,
      "Accept-Ranges": "bytes",
      "X-Content-Type-Options": "nosniff",
    };
    const file = Bun.file(path);
    if (range === null) return new Response(head ? null : file, { status: 200, headers });
    headers["Content-Length"] = String(range.end - range.start + 1);
    headers["Content-Range"] = `bytes ${range.start}-${range.end}/${size}`;
    return new Response(head ? null : file.slice(range.start, range.end + 1), { status: 206, headers });
  }

  private path(key: string): string {
    assertValidKey(key);
    return join(this.root, key);
  }
}

/** The size of the regular file at `path`, or null when there is none (missing, or a directory). */
async function fileSize(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

/** Errors that mean "no file at this key": missing, a parent is a file, or the key names a directory. */
function isMissing(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR";
}

/**
 * The one byte range a GET asks for. null means send the whole file: no Range, several ranges, a malformed or
 * inverted range, or an If-Range that is not our (strong) ETag.
 */
function requestedRange(request: Request, etag: string, size: number): ByteRange | "unsatisfiable" | null {
  const header = request.headers.get("range");
  if (header === null) return null;
  const ifRange = request.headers.get("if-range");
  if (ifRange !== null && ifRange.trim() !== etag) return null;
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "") {
    if (last === "") return null;
    const suffix = Number(last);
    return suffix === 0 || size === 0 ? "unsatisfiable" : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? Infinity : Number(last);
  if (end < start) return null;
  return start >= size ? "unsatisfiable" : { start, end: Math.min(end, size - 1) };
}
