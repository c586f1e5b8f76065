// The binary-field upload format (docs/api/datastore.md#binary-fields), parsed and validated. Pure. A value looks like:
//   Content-Type: image/png\nContent-Disposition: attachment; filename=photo.png\n
//   Content-Transfer-Encoding: base64\n\n<base64 text, possibly on several lines>

import { ApiError, badRequest } from "../errors.ts";

/** Recognizing an upload is a value check that schema inference needs too, so it lives with the field values. */
export { looksLikeUpload } from "../schema/values.ts";

export interface Upload {
  contentType: string;
  filename: string;
  bytes: Uint8Array;
}

const MIME_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;\s*[a-z0-9_.-]+=("[^"]*"|[^\s;"]+))*$/i;

/**
 * A file name safe as the last segment of a key and URL: no path, ASCII limited to letters, digits, `.`, `_`,
 * `-` and space (anything else becomes `_`), other scripts kept, at most 200 bytes of UTF-8.
 */
function sanitizeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  let out = "";
  let bytes = 0;
  for (const ch of base) {
    const c = ch.codePointAt(0)!;
    const safe = c > 0x7f ? (/[\p{L}\p{M}\p{N}\p{S}\p{P}]/u.test(ch) ? ch : "_") : /[A-Za-z0-9._ -]/.test(ch) ? ch : "_";
    bytes += Buffer.byteLength(safe);
    if (bytes > 200) break;
    out += safe;
  }
  out = out.replace(/^[. ]+/, "").trim();
  return out === "" ? "file" : out;
}

/** Parse an upload for `field`; 400 when malformed, 413 when the decoded bytes exceed `maxBytes`. */
export function parseUpload(field: string, value: string, maxBytes: number): Upload {
  const malformed = (why: string) =>
    badRequest(
      `${field}: malformed binary upload (${why}); expected Content-Type, Content-Disposition with a filename, Content-Transfer-Encoding: base64, a blank line, then base64`,
    );
  const text = value.replace(/\r\n/g, "\n");
  const blank = text.indexOf("\n\n");
  if (blank < 0) throw malformed("no blank line after the headers");
  const headers = new Map<string, string>();
  for (const line of text.slice(0, blank).split("\n")) {
    if (line.trim() === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) throw malformed(`header line "${line.slice(0, 40)}" has no name`);
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const contentType = headers.get("content-type") ?? "";
  if (!MIME_RE.test(contentType)) throw malformed("Content-Type is missing or not a media type");
  const disposition = headers.get("content-disposition") ?? "";
  const m = /filename\s*=\s*(?:"([^"]*)"|([^;]+))/i.exec(disposition);
  const rawName = (m?.[1] ?? m?.[2] ?? "").trim();
  if (!rawName) throw malformed("Content-Disposition has no filename");
  if ((headers.get("content-transfer-encoding") ?? "").toLowerCase() !== "base64")
    throw malformed("Content-Transfer-Encoding must be base64");
  const b64 = text.slice(blank + 2).replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 === 1) throw malformed("the data is not base64");
  const size = Math.floor((b64.length * 3) / 4) - (b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0);
  if (size > maxBytes) throw new ApiError(413, `${field}: the file is ${size} bytes, more than the limit of ${maxBytes}`);
  const bytes = new Uint8Array(Buffer.from(b64, "base64"));
  return { contentType: contentType.toLowerCase(), filename: sanitizeFilename(rawName), bytes };
}

/** The upload string for bytes (what SDKs send; used by tests and benchmarks). */
export function formatUpload(contentType: string, filename: string, bytes: Uint8Array): string {
  return `Content-Type: ${contentType}\nContent-Disposition: attachment; filename=${filename}\nContent-Transfer-Encoding: base64\n\n${Buffer.from(bytes).toString("base64")}`;
}

/** Bytes fetched from elsewhere (a file a Parse Server served) as an upload: the type checked, the name made safe. */
export function fetchedUpload(contentType: string, filename: string, bytes: Uint8Array): Upload {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  return { contentType: MIME_RE.test(type) ? type : "application/octet-stream", filename: sanitizeFilename(filename), bytes };
}
