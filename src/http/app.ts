// The HTTP application: one Elysia app composed of route groups (OpenAPI, health, admin, files, user endpoints,
// datastore). The edge lifecycle (CORS, method override, error rendering) is installed as onRequest/onError,
// bodies are read by named parsers with the size limit, and `app.handle(request)` is what tests call.

import { Elysia } from "elysia";
import type { Burrow } from "./burrow.ts";
import { edgeError, edgeRequest, methodTable } from "./edge.ts";
import { openapiPlugin } from "./openapi.ts";
import { bodyParsers } from "./parsers.ts";
import { createRequestInfo } from "./request-meta.ts";
import { noteRefusal, requestObserver } from "./request-log.ts";
import { ApiError } from "../errors.ts";
import { loggedEnvironment } from "./api-context.ts";
import { targetOf } from "./origin.ts";
import { admissionControl } from "./admission.ts";
import { corsHeaders } from "./cors.ts";
import { adminRoutes } from "./routes/admin.ts";
import { consoleRoutes } from "./routes/console.ts";
import { docsRoutes } from "./routes/docs.ts";
import { statusRoutes } from "./routes/status.ts";
import { sdkRoutes } from "./routes/sdk.ts";
import { sdkTypesRoutes } from "./routes/sdk-types.ts";
import { fileRoutes } from "./routes/files.ts";
import { healthRoutes } from "./routes/health.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { objectRoutes } from "./routes/objects.ts";
import { pushRoutes } from "./routes/push.ts";
import { liveRoutes } from "./routes/live.ts";
import { userRoutes } from "./routes/users.ts";
import { userMfaRoutes } from "./routes/users-mfa.ts";
import { userPasskeyRoutes } from "./routes/users-passkeys.ts";
import { authLinkRoutes } from "./routes/auth-links.ts";
import { socialRoutes } from "./routes/social.ts";

interface AppOptions {
  /** The peer address of a request; by default the listening server's view of the connection. */
  peer?: (req: Request) => string | null;
}

export function createApp(burrow: Burrow, opts: AppOptions = {}) {
  let peer = opts.peer;
  // Peers of requests that arrived on a second listener (--push-http), which the main server does not know.
  const mountedPeers = new WeakMap<Request, string | null>();
  const info = createRequestInfo((req) => (peer ? peer(req) : null));
  const parsers = bodyParsers(burrow);
  let allowedAt: (path: string) => string[] = () => [];
  let dispatch: (r: Request) => Promise<Response> = () => Promise.reject(new Error("not started"));

  const edge = edgeRequest(burrow, info, (r) => dispatch(r));
  // normalize: false, so a `t` schema with additionalProperties: false refuses unknown members instead of
  // silently dropping them.
  const base = new Elysia({ handler: { standardHostname: false }, normalize: false });
  // Every request is observed (its figures feed the status page and /_metrics; at info it is also logged),
  // timed from its arrival. A response the edge gives before routing (a CORS preflight) is finished here; an
  // overridden method is observed by its re-dispatch.
  const observer = requestObserver({
    log: burrow.log,
    stats: burrow.requestStats,
    ring: burrow.requestLog,
    environment: (r) => loggedEnvironment(burrow, r),
  });
  const admission = admissionControl(burrow.config.shedding, burrow.ops.shedding);
  base
    .onRequest(({ request, set }) => {
      // Before any work: shed when overloaded (with the CORS headers a browser needs to read the refusal).
      const shed = admission.enter(request, set);
      if (shed) {
        const origin = request.headers.get("origin");
        if (origin !== null) for (const [k, v] of Object.entries(corsHeaders(burrow, request, origin))) shed.headers.set(k, String(v));
        return shed;
      }
      observer.start(set);
      const early = edge({ request, set });
      if (early === undefined) return undefined;
      admission.leave(set); // answered here (a preflight), or re-dispatched as a request of its own
      if (early instanceof Response) observer.finish(request, set, early.status);
      else
        early.then(
          () => observer.forget(set),
          (e: unknown) => observer.finish(request, set, e instanceof ApiError ? (noteRefusal(request, e), e.status) : 500),
        );
      return early;
    })
    // Finished when the route's answer is ready (or its promise settles), or when a failure is rendered. Not
    // onAfterResponse: Elysia runs that hook from a setImmediate task per request; with the start kept on `set`
    // rather than in a WeakMap, GET by key's server CPU per request went from 7-9% over a build without recording
    // to 1-2% (scripts/bench/cpu-per-request.ts).
    .onAfterHandle(({ request, set, responseValue, route }) => {
      admission.leave(set);
      observer.answered(request, set, responseValue, route);
    });
  const renderError = edgeError(burrow, (path) => allowedAt(path));
  const app = base
    .onError(({ code, error, request, set, route }) => {
      const response = renderError({ code, error, request, set });
      admission.leave(set);
      observer.finish(request, set, response.status, route);
      return response;
    })
    .use(openapiPlugin(burrow.version))
    .use(healthRoutes(burrow))
    .use(metricsRoutes(burrow))
    .use(adminRoutes(burrow, info, parsers))
    .use(consoleRoutes(burrow))
    .use(docsRoutes())
    .use(statusRoutes(burrow))
    .use(sdkRoutes())
    .use(sdkTypesRoutes(burrow))
    .use(fileRoutes(burrow))
    .use(pushRoutes(burrow, info, parsers))
    .use(liveRoutes(burrow, info, parsers))
    .use(authLinkRoutes(burrow, info))
    .use(userMfaRoutes(burrow, info, parsers))
    .use(userPasskeyRoutes(burrow, info, parsers))
    .use(userRoutes(burrow, info, parsers))
    .use(socialRoutes(burrow, info, parsers))
    .use(objectRoutes(burrow, info, parsers));

  // PUT /<name> serves custom code methods only: at a schema's path PUT stays unlisted in Allow.
  allowedAt = methodTable(app.routes.filter((r) => !(r.method === "PUT" && r.path === "/:schema")));
  dispatch = (r) => app.handle(r);
  peer ??= (req) => (mountedPeers.has(req) ? mountedPeers.get(req)! : (app.server?.requestIP(req)?.address ?? null));
  /**
   * A handler serving this app's routes under `prefix` at the root of another listener (`--push-http`): a
   * request for `/notifications` there is routed as `/<prefix>/notifications`, while signatures are checked
   * against the path the client sent and rate limits see that listener's peer.
   */
  const mount =
    (prefix: string) =>
    (req: Request, peerAddress: string | null): Promise<Response> => {
      const target = targetOf(req.url);
      const next =
        target === prefix || target.startsWith(`${prefix}/`) || target.startsWith(`${prefix}?`)
          ? req
          : new Request(req.url.slice(0, req.url.length - target.length) + prefix + (target === "/" ? "" : target), req);
      mountedPeers.set(req, peerAddress);
      if (next !== req) info.mounted(next, req);
      return app.handle(next);
    };
  return Object.assign(app, { mount });
}

export type App = ReturnType<typeof createApp>;
