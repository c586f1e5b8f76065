// File store on S3 or an S3-compatible service through Bun's built-in client. Objects live at <prefix><key> with
// their Content-Type and Content-Disposition stored on them; serving redirects to a presigned URL (one hour).
import { S3Client } from "bun";
import { assertValidKey, contentDisposition, dispositionOf, etagMatches, sha256Etag, type FileMeta, type FileStore } from "./store.ts";

const PRESIGN_SECONDS = 3600;
/** The redirect may be reused for a while, but not longer than its presigned URL lives. */
const CACHE_CONTROL = "private, max-age=300";

export class S3FileStore implements FileStore {
  readonly kind = "s3";
  private readonly client: S3Client;
  private readonly prefix: string;

  constructor(opts: { endpoint?: string; bucket: string; region?: string; accessKeyId: string; secretAccessKey: string; prefix?: string }) {
    const { prefix, ...connection } = opts;
    this.client = new S3Client(connection);
    this.prefix = prefix ?? "";
  }

  async put(key: string, bytes: Uint8Array, meta: { contentType: string; filename: string }): Promise<FileMeta> {
    const path = this.path(key);
    const etag = await sha256Etag(bytes);
    // A single PUT (or a multipart upload that is only completed at the end) is atomic on S3.
    await this.client.write(path, bytes, {
      type: meta.contentType,
      contentDisposition: contentDisposition(meta.filename, dispositionOf(meta.contentType)),
    });
    return { contentType: meta.contentType, filename: meta.filename, size: bytes.byteLength, etag, created: Date.now() };
  }

  /** Uploads a backup file (streamed from disk, multipart when large) to <prefix>backups/<name>; answers the object key. */
  async uploadBackup(name: string, path: string): Promise<string> {
    if (!/^[A-Za-z0-9._-]{1,200}$/.test(name)) throw new Error(`invalid backup name ${JSON.stringify(name.slice(0, 100))}`);
    const key = `${this.prefix}backups/${name}`;
    await this.client.write(key, Bun.file(path), { type: "application/x-tar" });
    return key;
  }

  async read(key: string): Promise<Uint8Array | null> {
    const path = this.path(key);
    try {
      return await this.client.file(path).bytes();
    } catch (e) {
      if ((e as { code?: unknown })?.code === "NoSuchKey") return null;
      throw e;
    }
  }

  async exists(key: string): Promise<boolean> {
    return this.client.exists(this.path(key));
  }

  async delete(key: string): Promise<void> {
    await this.client.delete(this.path(key));
  }

  /**
   * Never contacts S3: a 304 from the caller's metadata, otherwise a redirect presigned for the request's method.
   * The URL pins Content-Type and Content-Disposition (response-* overrides), because Bun's write normalizes the
   * stored type like Blob.type does (text/plain becomes "text/plain;charset=utf-8").
   */
  async serve(key: string, meta: FileMeta, request: Request): Promise<Response> {
    const path = this.path(key);
    if (etagMatches(request.headers.get("if-none-match"), meta.etag)) {
      return new Response(null, { status: 304, headers: { ETag: meta.etag, "Cache-Control": CACHE_CONTROL } });
    }
    const location = this.client.presign(path, {
      method: request.method === "HEAD" ? "HEAD" : "GET",
      expiresIn: PRESIGN_SECONDS,
      type: meta.contentType,
      contentDisposition: contentDisposition(meta.filename, dispositionOf(meta.contentType)),
    });
    return new Response(null, { status: 302, headers: { Location: location, "Cache-Control": CACHE_CONTROL } });
  }

  private path(key: string): string {
    assertValidKey(key);
    return this.prefix + key;
  }
}
