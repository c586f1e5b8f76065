// The request log: at `info`, one line per request (method, path with the query's names but not its values,
// status, milliseconds, environment); at `debug` also why a 4xx was refused. Secrets, tokens, passwords and
// bodies never appear. app.ts installs it (an onRequest and an onAfterResponse hook) only when the level
// includes `info`. Per-request state is kept by Request object, so the hooks destructure Elysia's context
// (Elysia parses headers, query and cookies for every route when a hook takes the whole context).

import type { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { targetOf } from "./origin.ts";

const MAX_PATH = 200;

/** Why requests were refused (written by the error rendering, read by the log line). */
const refusals = new WeakMap<Request, string>();

/** Remember why a request was refused: the error's message and its server-only debug detail. */
export function noteRefusal(request: Request, e: ApiError): void {
  refusals.set(request, e.debug ? `${e.message} (${e.debug})` : e.message);
}

/** `/todo?priority&_expand`: the path, then the names of the query parameters (values may be secrets). */
export function loggedTarget(url: string): string {
  const target = targetOf(url);
  const q = target.indexOf("?");
  let out = q < 0 ? target : target.slice(0, q);
  if (q >= 0) {
    const names = target
      .slice(q + 1)
      .split("&")
      .map((kv) => (kv.includes("=") ? kv.slice(0, kv.indexOf("=")) : kv))
      .filter((n) => n !== "");
    if (names.length) out += `?${names.join("&")}`;
  }
  return out.length > MAX_PATH ? `${out.slice(0, MAX_PATH)}…` : out;
}

/** The status a route's answer carries: a Response's own, else what Elysia's `set` holds. */
export function answeredStatus(value: unknown, set: { status?: number | string }): number {
  if (value instanceof Response) return value.status;
  return typeof set.status === "number" ? set.status : 200;
}

/** `environment(request)` names the environment the request addressed ("-" when none, e.g. the admin API). */
export function requestLog(log: Logger, environment: (request: Request) => string) {
  const debug = log.enabled("debug");
  const starts = new WeakMap<Request, number>();
  return {
    start(request: Request): void {
      starts.set(request, performance.now());
    },
    /** No line for this request (it was re-dispatched, and the new request logs itself). */
    forget(request: Request): void {
      starts.delete(request);
    },
    finish(request: Request, status: number): void {
      const started = starts.get(request);
      if (started === undefined) return;
      starts.delete(request);
      const target = loggedTarget(request.url);
      const line = `${request.method} ${target} ${status} ${(performance.now() - started).toFixed(1)}ms ${environment(request)}`;
      const reason = debug && status >= 400 && status < 500 ? refusals.get(request) : undefined;
      log.info(reason ? `${line}: ${reason}` : line);
    },
  };
}
