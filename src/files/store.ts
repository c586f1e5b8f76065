// The file store behind binary object fields: one interface (local disk or S3) plus the pure helpers both share —
// key validation, Content-Disposition, the SHA-256 ETag and If-None-Match matching.

export interface FileMeta {
  contentType: string;
  filename: string;
  size: number;
  etag: string;
  created: number;
}

export interface FileStore {
  readonly kind: "local" | "s3";
  /** Store the bytes under `key` (overwriting). Must be all-or-nothing: on failure nothing is left behind. Returns the metadata (etag = quoted hex SHA-256 of the bytes, e.g. "\"ab12…\"", computed here). */
  put(key: string, bytes: Uint8Array, meta: { contentType: string; filename: string }): Promise<FileMeta>;
  read(key: string): Promise<Uint8Array | null>;
  exists(key: string): Promise<boolean>;
  /** Idempotent: deleting a missing key is fine. */
  delete(key: string): Promise<void>;
  /** Answer GET or HEAD of the file for the public URL /_files/...; `meta` is what put returned (kept by the caller in a database). */
  serve(key: string, meta: FileMeta, request: Request): Promise<Response>;
}

const MAX_KEY_LENGTH = 300;
const MAX_SEGMENTS = 3;
/** File systems cap one path component at 255 bytes; S3 would accept more, so both stores refuse it alike. */
const MAX_SEGMENT_BYTES = 255;
/** ASCII letters, digits, `.`, `_`, space and `-`; beyond ASCII, letters, marks, digits, symbols (emoji) and punctuation. */
const SEGMENT = /^(?:[A-Za-z0-9._ -]|(?![\x00-\x7f])[\p{L}\p{M}\p{N}\p{S}\p{P}])+$/u;

/** Keys look like `<env>/<32 lowercase hex>/<filename>`: at most 3 non-empty segments, none `.` or `..`, ≤ 300 chars. */
function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  const segments = key.split("/");
  if (segments.length > MAX_SEGMENTS) return false;
  const encoder = new TextEncoder();
  return segments.every((s) => s !== "." && s !== ".." && SEGMENT.test(s) && encoder.encode(s).length <= MAX_SEGMENT_BYTES);
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new Error(`invalid file key ${JSON.stringify(key.slice(0, 100))}`);
}

/**
 * Headers on every answer under /_files/: the browser never guesses a type, and a file opened as a page gets no
 * origin of its own (sandbox: scripts, forms and plugins off, an opaque origin) and may load nothing.
 */
export const FILE_ANSWER_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; sandbox",
};

/** Media types a browser shows in place without running anything: images (not SVG or other XML), audio, video, PDF, plain text. */
const INLINE_TYPE = /^(?:image\/(?!svg)[a-z0-9.+-]+|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|application\/pdf|text\/plain)$/;

/**
 * How a stored file is offered: in place only for the inline types; HTML, XHTML, SVG, XML, JavaScript and any
 * other type as a download, so no upload is ever rendered as a document on the API's origin.
 */
export function dispositionOf(contentType: string): "inline" | "attachment" {
  const base = contentType.split(";")[0]!.trim().toLowerCase();
  return INLINE_TYPE.test(base) && !base.endsWith("+xml") && !base.endsWith("/xml") ? "inline" : "attachment";
}

/** RFC 6266 header value: an ASCII `filename="..."` fallback, plus RFC 8187 `filename*` when the name is not plain ASCII. */
export function contentDisposition(filename: string, type: "inline" | "attachment"): string {
  const name = filename.toWellFormed();
  const fallback = Array.from(name, (c) => (/^[\x20-\x7e]$/.test(c) ? c : "_"))
    .join("")
    .replace(/["\\]/g, "\\$&");
  let value = `${type}; filename="${fallback}"`;
  if (/[^\x20-\x7e]/.test(name)) {
    const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    value += `; filename*=UTF-8''${encoded}`;
  }
  return value;
}

/** The ETag for stored bytes: the quoted lowercase hex SHA-256. */
export async function sha256Etag(bytes: Uint8Array): Promise<string> {
  return `"${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}"`;
}

/** True when an If-None-Match header (`*`, or a list of possibly weak tags) matches `etag` (weak comparison, RFC 9110). */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === opaque);
}
