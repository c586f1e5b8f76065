// Parameters of token and password endpoints, which clients send as a form, as JSON or (GET) in the query.

import { ApiError } from "../errors.ts";
import { isFormType, parseJson, readText } from "./body.ts";

const MAX_PARAMS = 32;

/** String parameters from the query (GET) or the body (form or JSON); other value types are dropped. */
export async function requestParams(request: Request, limit: number): Promise<Record<string, string>> {
  const out: Record<string, string> = Object.create(null);
  const add = (k: string, v: unknown) => {
    if (Object.keys(out).length >= MAX_PARAMS) throw new ApiError(400, `at most ${MAX_PARAMS} parameters`);
    if (typeof v === "string") out[k] = v;
  };
  if (request.method === "GET" || request.method === "DELETE") {
    for (const [k, v] of new URL(request.url).searchParams) add(k, v);
    return out;
  }
  const text = await readText(request, Math.min(limit, 64 * 1024));
  if (isFormType(request.headers.get("content-type")) && !/^\s*\{/.test(text)) {
    for (const [k, v] of new URLSearchParams(text)) add(k, v);
    return out;
  }
  const body = parseJson(text);
  if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body)))
    throw new ApiError(400, "send a form or a JSON object");
  for (const [k, v] of Object.entries((body ?? {}) as Record<string, unknown>)) add(k, v);
  return out;
}

/**
 * Social endpoints read their parameters from the query, a form or JSON alike (docs/api/social.md#parameters): the query's,
 * overridden by the body's on POST.
 */
export async function queryAndBodyParams(request: Request, limit: number): Promise<Record<string, string>> {
  const out: Record<string, string> = Object.create(null);
  if (request.method !== "GET" && request.method !== "DELETE") {
    const url = request.url;
    const q = url.indexOf("?");
    let n = 0;
    if (q >= 0) for (const [k, v] of new URLSearchParams(url.slice(q + 1))) if (n++ < MAX_PARAMS) out[k] = v;
  }
  return Object.assign(out, await requestParams(request, limit));
}

/** A JSON object body (forgot/reset password); forms are read too. */
export async function objectBody(request: Request, limit: number): Promise<Record<string, unknown>> {
  const text = await readText(request, Math.min(limit, 64 * 1024));
  if (isFormType(request.headers.get("content-type")) && !/^\s*\{/.test(text)) return Object.fromEntries(new URLSearchParams(text));
  const body = parseJson(text);
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError(400, "send a JSON object");
  return body as Record<string, unknown>;
}
