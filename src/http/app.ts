// The HTTP application: X-HTTP-Method-Override and HEAD are applied before routing, the router finds the
// handler, and every error is rendered as {"error": ...}. `handle(request)` is what Bun.serve and tests call.

import { ApiError } from "../errors.ts";
import type { Services } from "../services.ts";
import { readText } from "./body.ts";
import { createRequestInfo, type RequestInfo } from "./request-meta.ts";
import { errorResponse, json } from "./respond.ts";
import { Router } from "./router.ts";
import { preflight, withCors } from "./cors.ts";
import { adminRoutes } from "./routes/admin.ts";
import { fileRoutes } from "./routes/files.ts";
import { healthRoutes } from "./routes/health.ts";
import { objectRoutes } from "./routes/objects.ts";

export interface App {
  handle(request: Request): Promise<Response>;
  readonly info: RequestInfo;
}

export function createApp(services: Services, opts: { peer?: (req: Request) => string | null } = {}): App {
  const info = createRequestInfo(opts.peer);
  const router = new Router([healthRoutes(services), adminRoutes(services, info), fileRoutes(services), objectRoutes(services, info)]);
  const limit = services.config.bodyLimit;

  const fail = (e: unknown): Response => {
    if (e instanceof ApiError) return errorResponse(e);
    services.log.error("request failed", { message: (e as Error)?.message, stack: (e as Error)?.stack });
    return json({ error: "internal error" }, 500);
  };

  async function route(request: Request): Promise<Response> {
    try {
      const url = request.url;
      const start = url.indexOf("/", url.indexOf("//") + 2);
      const q = url.indexOf("?", start);
      const m = router.find(request.method, q < 0 ? url.slice(start) : url.slice(start, q));
      if (m === null) return json({ error: "not found" }, 404);
      if ("allowed" in m) return json({ error: `${request.method} is not allowed here` }, 405, { allow: m.allowed.join(", ") });
      return await m.handler({ request, params: m.params });
    } catch (e) {
      return fail(e);
    }
  }

  /** Requests that need rewriting before routing: an override header or HEAD. */
  async function rewriteAndRoute(request: Request): Promise<Response> {
    try {
      let req = request;
      const override = request.headers.get("x-http-method-override");
      if (override !== null) req = await applyOverride(request, override.trim().toUpperCase(), limit);
      const head = req.method === "HEAD";
      if (head) req = new Request(req.url, { method: "GET", headers: req.headers });
      if (req !== request) info.rewrote(req, request);
      const res = await route(req);
      return head ? new Response(null, { status: res.status, headers: res.headers }) : res;
    } catch (e) {
      return fail(e);
    }
  }

  function dispatch(request: Request): Promise<Response> {
    if (request.method === "HEAD" || request.headers.has("x-http-method-override")) return rewriteAndRoute(request);
    return route(request);
  }

  // Bodies are only read through readText, which enforces the limit (declared or streamed).
  function handle(request: Request): Promise<Response> {
    const origin = request.headers.get("origin");
    if (origin === null) return dispatch(request);
    if (request.method === "OPTIONS" && request.headers.has("access-control-request-method")) return Promise.resolve(preflight(services, request, origin));
    return dispatch(request).then((res) => withCors(services, request, origin, res));
  }
  return { handle, info };
}

/**
 * The seed's rule: only GET and POST can be overridden; GET may become DELETE or HEAD (no payload),
 * POST may become PUT. Anything else is a 400 rather than a silent surprise.
 */
async function applyOverride(request: Request, to: string, limit: number): Promise<Request> {
  const from = request.method;
  if (to === from) return request;
  if (from === "GET" && (to === "DELETE" || to === "HEAD")) return new Request(request.url, { method: to, headers: request.headers });
  if (from === "POST" && to === "PUT") return new Request(request.url, { method: "PUT", headers: request.headers, body: await readText(request, limit) });
  throw new ApiError(400, `X-HTTP-Method-Override cannot turn ${from} into ${to.slice(0, 16)}: GET may become DELETE or HEAD, POST may become PUT`);
}
