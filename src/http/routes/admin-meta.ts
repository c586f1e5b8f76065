// The admin API's routes about the server itself: its status figures (those of the status page, counted afresh),
// log lines (custom code's, and this process's recent requests), and the mail outbox (mail kept when no SMTP host is
// set, and mail not sent, with the reason).

import { Elysia, t } from "elysia";
import { badRequest } from "../../errors.ts";
import type { Burrow } from "../burrow.ts";
import { isEnvName } from "../../system/environments.ts";
import { LOG_LEVELS, type LogLevel } from "../../system/logs.ts";
import { AREAS } from "../../system/request-stats.ts";
import type { RequestFilter } from "../../system/request-log-ring.ts";
import { outboxQuery } from "../../mail/admin-outbox.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDoc as admin, environmentOf } from "../admin-context.ts";
import { json } from "../respond.ts";
import { statusFigures } from "../status-figures.ts";
import * as S from "../schemas.ts";

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
  if (status !== undefined && !/^([1-5]xx|[1-5]\d\d)$/.test(status))
    throw badRequest("status must be 4xx, 5xx (any class) or a status code");
  const env = p.get("env") ?? undefined;
  if (env !== undefined && !isEnvName(env) && env !== "-") throw badRequest("env must be development, production or - (no environment)");
  const method = p.get("method")?.toUpperCase();
  return { area, status, env, method, before: before === null ? undefined : Number(before), limit };
}

export function adminMetaRoutes(burrow: Burrow) {
  return new Elysia({ name: "admin-meta", prefix: "/_admin/api" })
    .use(adminGuard(burrow))
    .get(
      "/status",
      async ({ request }) => {
        return json(await statusFigures(burrow, new URL(request.url).origin, true));
      },
      {
        role: "viewer",
        detail: admin(
          "Version, uptime, objects, requests per area over the last hour, store sizes, push queues, custom code, memory",
          "The figures of the status page (/_status) as JSON.",
        ),
        response: { 200: S.Status, ...S.errors(401) },
      },
    )
    .get(
      "/logs",
      async ({ request }) => {
        const url = new URL(request.url);
        const source = url.searchParams.get("source") ?? "code";
        if (source === "requests") return json(burrow.requestLog.list(requestFilter(url)));
        if (source !== "code") throw badRequest(`unknown log source "${source.slice(0, 32)}"; sources: code, requests`);
        const env = environmentOf(url.searchParams.get("env") ?? "development");
        const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get("limit") ?? 100) || 100));
        const beforeRaw = url.searchParams.get("before");
        if (beforeRaw !== null && !/^\d{1,15}$/.test(beforeRaw)) throw badRequest("before must be a line id");
        const level = url.searchParams.get("level");
        if (level !== null && !(LOG_LEVELS as readonly string[]).includes(level))
          throw badRequest(`level must be one of ${LOG_LEVELS.join(", ")}`);
        return json(
          await burrow.logs.list(env, source, {
            limit,
            before: beforeRaw === null ? undefined : Number(beforeRaw),
            level: (level ?? undefined) as LogLevel | undefined,
          }),
        );
      },
      {
        role: "viewer",
        detail: admin(
          "Log lines, newest first",
          "?source=code (custom code's log service and its failures): ?env=development|production (default development), ?level=debug|info|warn|error (that level and above), ?limit=1..1000, ?before=<id> for the next page. ?source=requests (this process's newest 10,000 requests, at --log-level info): ?area=data|users|code|push|files|admin|system|other, ?status=4xx|5xx|<code>, ?env=, ?method=, ?limit=, ?before=.",
        ),
      },
    )
    .get(
      "/outbox",
      async ({ request }) => {
        return json(await burrow.mailer.outbox(outboxQuery(new URL(request.url))));
      },
      {
        role: "editor",
        query: S.OutboxQuery,
        detail: admin(
          "Mails kept in the outbox (no SMTP host set), newest first",
          "Kept 30 days. Editors and owners only: it holds temporary passwords.",
        ),
        response: { 200: t.Array(S.AnyObject), ...S.errors(400, 401, 403) },
      },
    );
}
