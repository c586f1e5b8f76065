// Every request observed once it is answered: its figures go to RequestStats (the status page and /_metrics,
// always), and at `info` one log line (text or JSON: method, area, path with the query's names but not its
// values, status, milliseconds, environment) that the in-memory ring also keeps for the admin API; at `debug`
// also why a 4xx was refused. Secrets, tokens, passwords and bodies never appear. app.ts installs the hooks (an
// onRequest, an onAfterHandle and the error rendering); the arrival time is kept on Elysia's per-request `set`,
// and the hooks destructure Elysia's context (Elysia parses headers, query and cookies for every route when a hook
// takes the whole context).

import type { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { RequestLogRing } from "../system/request-log-ring.ts";
import type { RequestStats } from "../system/request-stats.ts";
import { targetOf } from "./origin.ts";
import { areaOf } from "./request-area.ts";

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

/** Where a request's arrival time is kept: on Elysia's per-request `set` (cheaper than a WeakMap by Request). */
const STARTED = Symbol("burrow.started");
export interface RequestSet {
  status?: number | string;
  [STARTED]?: number;
}

interface ObserverOptions {
  log: Logger;
  stats: RequestStats;
  ring: RequestLogRing;
  /** The environment the request addressed ("-" when none, e.g. the admin API). */
  environment(request: Request): string;
}

export function requestObserver({ log, stats, ring, environment }: ObserverOptions) {
  const info = log.enabled("info");
  const debug = log.enabled("debug");
  const json = log.format === "json";
  const finish = (request: Request, set: RequestSet, status: number, route?: string): void => {
    const started = set[STARTED];
    if (started === undefined) return;
    set[STARTED] = undefined;
    const ms = performance.now() - started;
    const area = areaOf(route, request);
    stats.record(area, status, ms);
    if (!info) return;
    const path = loggedTarget(request.url);
    const env = environment(request);
    const reason = debug && status >= 400 && status < 500 ? refusals.get(request) : undefined;
    const rounded = Math.round(ms * 10) / 10;
    ring.add({ time: Date.now(), method: request.method, area, path, status, ms: rounded, env, ...(reason ? { reason } : {}) });
    if (json) log.info("request", { method: request.method, area, path, status, ms: rounded, env, ...(reason ? { reason } : {}) });
    else {
      const line = `${request.method} ${path} ${status} ${ms.toFixed(1)}ms ${env}`;
      log.info(reason ? `${line}: ${reason}` : line);
    }
  };
  return {
    start(set: RequestSet): void {
      set[STARTED] = performance.now();
    },
    /** No figures for this request (it was re-dispatched, and the new request is observed itself). */
    forget(set: RequestSet): void {
      set[STARTED] = undefined;
    },
    /**
     * A route answered `value`: finished now, or when a promised answer resolves (a rejected one is finished
     * by the error rendering, which sees the status it gets).
     */
    answered(request: Request, set: RequestSet, value: unknown, route?: string): void {
      if (value instanceof Promise)
        value.then(
          (v) => finish(request, set, answeredStatus(v, set), route),
          () => {},
        );
      else finish(request, set, answeredStatus(value, set), route);
    },
    finish,
  };
}
