// The admin JSON API under /_admin/api: the sign-in (login, limited per client IP and per email), and the route
// files by what they serve: schemas and deploys, custom code with its jobs and hooks, data, user accounts, admins, push, settings and keys,
// backups, and the server's own status, logs and outbox. Every route but login declares the least role it needs
// (`{ role: ... }`), which adminGuard (admin-guard.ts) enforces with the bearer token from login.

import { adminLiveRoutes } from "./admin-live.ts";
import { Elysia } from "elysia";
import { tooManyRequests, unauthorized } from "../../errors.ts";
import type { Burrow } from "../burrow.ts";
import { json } from "../respond.ts";
import { clientIp } from "../origin.ts";
import { rateKeyOfIp } from "../../net/ip.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import * as S from "../schemas.ts";
import { adminAccountRoutes } from "./admin-accounts.ts";
import { adminBackupRoutes } from "./admin-backups.ts";
import { adminCodeRoutes } from "./admin-code.ts";
import { adminJobRoutes } from "./admin-jobs.ts";
import { adminHookRoutes } from "./admin-hooks.ts";
import { adminDataRoutes } from "./admin-data.ts";
import { adminMetaRoutes } from "./admin-meta.ts";
import { adminPushRoutes } from "./admin-push.ts";
import { adminSchemaRoutes } from "./admin-schemas.ts";
import { adminSettingRoutes } from "./admin-settings.ts";
import { adminUserRoutes } from "./admin-users.ts";

/** Admin logins are limited like user logins: per client IP, and per email after failures. */
const ADMIN_LIMITS = { ipPerMinute: 60, failures: 10, failureWindowMs: 15 * 60_000 };

/** The admin API: the sign-in and every route file. */
export function adminRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  return new Elysia({ name: "admin" })
    .use(loginRoute(burrow, info, parsers))
    .use(adminSchemaRoutes(burrow, parsers))
    .use(adminCodeRoutes(burrow, parsers))
    .use(adminJobRoutes(burrow, parsers))
    .use(adminHookRoutes(burrow, parsers))
    .use(adminDataRoutes(burrow, parsers))
    .use(adminUserRoutes(burrow, parsers))
    .use(adminAccountRoutes(burrow, parsers))
    .use(adminPushRoutes(burrow, parsers))
    .use(adminSettingRoutes(burrow, parsers))
    .use(adminBackupRoutes(burrow, parsers))
    .use(adminLiveRoutes(burrow, parsers))
    .use(adminMetaRoutes(burrow));
}

function loginRoute(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { limiter } = burrow;
  return new Elysia({ name: "admin-login", prefix: "/_admin/api" }).use(parsers).post(
    "/login",
    async ({ request, body }) => {
      const ip = clientIp(request, info, burrow.config.trustedProxy);
      const perIp = await limiter.hit(`admin|ip|${ip === null ? "unknown" : rateKeyOfIp(ip)}`, ADMIN_LIMITS.ipPerMinute, 60_000);
      if (!perIp.ok) throw tooManyRequests(perIp.retryAfter);
      const b = body as { email?: unknown; password?: unknown } | undefined;
      const account = `admin|fail|${typeof b?.email === "string" ? b.email.toLowerCase().slice(0, 254) : ""}`;
      // The attempt is taken from the failure budget before the password is checked (parallel guesses included).
      const attempt = await limiter.hit(account, ADMIN_LIMITS.failures, ADMIN_LIMITS.failureWindowMs);
      if (!attempt.ok) throw tooManyRequests(attempt.retryAfter);
      const session = await burrow.admins.login(b?.email, b?.password);
      if (!session) throw unauthorized("invalid email or password");
      await limiter.reset(account);
      return json(session);
    },
    {
      parse: "admin",
      // Not validated by the schema: a malformed login is the same 401 as a wrong password (no field oracle).
      detail: { tags: ["admin"], summary: "Log in as an admin", ...S.jsonBody(S.AdminLogin) },
      response: { 200: S.AdminSession, ...S.errors(401, 429) },
    },
  );
}
