// The admin JSON API under /_admin/api (product.md §5): login, keys, schemas, deploy, settings, status.
// Every route but login needs `Authorization: Bearer <token>` from POST /_admin/api/login.

import { Elysia } from "elysia";
import { ApiError, badRequest, notFound, tooManyRequests } from "../../errors.ts";
import { isValidName } from "../../schema/definition.ts";
import type { Services } from "../../services.ts";
import { ENVIRONMENTS, type EnvName, isEnvName } from "../../system/environments.ts";
import { redactSettings } from "../../system/settings.ts";
import { json } from "../respond.ts";
import { clientIp } from "../origin.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { outboxQuery } from "../../mail/admin-outbox.ts";

async function requireAdmin(services: Services, request: Request) {
  const due = services.refreshIfDue();
  if (due) await due;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  const admin = m ? await services.admins.authenticate(m[1]!) : null;
  if (!admin) throw new ApiError(401, "admin authorization required: send Authorization: Bearer <token> from POST /_admin/api/login", { headers: { "www-authenticate": 'Bearer realm="burrow-admin"' } });
  return admin;
}

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

function envParam(env: string): EnvName {
  if (!isEnvName(env)) throw notFound(`unknown environment "${env}"; use development or production`);
  return env;
}

/** Admin logins are limited like user logins: per client IP, and per email after failures. */
const ADMIN_LIMITS = { ipPerMinute: 60, failures: 10, failureWindowMs: 15 * 60_000 };

export function adminRoutes(services: Services, info: RequestInfo, parsers: BodyParsers) {
  const { catalog, limiter } = services;
  return new Elysia({ name: "admin", prefix: "/_admin/api" })
    .use(parsers)
    .post("/login", async ({ request, body }) => {
      const ip = clientIp(request, info, services.config.trustedProxy) ?? "unknown";
      const perIp = limiter.hit(`admin|ip|${ip}`, ADMIN_LIMITS.ipPerMinute, 60_000);
      if (!perIp.ok) throw tooManyRequests(perIp.retryAfter);
      const b = body as { email?: unknown; password?: unknown } | undefined;
      const account = `admin|fail|${typeof b?.email === "string" ? b.email.toLowerCase().slice(0, 254) : ""}`;
      const blocked = limiter.blocked(account, ADMIN_LIMITS.failures);
      if (!blocked.ok) throw tooManyRequests(blocked.retryAfter);
      const session = await services.admins.login(b?.email, b?.password);
      if (!session) {
        limiter.hit(account, ADMIN_LIMITS.failures, ADMIN_LIMITS.failureWindowMs);
        throw new ApiError(401, "invalid email or password");
      }
      limiter.reset(account);
      return json(session);
    }, { parse: "admin" })
    // Every route below needs an admin's bearer token.
    .derive(async ({ request }) => ({ admin: await requireAdmin(services, request) }))
    .get("/outbox", async ({ request }) => {
      return json(await services.mailer.outbox(outboxQuery(new URL(request.url))));
    })
    .get("/keys", () => {
      return json(services.keys.set);
    })
    .get("/schemas", async ({ request }) => {
      const v = versionParam(new URL(request.url));
      const defs = catalog.definitions(v);
      if (!defs) throw notFound(`API version ${v} is not deployed`);
      return json(defs);
    })
    .get("/schemas/:name", async ({ request, params }) => {
      const v = versionParam(new URL(request.url));
      const defs = catalog.definitions(v);
      if (!defs) throw notFound(`API version ${v} is not deployed`);
      const def = defs.find((d) => d.name === params.name);
      if (!def) throw notFound(`schema "${params.name}" does not exist`);
      return json(def);
    })
    .put("/schemas/:name", async ({ request, params, body }) => {
      const url = new URL(request.url);
      if (versionParam(url) !== 0) throw badRequest("production schemas change only by deploying development (POST /_admin/api/deploy)");
      if (!isValidName(params.name)) throw badRequest(`"${params.name}" is not a valid schema name (lowercase letters, digits and _, starting with a letter, at most 64)`);
      const input = body;
      if (input === undefined) throw badRequest("send the schema definition as the JSON body");
      const r = await catalog.put(input, { name: params.name, force: flag(url, "force"), dryRun: flag(url, "dryRun") });
      return json({ ...r.definition, changes: r.changes }, r.created && !flag(url, "dryRun") ? 201 : 200);
    }, { parse: "admin" })
    .delete("/schemas/:name", async ({ request, params }) => {
      if (versionParam(new URL(request.url)) !== 0) throw badRequest("only development schemas can be deleted");
      await catalog.remove(params.name);
      return json({});
    })
    .post("/deploy", async ({ admin, body }) => {
      const b = (body ?? {}) as Record<string, unknown>;
      if (typeof b !== "object" || b === null || Array.isArray(b)) throw badRequest("send {} or {\"version\": N, \"force\": true}");
      for (const k of Object.keys(b)) if (!["version", "force", "dryRun"].includes(k)) throw badRequest(`unknown deploy option "${k}"`);
      const r = await catalog.deploy({ version: b.version, force: b.force === true, dryRun: b.dryRun === true, admin: admin.email });
      return json(r);
    }, { parse: "admin" })
    .get("/deploys", async () => {
      return json(await catalog.history());
    })
    .get("/settings/:env", ({ params }) => {
      return json(redactSettings(services.settings.get(envParam(params.env))));
    })
    .put("/settings/:env", async ({ params, body }) => {
      const env = envParam(params.env);
      return json(redactSettings(await services.settings.update(env, body)));
    }, { parse: "admin" })
    .get("/status", async () => {
      const environments: Record<string, unknown> = {};
      for (const env of ENVIRONMENTS) {
        const db = services.envDbs[env];
        if (env === "development") {
          const counts = await services.objects.counts({ db, schemas: catalog.development() });
          environments[env] = { schemas: Object.keys(counts).length, objects: counts, total: sum(counts) };
        } else {
          const latest = catalog.latestVersion();
          const counts = latest === null ? {} : await services.objects.counts({ db, schemas: catalog.production(latest)! });
          environments[env] = { versions: catalog.versions(), latestVersion: latest, schemas: Object.keys(counts).length, objects: counts, total: sum(counts) };
        }
      }
      return json({
        version: services.version,
        startedAt: new Date(services.startedAt).toISOString(),
        uptimeSeconds: Math.floor((Date.now() - services.startedAt) / 1000),
        environments,
      });
    });
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
