// The admin JSON API under /_admin/api (product.md §5): login, keys, schemas, deploy, settings, status, test
// mail; with the admins' own routes (admin-accounts.ts) and user accounts (admin-users.ts). Every route but
// login needs `Authorization: Bearer <token>` from POST /_admin/api/login and a role that allows it, both
// checked by adminGuard (admin-guard.ts).

import { Elysia, t } from "elysia";
import { ApiError, badRequest, notFound, tooManyRequests, unauthorized } from "../../errors.ts";
import { isValidName } from "../../schema/definition.ts";
import type { Services } from "../services.ts";
import { ENVIRONMENTS, isEnvName } from "../../system/environments.ts";
import { redactSettings } from "../../system/settings.ts";
import { json } from "../respond.ts";
import { statusFigures } from "../status-figures.ts";
import { environmentOf } from "../admin-context.ts";
import { clientIp } from "../origin.ts";
import { rateKeyOfIp } from "../../net/ip.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { outboxQuery } from "../../mail/admin-outbox.ts";
import * as S from "../schemas.ts";
import { readText } from "../body.ts";
import { MAX_BUNDLE_BYTES } from "../../code/bundle.ts";
import { CodeError } from "../../code/sandbox.ts";
import { LOG_LEVELS, type LogLevel } from "../../system/logs.ts";
import { AREAS } from "../../system/request-stats.ts";
import type { RequestFilter } from "../../system/request-log-ring.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminAccountRoutes } from "./admin-accounts.ts";
import { adminUserRoutes } from "./admin-users.ts";

const admin = (summary: string, description?: string) => ({ tags: ["admin"], summary, description, security: [{ adminBearer: [] }] });

/** `?version=N`: 0 (or absent) is development. */
function versionParam(url: URL): number {
  const raw = url.searchParams.get("version");
  if (raw === null || raw === "") return 0;
  if (!/^\d{1,7}$/.test(raw)) throw badRequest(`version must be a non-negative integer, not "${raw.slice(0, 32)}"`);
  return Number(raw);
}

function flag(url: URL, name: string): boolean {
  const v = url.searchParams.get(name);
  return v !== null && v !== "false" && v !== "0";
}

const AREA_NAMES: readonly string[] = AREAS;

/** The filters of GET /logs?source=requests; 400 for values that cannot match anything. */
function requestFilter(url: URL): RequestFilter {
  const p = url.searchParams;
  const limit = Math.min(1000, Math.max(1, Number(p.get("limit") ?? 100) || 100));
  const before = p.get("before");
  if (before !== null && !/^\d{1,15}$/.test(before)) throw badRequest("before must be an entry id");
  const area = p.get("area") ?? undefined;
  if (area !== undefined && !AREA_NAMES.includes(area)) throw badRequest(`area must be one of ${AREAS.join(", ")}`);
  const status = p.get("status") ?? undefined;
  if (status !== undefined && !/^([1-5]xx|[1-5]\d\d)$/.test(status)) throw badRequest("status must be 4xx, 5xx (any class) or a status code");
  const env = p.get("env") ?? undefined;
  if (env !== undefined && !isEnvName(env) && env !== "-") throw badRequest("env must be development, production or - (no environment)");
  const method = p.get("method")?.toUpperCase();
  return { area, status, env, method, before: before === null ? undefined : Number(before), limit };
}

/** Admin logins are limited like user logins: per client IP, and per email after failures. */
const ADMIN_LIMITS = { ipPerMinute: 60, failures: 10, failureWindowMs: 15 * 60_000 };

/** POST /mail/test: whose mail settings to use, and to whom. */
const MailTest = t.Object(
  { env: t.String({ enum: [...ENVIRONMENTS], description: "whose mail settings to use" }), to: t.String({ description: "one email address" }) },
  { additionalProperties: false },
);

/** The admin API: these routes, the admins' own (admin-accounts.ts) and user accounts (admin-users.ts). */
export function adminRoutes(services: Services, info: RequestInfo, parsers: BodyParsers) {
  return new Elysia({ name: "admin" })
    .use(mainRoutes(services, info, parsers))
    .use(adminAccountRoutes(services, parsers))
    .use(adminUserRoutes(services, parsers));
}

function mainRoutes(services: Services, info: RequestInfo, parsers: BodyParsers) {
  const { catalog, limiter } = services;
  return new Elysia({ name: "admin-main", prefix: "/_admin/api" })
    .use(parsers)
    .post("/login", async ({ request, body }) => {
      const ip = clientIp(request, info, services.config.trustedProxy);
      const perIp = await limiter.hit(`admin|ip|${ip === null ? "unknown" : rateKeyOfIp(ip)}`, ADMIN_LIMITS.ipPerMinute, 60_000);
      if (!perIp.ok) throw tooManyRequests(perIp.retryAfter);
      const b = body as { email?: unknown; password?: unknown } | undefined;
      const account = `admin|fail|${typeof b?.email === "string" ? b.email.toLowerCase().slice(0, 254) : ""}`;
      // The attempt is taken from the failure budget before the password is checked (parallel guesses included).
      const attempt = await limiter.hit(account, ADMIN_LIMITS.failures, ADMIN_LIMITS.failureWindowMs);
      if (!attempt.ok) throw tooManyRequests(attempt.retryAfter);
      const session = await services.admins.login(b?.email, b?.password);
      if (!session) throw unauthorized("invalid email or password");
      await limiter.reset(account);
      return json(session);
    }, {
      parse: "admin",
      // Not validated by the schema: a malformed login is the same 401 as a wrong password (no field oracle).
      detail: { tags: ["admin"], summary: "Log in as an admin", ...S.jsonBody(S.AdminLogin) },
      response: { 200: S.AdminSession, ...S.errors(401, 429) },
    })
    // Every route below needs an admin's bearer token and a role that allows the request.
    .use(adminGuard(services))
    .get("/outbox", async ({ request }) => {
      return json(await services.mailer.outbox(outboxQuery(new URL(request.url))));
    }, { query: S.OutboxQuery, detail: admin("Mails kept in the outbox (no SMTP host set), newest first", "Kept 30 days. Editors and owners only: it holds temporary passwords."), response: { 200: t.Array(S.AnyObject), ...S.errors(400, 401, 403) } })
    .post("/mail/test", async ({ admin, body }) => {
      if (!isEnvName(body.env)) throw badRequest("env must be development or production");
      const env = body.env;
      // A subject of its own, so a failure's full (redacted) SMTP error can be found in the outbox record.
      const subject = `${(services.settings.get(env).app as { name: string }).name}: test mail ${crypto.randomUUID().slice(0, 8)}`;
      const text = `This is a test mail from Burrow's ${env} environment, sent by ${admin.email} at ${new Date().toISOString()}.\nIt arrived, so the mail settings work.\n`;
      try {
        const sent = await services.mailer.send(env, { to: body.to, subject, text });
        return json({ sent: true, via: sent.via });
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 502) throw e;
        const failed = (await services.mailer.outbox({ env, limit: 50 })).find((m) => m.subject === subject && m.error);
        throw new ApiError(502, `the test mail could not be sent: ${failed?.error ?? e.message}`);
      }
    }, {
      parse: "admin",
      body: MailTest,
      detail: {
        ...admin("Send a test mail with an environment's mail settings (owners only)", "Through SMTP when a host is set, else into the outbox. An SMTP failure is 502 with the SMTP server's error (passwords removed)."),
        ...S.jsonBody(MailTest),
      },
      response: { 200: t.Object({ sent: t.Boolean(), via: t.String({ enum: ["smtp", "outbox"] }) }), ...S.errors(400, 401, 403, 502) },
    })
    .get("/keys", () => {
      return json(services.keys.set);
    }, { detail: admin("Both environments' public and private API keys (owners only)"), response: { 200: S.Keys, ...S.errors(401, 403) } })
    .get("/schemas", async ({ request }) => {
      const v = versionParam(new URL(request.url));
      const defs = catalog.definitions(v);
      if (!defs) throw notFound(`API version ${v} is not deployed`);
      return json(defs);
    }, { query: S.SchemaVersionQuery, detail: admin("Schema definitions of development or of a production version"), response: { 200: t.Array(S.AnyObject), ...S.errors(400, 401, 404) } })
    .get("/schemas/:name", async ({ request, params }) => {
      const v = versionParam(new URL(request.url));
      const defs = catalog.definitions(v);
      if (!defs) throw notFound(`API version ${v} is not deployed`);
      const def = defs.find((d) => d.name === params.name);
      if (!def) throw notFound(`schema "${params.name}" does not exist`);
      return json(def);
    }, { query: S.SchemaVersionQuery, detail: admin("One schema definition"), response: { 200: S.AnyObject, ...S.errors(400, 401, 404) } })
    .put("/schemas/:name", async ({ request, params, body }) => {
      const url = new URL(request.url);
      if (versionParam(url) !== 0) throw badRequest("production schemas change only by deploying development (POST /_admin/api/deploy)");
      if (!isValidName(params.name)) throw badRequest(`"${params.name}" is not a valid schema name (lowercase letters, digits and _, starting with a letter, at most 64)`);
      const input = body;
      if (input === undefined) throw badRequest("send the schema definition as the JSON body");
      const r = await catalog.put(input, { name: params.name, force: flag(url, "force"), dryRun: flag(url, "dryRun") });
      return json({ ...r.definition, changes: r.changes }, r.created && !flag(url, "dryRun") ? 201 : 200);
    }, {
      parse: "admin",
      query: S.SchemaPutQuery,
      body: t.Optional(S.AnyObject),
      detail: { ...admin("Create or change a development schema", "The body is a schema definition (fields, permissions, indexes, user block); the answer lists the migration's changes. Destructive changes need ?force=true."), ...S.jsonBody(S.AnyObject, "a schema definition") },
      response: { 200: S.AnyObject, 201: S.AnyObject, ...S.errors(400, 401, 403, 409) },
    })
    .delete("/schemas/:name", async ({ request, params }) => {
      if (versionParam(new URL(request.url)) !== 0) throw badRequest("only development schemas can be deleted");
      await catalog.remove(params.name);
      // A user schema's sessions ended with its table; this node forgets those it cached.
      services.sessions.development.forgetSchema(params.name);
      return json({});
    }, { query: S.SchemaVersionQuery, detail: admin("Drop a development schema and its objects"), response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 404) } })
    .post("/deploy", async ({ admin, body }) => {
      const b = (body ?? {}) as Record<string, unknown>;
      if (typeof b !== "object" || b === null || Array.isArray(b)) throw badRequest("send {} or {\"version\": N, \"force\": true}");
      for (const k of Object.keys(b)) if (!["version", "force", "dryRun"].includes(k)) throw badRequest(`unknown deploy option "${k}"`);
      const r = await catalog.deploy({ version: b.version, force: b.force === true, dryRun: b.dryRun === true, admin: admin.email });
      if (b.dryRun !== true) for (const w of r.warnings) services.log.warn(w);
      return json(r);
    }, {
      parse: "admin",
      body: S.DeployRequest,
      detail: { ...admin("Deploy development's schemas as a production API version", "Snapshots development as version N and migrates production.db additively."), ...S.jsonBody(S.DeployRequest) },
      response: { 200: S.DeployResult, ...S.errors(400, 401, 403, 409) },
    })
    .put("/code", async ({ request }) => {
      const url = new URL(request.url);
      const lang = url.searchParams.get("lang") ?? (/typescript/i.test(request.headers.get("content-type") ?? "") ? "ts" : "auto");
      if (lang !== "js" && lang !== "ts" && lang !== "auto") throw badRequest("lang must be js, ts or auto");
      const source = await readText(request, MAX_BUNDLE_BYTES);
      try {
        return json(await services.code.upload(source, lang));
      } catch (e) {
        if (e instanceof CodeError) return json({ error: e.message, ...(e.line !== undefined ? { line: e.line } : {}) }, 400);
        throw e;
      }
    }, {
      parse: "none",
      query: t.Object({ lang: t.Optional(t.String({ description: "js, ts or auto (default: JavaScript unless it only parses as TypeScript; Content-Type text/typescript means ts)" })) }),
      detail: { ...admin("Upload development's custom code", "The body is one ES module (JavaScript or TypeScript) exporting `methods`. It is compiled and loaded before it is stored; a compile or load error is 400 with the line. A method may not have a schema's name."), requestBody: { required: true, content: { "application/javascript": { schema: { type: "string" } }, "text/typescript": { schema: { type: "string" } } } } },
      response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 413) },
    })
    .get("/code", ({ request }) => {
      const v = versionParam(new URL(request.url));
      if (v !== 0 && !catalog.versions().includes(v)) throw notFound(`API version ${v} is not deployed`);
      const code = v === 0 ? services.code.development() : services.code.production(v);
      if (!code) throw notFound(v === 0 ? "development has no custom code; PUT /_admin/api/code uploads it" : `API version ${v} has no custom code`);
      return json(code);
    }, { query: S.SchemaVersionQuery, detail: admin("Custom code of development or of a production version: source, methods, updated"), response: { 200: S.AnyObject, ...S.errors(400, 401, 404) } })
    .delete("/code", async () => {
      if (!(await services.code.remove())) throw notFound("development has no custom code");
      return json({});
    }, { detail: admin("Remove development's custom code (production versions keep theirs)"), response: { 200: S.AnyObject, ...S.errors(401, 403, 404) } })
    .get("/logs", async ({ request }) => {
      const url = new URL(request.url);
      const source = url.searchParams.get("source") ?? "code";
      if (source === "requests") return json(services.requestLog.list(requestFilter(url)));
      if (source !== "code") throw badRequest(`unknown log source "${source.slice(0, 32)}"; sources: code, requests`);
      const env = environmentOf(url.searchParams.get("env") ?? "development");
      const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get("limit") ?? 100) || 100));
      const beforeRaw = url.searchParams.get("before");
      if (beforeRaw !== null && !/^\d{1,15}$/.test(beforeRaw)) throw badRequest("before must be a line id");
      const level = url.searchParams.get("level");
      if (level !== null && !(LOG_LEVELS as readonly string[]).includes(level)) throw badRequest(`level must be one of ${LOG_LEVELS.join(", ")}`);
      return json(await services.logs.list(env, source, { limit, before: beforeRaw === null ? undefined : Number(beforeRaw), level: (level ?? undefined) as LogLevel | undefined }));
    }, { detail: admin("Log lines, newest first", "?source=code (custom code's log service and its failures): ?env=development|production (default development), ?level=debug|info|warn|error (that level and above), ?limit=1..1000, ?before=<id> for the next page. ?source=requests (this process's newest 10,000 requests, at --log-level info): ?area=data|users|code|push|files|admin|system|other, ?status=4xx|5xx|<code>, ?env=, ?method=, ?limit=, ?before=.") })
    .get("/deploys", async () => {
      return json(await catalog.history());
    }, { detail: admin("Deploy history, newest first"), response: { 200: S.DeployHistory, ...S.errors(401) } })
    .get("/push/notifications", async ({ request }) => {
      const url = new URL(request.url);
      const limit = Math.min(200, Math.max(1, Number(url.searchParams.get("limit") ?? 50) || 50));
      return json(await services.push.queue(environmentOf(url.searchParams.get("env") ?? "production")).recent(limit));
    }, { detail: admin("Recent push notifications", "Newest first: target, queued, sent, failed, expired, retries, still pending, and the first errors. ?env=development|production (default production), ?limit=1..200.") })
    .get("/push/queue", async ({ request }) => {
      const env = environmentOf(new URL(request.url).searchParams.get("env") ?? "production");
      return json({ env, ...(await services.push.queue(env).stats()), tokens: await services.push.tokens(env).count(), inFlight: services.push.deliveryLimits(env) });
    }, { detail: admin("The push queue", "Deliveries waiting (depth), the age of the oldest, those waiting for a retry, leased ones, registered tokens, and per platform the sends allowed in flight now with the shortest round trip seen (they adapt to each provider). ?env=development|production.") })
    .get("/settings/:env", ({ params }) => {
      return json(redactSettings(services.settings.get(environmentOf(params.env))));
    }, { params: t.Object({ env: t.String({ description: "development or production" }) }), detail: admin("An environment's settings, secrets shown as {set: true|false} (owners only)"), response: { 200: S.AnyObject, ...S.errors(401, 403, 404) } })
    .put("/settings/:env", async ({ params, body }) => {
      const env = environmentOf(params.env);
      return json(redactSettings(await services.settings.update(env, body, services.push.validateSettings)));
    }, {
      parse: "admin",
      params: t.Object({ env: t.String({ description: "development or production" }) }),
      body: S.AnyObject,
      detail: { ...admin("Change an environment's settings (owners only)", "A partial settings document (app, smtp, cors, rateLimits, files, ...); unknown keys and wrong types are 400."), ...S.jsonBody(S.AnyObject, "a partial settings document") },
      response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 404) },
    })
    .get("/status", async ({ request }) => {
      return json(await statusFigures(services, new URL(request.url).origin, true));
    }, { detail: admin("Version, uptime, objects, requests per area over the last hour, store sizes, push queues, custom code, memory", "The figures of the status page (/_status) as JSON."), response: { 200: S.Status, ...S.errors(401) } });
}
