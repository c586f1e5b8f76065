// The request log: at `info`, one line per request (method, path with the query's names but not its values,
// status, milliseconds, environment); at `debug` also why a 4xx was refused. Secrets, tokens, passwords and
// bodies never appear. Installed by app.ts as the app's first onRequest hook and an onAfterResponse hook,
// only when the log level includes `info`.

import type { Logger } from "../log.ts";

const MAX_PATH = 200;

/** What the edge records on Elysia's context for the log line. */
export interface LoggedContext {
  request: Request;
  set: { status?: number | string };
  responseValue?: unknown;
  /** performance.now() when the request arrived. */
  logStart?: number;
  /** Why the request was refused (4xx), for debug lines. */
  logRefusal?: string;
}

/** `/todo?priority&_expand`: the path, then the names of the query parameters (values may be secrets). */
export function loggedTarget(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", start);
  let out = q < 0 ? url.slice(start) : url.slice(start, q);
  if (q >= 0) {
    const names = url
      .slice(q + 1)
      .split("&")
      .map((kv) => kv.slice(0, (kv.indexOf("=") + 1 || kv.length + 1) - 1))
      .filter((n) => n !== "");
    if (names.length) out += `?${names.join("&")}`;
  }
  return out.length > MAX_PATH ? `${out.slice(0, MAX_PATH)}…` : out;
}

function statusOf(c: LoggedContext): number {
  const v = c.responseValue;
  if (v instanceof Response) return v.status;
  const s = c.set.status;
  return typeof s === "number" ? s : 200;
}

/** `environment(request)` names the environment the request addressed ("-" when none, e.g. the admin API). */
export function requestLog(log: Logger, environment: (request: Request) => string) {
  const debug = log.enabled("debug");
  return {
    start(c: LoggedContext): void {
      c.logStart = performance.now();
    },
    finish(c: LoggedContext): void {
      if (c.logStart === undefined) return;
      const ms = performance.now() - c.logStart;
      c.logStart = undefined;
      const target = loggedTarget(c.request.url);
      const status = statusOf(c);
      const line = `${c.request.method} ${target} ${status} ${ms.toFixed(1)}ms ${environment(c.request)}`;
      log.info(debug && c.logRefusal && status >= 400 && status < 500 ? `${line}: ${c.logRefusal}` : line);
    },
  };
}
