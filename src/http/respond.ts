// Response helpers: JSON with the API's content type, and the error envelope (also bare, for a HEAD).

import type { ApiError } from "../errors.ts";
import { JSON_TYPE } from "../net/json-response.ts";

/** Responses copy their init headers, so one shared Headers is safe and cheaper than a fresh object each time. */
const JSON_HEADERS = new Headers({ "content-type": JSON_TYPE });
const OK_INIT: ResponseInit = { status: 200, headers: JSON_HEADERS };

export function json(data: unknown, status = 200, headers?: Record<string, string>): Response {
  if (status === 200 && !headers) return new Response(JSON.stringify(data), OK_INIT);
  return new Response(JSON.stringify(data), {
    status,
    headers: headers ? { "content-type": JSON_TYPE, ...headers } : { "content-type": JSON_TYPE },
  });
}

/** JSON text that is already serialized (rendered by SQLite). */
export function rawJson(text: string, status = 200, headers?: Record<string, string>): Response {
  if (headers) return new Response(text, { status, headers: { "content-type": JSON_TYPE, ...headers } });
  return new Response(text, status === 200 ? OK_INIT : { status, headers: JSON_HEADERS });
}

export function errorResponse(e: ApiError): Response {
  return json(e.toJSON(), e.status, e.headers);
}

/** An error answered to a HEAD nothing else will strip: its status and headers, no body, the JSON's length. */
export function bareErrorResponse(e: ApiError): Response {
  const length = Buffer.byteLength(JSON.stringify(e.toJSON()));
  return new Response(null, { status: e.status, headers: { "content-type": JSON_TYPE, "content-length": String(length), ...e.headers } });
}
