// Request bodies: read with a size limit, then decode JSON (also vendor +json types and JSON sent as
// text/plain), or form-urlencoded. Malformed JSON is a 400, an oversized body a 413.

import { ApiError, payloadTooLarge } from "../errors.ts";

const texts = new WeakMap<Request, Promise<string>>();

/**
 * Read the body as text, refusing more than `limit` bytes even when no Content-Length was sent. Read once per
 * request: signature checks (OAuth 1.0 form parameters) and handlers share it.
 */
export function readText(request: Request, limit: number): Promise<string> {
  let text = texts.get(request);
  if (!text) texts.set(request, (text = readOnce(request, limit)));
  return text;
}

async function readOnce(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > limit) throw payloadTooLarge(limit);
    return request.text(); // the declared length bounds it; the native path avoids stream machinery
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export function isFormType(contentType: string | null): boolean {
  return !!contentType && /^\s*application\/x-www-form-urlencoded/i.test(contentType);
}

/** Decode a JSON body. Empty bodies are undefined. */
export function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(400, `malformed JSON in request body: ${(e as Error).message.slice(0, 200)}`);
  }
}

/** The body of a datastore write: JSON whatever the content type says, except forms, which are refused. */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  return jsonBodyOf(request, await readText(request, limit));
}

/** The datastore's reading of a body already read as text. */
export function jsonBodyOf(request: Request, text: string): unknown {
  if (isFormType(request.headers.get("content-type")) && !/^\s*[[{]/.test(text))
    throw new ApiError(400, "this endpoint takes a JSON body (Content-Type: application/json)");
  return parseJson(text);
}
