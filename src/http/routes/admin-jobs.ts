// The admin API's custom code job routes (the console's jobs screen): the jobs of an environment's current code
// with their schedule, next occurrences and newest runs; a run started now; one run with its log lines.

import { Elysia, t } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import type { EnvName } from "../../system/environments.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDoc as admin, environmentOf } from "../admin-context.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

const EnvQuery = t.Object({
  env: t.Optional(t.String({ description: "development or production (default development)" })),
  runs: t.Optional(t.String({ description: "runs listed per job, 1..100 (default 20)" })),
});

const JobRun = t.Object(
  {
    id: t.String(),
    trigger: t.Union([t.Literal("schedule"), t.Literal("manual"), t.Literal("missed")]),
    status: t.Union(["running", "ok", "failed", "timeout", "skipped", "missed"].map((s) => t.Literal(s))),
    occurrence: t.String({ description: "the scheduled time (a manual run: when it was asked for), ISO 8601" }),
    started: t.Union([t.String(), t.Null()], { description: "null: it did not run" }),
    durationMs: t.Union([t.Integer(), t.Null()]),
    error: t.Union([t.String(), t.Null()]),
    log: t.Array(t.String(), { description: 'the lines it wrote with services.log, "level: message" (the first 200)' }),
  },
  { additionalProperties: false },
);

const JobList = t.Object({
  jobs: t.Array(
    t.Object({
      name: t.String(),
      schedule: t.String(),
      timezone: t.String(),
      timeoutMs: t.Integer(),
      next: t.Array(t.String(), { description: "the next five occurrences, ISO 8601" }),
      running: t.Boolean(),
      runs: t.Array(JobRun, { description: "newest first" }),
    }),
  ),
});

const envOf = (url: URL): EnvName => environmentOf(url.searchParams.get("env") ?? "development");

export function adminJobRoutes(burrow: Burrow, parsers: BodyParsers) {
  return new Elysia({ name: "admin-jobs", prefix: "/_admin/api" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get(
      "/jobs",
      async ({ request }) => {
        const url = new URL(request.url);
        const raw = url.searchParams.get("runs");
        if (raw !== null && !/^(100|[1-9]\d?)$/.test(raw)) throw badRequest("runs must be an integer from 1 to 100");
        return json({ jobs: await burrow.jobs.list(envOf(url), raw === null ? 20 : Number(raw)) });
      },
      {
        role: "viewer",
        query: EnvQuery,
        detail: admin(
          "Custom code jobs of an environment",
          "The jobs of its current code (development's upload, production's newest version): schedule, time zone, timeout, the next five occurrences, whether a run is under way, and the newest runs with their log lines.",
        ),
        response: { 200: JobList, ...S.errors(400, 401, 404) },
      },
    )
    .post(
      "/jobs/:name/run",
      async ({ request, params }) => {
        const id = await burrow.jobs.runNow(envOf(new URL(request.url)), params.name);
        return json({ run: id }, 202);
      },
      {
        role: "editor",
        parse: "none",
        query: EnvQuery,
        detail: admin(
          "Run a job now",
          "Starts a run of the job (trigger manual) and answers 202 with its id at once; GET .../runs/<id> shows how it went. 409 while a run of the job is under way.",
        ),
        response: { 202: t.Object({ run: t.String() }), ...S.errors(401, 403, 404, 409) },
      },
    )
    .get(
      "/jobs/:name/runs/:id",
      async ({ request, params }) => {
        const env = envOf(new URL(request.url));
        const run = await burrow.jobs.run(env, params.name, params.id);
        if (!run) throw notFound(`job ${params.name.slice(0, 64)} in ${env} has no run "${params.id.slice(0, 32)}"`);
        return json(run);
      },
      {
        role: "viewer",
        query: EnvQuery,
        detail: admin("One run of a job", "Its trigger, status, occurrence, start, duration, error and log lines."),
        response: { 200: JobRun, ...S.errors(401, 404) },
      },
    );
}
