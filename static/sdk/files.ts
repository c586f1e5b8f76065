// Files in binary fields (docs/api/datastore.md#binary-fields): a Blob, File, ArrayBuffer or typed array in a
// body becomes the upload string `Content-Type`, `Content-Disposition` with a filename, base64, that the server stores.

import type { Json } from "./errors.ts";
import { base64 } from "./mac.ts";

const isBytes = (v: unknown): v is ArrayBuffer | ArrayBufferView => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
const isBlob = (v: unknown): v is Blob => typeof Blob !== "undefined" && v instanceof Blob;

async function upload(v: Blob | ArrayBuffer | ArrayBufferView): Promise<string> {
  let type = "application/octet-stream";
  let name = "file";
  let bytes: Uint8Array;
  if (isBlob(v)) {
    type = v.type || type;
    name = (v as File).name || `file.${type.split("/")[1]?.split(/[;+]/)[0] ?? "bin"}`;
    bytes = new Uint8Array(await v.arrayBuffer());
  } else bytes = v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  name = name.replace(/[\r\n";]/g, "_");
  return `Content-Type: ${type}\nContent-Disposition: attachment; filename="${name}"\nContent-Transfer-Encoding: base64\n\n${base64(bytes)}`;
}

/** The body with every file value (top level, or in an array of objects) as its upload string. */
export async function withUploads(body: Json): Promise<Json> {
  if (Array.isArray(body)) return Promise.all(body.map(withUploads));
  if (!body || typeof body !== "object" || isBlob(body) || isBytes(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) out[k] = isBlob(v) || isBytes(v) ? await upload(v) : v;
  return out;
}
