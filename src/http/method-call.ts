// Custom code endpoints at the edge: `/<method>` (docs/api/custom-code.md#calls). Builds the request object
// a method gets from the HTTP request (declared URL parameters only, the raw body for PUT and POST, forms
// refused, the MAC-signed caller as loggedInUser) and turns the method's answer into the HTTP response (JSON,
// text or bytes, with the method's own headers where they are valid).

import { ApiError } from "../errors.ts";
import type { ApiContext } from "../request-context.ts";
import type { GuestRequest, MethodInfo, MethodResponse } from "../code/custom-code.ts";
import { JSON_TYPE } from "../net/json-response.ts";
import { isHeaderName, isHeaderValue } from "../net/headers.ts";
import { isFormType, readText } from "./body.ts";
import { targetOf } from "./origin.ts";
import type { Burrow } from "./burrow.ts";
import { codeCalls } from "./request-area.ts";

/** Request headers a method does not see (credentials). */
const HIDDEN_HEADERS = new Set(["authorization", "cookie"]);
/** Response headers a method may not set (framing is the server's). */
const FRAMING_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "trailer", "te"]);
/** Largest response body a method may answer. */
export const MAX_METHOD_RESPONSE = 20 * 1024 * 1024;

type Verb = GuestRequest["verb"];

/** The method a first path segment names in the caller's environment and version, if any. */
export function methodOf(burrow: Burrow, ctx: ApiContext, name: string): MethodInfo | undefined {
  return burrow.code.method(ctx.env, ctx.version, name);
}

/** Call `method` for `request` and answer the HTTP response. */
export async function callMethod(burrow: Burrow, ctx: ApiContext, request: Request, method: MethodInfo, verb: Verb): Promise<Response> {
  codeCalls.add(request);
  const hasBody = verb === "POST" || verb === "PUT";
  let body = "";
  if (hasBody) {
    body = await readText(request, burrow.config.bodyLimit);
    // A JSON body sent with a form content type (curl -d does that) is still JSON, as for datastore writes.
    if (isFormType(request.headers.get("content-type")) && !/^\s*[[{]/.test(body))
      throw new ApiError(400, "custom code methods do not take form-encoded bodies; send JSON or a plain string");
  }
  const target = targetOf(request.url);
  const q = target.indexOf("?");
  const params: Record<string, string> = {};
  if (q >= 0 && method.params.length) {
    const search = new URLSearchParams(target.slice(q + 1));
    for (const p of method.params) {
      const v = search.get(p);
      if (v !== null) params[p] = v;
    }
  }
  const headers: Record<string, string> = {};
  request.headers.forEach((v, k) => {
    if (!HIDDEN_HEADERS.has(k)) headers[k] = v;
  });
  const guest: GuestRequest = {
    verb,
    url: target,
    params,
    body,
    headers,
    loggedInUser: ctx.principal.kind === "user" ? ctx.principal.username : null,
    apiVersion: ctx.version,
    environment: ctx.env,
    methodName: method.name,
  };
  return responseOf(method.name, await burrow.code.call(ctx, guest));
}

function responseOf(name: string, r: MethodResponse): Response {
  const headers = new Headers();
  for (const [k, v] of Object.entries(r.headers)) {
    const lower = k.toLowerCase();
    if (FRAMING_HEADERS.has(lower)) continue;
    if (!isHeaderName(k) || !isHeaderValue(v))
      throw new ApiError(500, `custom code method ${name} returned an invalid header ${JSON.stringify(k.slice(0, 64))}`);
    headers.append(lower, v);
  }
  let payload: string | Uint8Array;
  let type: string;
  switch (r.body.kind) {
    case "json":
      payload = r.body.text;
      type = JSON_TYPE;
      break;
    case "text":
      payload = r.body.value;
      type = "text/plain; charset=utf-8";
      break;
    case "bytes":
      payload = new Uint8Array(Buffer.from(r.body.base64, "base64"));
      type = "application/octet-stream";
      break;
  }
  const size = typeof payload === "string" ? payload.length : payload.byteLength;
  if (size > MAX_METHOD_RESPONSE)
    throw new ApiError(500, `custom code method ${name} answered more than ${MAX_METHOD_RESPONSE / 1024 / 1024} MB`);
  if (!headers.has("content-type")) headers.set("content-type", type);
  // These statuses have no body.
  if (r.status === 204 || r.status === 205 || r.status === 304) return new Response(null, { status: r.status, headers });
  return new Response(payload, { status: r.status, headers });
}
