// The edge lifecycle of the Elysia app: what happens to every request before routing (CORS preflights,
// CORS headers, X-HTTP-Method-Override) and how every failure is rendered ({"error": ...} with its status,
// 405 with Allow for a known path and another method). Installed by app.ts as onRequest and onError.

import { ApiError, methodNotAllowed, storeUnavailable } from "../errors.ts";
import { DISK_FULL_STATUS, asDiskFull, noteDiskFull } from "../db/disk-full.ts";
import { storeUnreachable } from "../db/store-unreachable.ts";
import { storeAway } from "../system/store-reach.ts";
import type { Burrow } from "./burrow.ts";
import { readText } from "./body.ts";
import { corsHeaders, preflight } from "./cors.ts";
import type { RequestInfoWriter } from "./request-meta.ts";
import { SystemPath } from "./api-context.ts";
import { bareErrorResponse, errorResponse, json } from "./respond.ts";
import { noteRefusal } from "./request-log.ts";
import { pathOf, requestOrigin, targetOf } from "./origin.ts";

/** The part of Elysia's context the edge reads and writes. */
interface EdgeContext {
  request: Request;
  set: { headers: Record<string, string | number> };
}

/**
 * onRequest: answer CORS preflights, put CORS headers on the response of a cross-origin request (Elysia merges
 * `set.headers` into whatever the route or the error handler returns), and re-dispatch a request whose method is
 * overridden. Everything else falls through to routing untouched.
 */
export function edgeRequest(burrow: Burrow, info: RequestInfoWriter, dispatch: (r: Request) => Promise<Response>) {
  const filesOrigin = burrow.config.filesUrl === null ? null : filesOriginRule(burrow, info, burrow.config.filesUrl);
  return (c: EdgeContext): Response | Promise<Response> | undefined => {
    const request = c.request;
    if (filesOrigin !== null) {
      const routed = filesOrigin(request);
      if (routed !== undefined) return routed;
    }
    const origin = request.headers.get("origin");
    if (origin !== null) {
      if (request.method === "OPTIONS" && request.headers.has("access-control-request-method")) return preflight(burrow, request, origin);
      Object.assign(c.set.headers, corsHeaders(burrow, request, origin));
    }
    const to = request.headers.get("x-http-method-override")?.trim().toUpperCase();
    // An override naming the request's own method changes nothing; a rewritten request is not rewritten again.
    if (to === undefined || to === request.method || info.isRewritten(request)) return undefined;
    const overridden = override(request, to, burrow.config.bodyLimit);
    return overridden.then((next) => {
      info.rewrote(next, request);
      return dispatch(next);
    });
  };
}

/**
 * With --files-url, stored files live on an origin of their own: a request addressed to that host is answered only
 * under /_files/ (anything else there is 404, so no page of Burrow ever runs beside an uploaded file), and a
 * /_files/ request on any other host is redirected (308) to the files origin.
 */
function filesOriginRule(burrow: Burrow, info: RequestInfoWriter, filesUrl: string): (request: Request) => Response | undefined {
  const files = new URL(filesUrl);
  const filesPort = files.port === "" ? null : Number(files.port);
  return (request) => {
    const o = requestOrigin(request, info, burrow.config.trustedProxy);
    const onFilesHost = o.host === files.hostname.replace(/^\[|\]$/g, "") && o.port === filesPort;
    const path = pathOf(request.url);
    const isFile = path.startsWith("/_files/");
    if (onFilesHost && !isFile && path !== "/_health")
      return errorResponse(new ApiError(404, "not found: this host serves stored files only"));
    if (!onFilesHost && isFile) return new Response(null, { status: 308, headers: { location: `${filesUrl}${targetOf(request.url)}` } });
    return undefined;
  };
}

/**
 * The override rule (docs/api/README.md#requests): only GET and POST can be overridden; GET may become DELETE or HEAD (no payload),
 * POST may become PUT. Anything else is a 400 rather than a silent surprise.
 */
async function override(request: Request, to: string, limit: number): Promise<Request> {
  const from = request.method;
  if (from === "GET" && (to === "DELETE" || to === "HEAD")) return new Request(request.url, { method: to, headers: request.headers });
  if (from === "POST" && to === "PUT")
    return new Request(request.url, { method: "PUT", headers: request.headers, body: await readText(request, limit) });
  throw new ApiError(
    400,
    `X-HTTP-Method-Override cannot turn ${from} into ${to.slice(0, 16)}: GET may become DELETE or HEAD, POST may become PUT`,
  );
}

/** Methods served at a path, from the app's route table (only asked when routing found nothing). */
export function methodTable(routes: readonly { method: string; path: string }[]) {
  const patterns = new Map<string, { re: RegExp; methods: Set<string> }>();
  for (const r of routes) {
    let p = patterns.get(r.path);
    if (!p) {
      // A parameter never matches an empty segment, nor (first segment) a name starting with "_": those are the system's.
      const source = r.path
        .split("/")
        .map((seg, i) => (seg.startsWith(":") ? (i === 1 ? "(?!_)[^/]+" : "[^/]+") : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/");
      patterns.set(r.path, (p = { re: new RegExp(`^${source}/?$`), methods: new Set() }));
    }
    p.methods.add(r.method);
  }
  return (path: string): string[] => {
    const allowed = new Set<string>();
    for (const { re, methods } of patterns.values()) if (re.test(path)) for (const m of methods) allowed.add(m);
    if (allowed.has("GET")) allowed.add("HEAD");
    return [...allowed];
  };
}

interface ErrorContext {
  code: unknown;
  error: unknown;
  request: Request;
  set: { headers: Record<string, string | number>; status?: number | string };
}

/**
 * onError: the one rendering of failures. ApiError carries its status; Elysia's own errors are mapped here.
 * The status goes to `set` and the reason to the request log. The context is destructured: a hook that takes
 * it whole makes Elysia parse headers, query and cookies on every route.
 */
export function edgeError(burrow: Burrow, allowedAt: (path: string) => string[]) {
  const remote = burrow.config.store.url !== null && burrow.config.store.url !== undefined;
  return ({ code, error, request, set }: ErrorContext): Response => {
    const refusal = apiErrorOf(code, error, request, allowedAt) ?? (remote ? unreachable(burrow, error) : null);
    if (refusal !== null) {
      set.status = refusal.status;
      noteRefusal(request, refusal);
      if (refusal.status === DISK_FULL_STATUS) diskFullRefused(burrow, refusal);
      // A HEAD that no route took (there is no GET here either) is answered bare, with its length. One that a
      // GET route took (Elysia's implicit HEAD, here only a system path) keeps the body: Elysia measures it.
      return code === "NOT_FOUND" && request.method === "HEAD" && !(error instanceof SystemPath)
        ? bareErrorResponse(refusal)
        : errorResponse(refusal);
    }
    set.status = 500;
    burrow.log.error("request failed", { message: (error as Error)?.message, stack: (error as Error)?.stack });
    return json({ error: "internal error" }, 500);
  };
}

/** 503 with Retry-After when the libSQL server could not be reached (noted in burrow.ops); null for another error. */
function unreachable(burrow: Burrow, error: unknown): ApiError | null {
  const reason = storeUnreachable(error);
  if (reason === null) return null;
  storeAway(burrow.ops, reason);
  burrow.ops.store.failures++;
  return storeUnavailable(error);
}

const warnedAt = new WeakMap<Burrow, number>();

/** A write refused for a full disk: counted in burrow.ops, and a warning in the log at most once a minute. */
function diskFullRefused(burrow: Burrow, refusal: ApiError): void {
  noteDiskFull(burrow.ops.disk);
  if (Date.now() - (warnedAt.get(burrow) ?? 0) < 60_000) return;
  warnedAt.set(burrow, Date.now());
  const cause = (refusal.cause as Error | undefined)?.message;
  burrow.log.warn("writes refused: the data directory's disk is full", { refused: burrow.ops.disk.refusedWrites, cause });
}

/** The failure as an ApiError (ours, or Elysia's mapped to our wording); null for an unexpected error (500). */
function apiErrorOf(code: unknown, error: unknown, request: Request, allowedAt: (path: string) => string[]): ApiError | null {
  if (error instanceof ApiError) return error;
  // A body parser's ApiError (413, malformed JSON) reaches us wrapped in Elysia's ParseError.
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof ApiError) return cause;
  // SQLITE_FULL, ENOSPC, EDQUOT from any write (data, files, sessions, push, custom code): 507 (db/disk-full.ts).
  const full = asDiskFull(error);
  if (full !== null) return full;
  switch (code) {
    case "NOT_FOUND":
      return noRoute(request, allowedAt);
    case "PARSE":
      return new ApiError(400, "malformed request body");
    case "VALIDATION":
      return new ApiError(400, validationMessage(error));
  }
  return null;
}

/** 404, or 405 with Allow where other methods have a route; a HEAD is refused as its GET would be. */
function noRoute(request: Request, allowedAt: (path: string) => string[]): ApiError {
  const allowed = allowedAt(pathOf(request.url));
  if (allowed.length === 0) return new ApiError(404, "not found");
  return methodNotAllowed(`${request.method === "HEAD" ? "GET" : request.method} is not allowed here`, allowed);
}

interface SchemaLike {
  type?: string;
  anyOf?: SchemaLike[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  pattern?: string;
  properties?: Record<string, unknown>;
}

/** What a schema accepts, in words: "an integer from 1 to 1000000", "a string matching ^\d+$". */
function expected(s: SchemaLike | undefined): string {
  if (!s) return "a valid value";
  if (s.anyOf)
    return s.anyOf
      .map(expected)
      .filter((v, i, all) => all.indexOf(v) === i)
      .join(" or ");
  if (s.enum) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  const range =
    s.minimum !== undefined && s.maximum !== undefined
      ? ` from ${s.minimum} to ${s.maximum}`
      : s.minimum !== undefined
        ? ` of at least ${s.minimum}`
        : s.maximum !== undefined
          ? ` of at most ${s.maximum}`
          : "";
  switch (s.type) {
    case "integer":
      return `an integer${range}`;
    case "number":
      return `${s.multipleOf === 1 ? "an integer" : "a number"}${range}`;
    case "string":
      return s.pattern ? `a string matching ${s.pattern}` : "a string";
    case "boolean":
      return "true or false";
    case "object":
      return "a JSON object";
    case "array":
      return "an array";
    default:
      return s.type ? `a ${s.type}` : "a valid value";
  }
}

/**
 * A validation failure of a `t` schema as one precise line: where (body, query or params, and the member),
 * what was expected and what came, e.g. `body.version: expected an integer from 1 to 1000000, got 1.5`.
 */
function validationMessage(error: unknown): string {
  const e = error as { type?: string; all?: { path?: string; message?: string; value?: unknown; schema?: SchemaLike }[] };
  const first = e.all?.[0];
  const member = (first?.path ?? "").replace(/^\//, "").replaceAll("/", ".");
  const where = member ? `${e.type ?? "request"}.${member}` : (e.type ?? "request");
  if (first?.message === "Unexpected property") {
    const allowed = Object.keys(first.schema?.properties ?? {});
    return `${where}: unknown member${allowed.length ? `; allowed: ${allowed.join(", ")}` : ""}`;
  }
  if (first?.value === undefined) return `${where}: required, expected ${expected(first?.schema)}`;
  const got = JSON.stringify(first.value) ?? String(first.value);
  return `${where}: expected ${expected(first.schema)}, got ${got.length > 40 ? `${got.slice(0, 40)}…` : got}`;
}
