// The HTTP application: a front function (body limit, X-HTTP-Method-Override, HEAD) in front of the Elysia
// router, with every error rendered as {"error": ...}. `handle(request)` is what Bun.serve and tests call.

import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import type { Services } from "../services.ts";
import { readText } from "./body.ts";
import { createRequestInfo, type RequestInfo } from "./request-meta.ts";
import { errorResponse, json } from "./respond.ts";
import { adminRoutes } from "./routes/admin.ts";
import { healthRoutes } from "./routes/health.ts";
import { objectRoutes } from "./routes/objects.ts";

export interface App {
  handle(request: Request): Promise<Response>;
  readonly info: RequestInfo;
}

/** Marks that Elysia must never parse bodies itself: handlers read them with a size limit. */
const UNPARSED = Object.freeze({ unparsed: true });

export function createApp(services: Services, opts: { peer?: (req: Request) => string | null } = {}): App {
  const info = createRequestInfo(opts.peer);
  const router = new Elysia()
    .onParse(() => UNPARSED)
    .onError(({ code, error }) => {
      if (error instanceof ApiError) return errorResponse(error);
      if (code === "NOT_FOUND") return json({ error: "not found" }, 404);
      if (code === "PARSE" || code === "VALIDATION") return json({ error: "bad request" }, 400);
      services.log.error("unhandled error", { code: String(code), message: (error as Error)?.message, stack: (error as Error)?.stack });
      return json({ error: "internal error" }, 500);
    })
    .use(healthRoutes(services))
    .use(adminRoutes(services))
    .use(objectRoutes(services));

  const limit = services.config.bodyLimit;

  /** Requests that need rewriting before routing: an override header or HEAD. */
  async function rewriteAndHandle(request: Request): Promise<Response> {
    try {
      let req = request;
      const override = request.headers.get("x-http-method-override");
      if (override !== null) req = await applyOverride(request, override.trim().toUpperCase(), limit);
      const head = req.method === "HEAD";
      if (head) req = new Request(req.url, { method: "GET", headers: req.headers });
      if (req !== request) info.rewrote(req, request);
      const res = await router.handle(req);
      return head ? new Response(null, { status: res.status, headers: res.headers }) : res;
    } catch (e) {
      if (e instanceof ApiError) return errorResponse(e);
      services.log.error("request failed", { message: (e as Error)?.message, stack: (e as Error)?.stack });
      return json({ error: "internal error" }, 500);
    }
  }

  // Bodies are only read through readText, which enforces the limit (declared or streamed).
  function handle(request: Request): Promise<Response> {
    if (request.method === "HEAD" || request.headers.has("x-http-method-override")) return rewriteAndHandle(request);
    return router.handle(request);
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
