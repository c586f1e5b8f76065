// Runs custom code jobs on their schedules: each environment runs the jobs of its current code (development's
// upload, production's newest version), read in the environment's `code.timezone`. Every node looks once a
// second; an occurrence is run by the node whose claim of it succeeds (job-runs.ts), never while another run of
// the job is under way (that occurrence is recorded as skipped). Occurrences that passed while no node looked are
// recorded as missed, and with `code.jobs.missed = "run once"` the job runs once for them. Runs are also started
// by hand (the admin API). The clock is injectable: a test moves it and calls tick().

import type { Client } from "@libsql/core/api";
import { conflict, notFound } from "../errors.ts";
import type { Logger } from "../log.ts";
import { OutageLog } from "../db/store-unreachable.ts";
import { type ApiContext, systemContext } from "../request-context.ts";
import type { Catalog } from "../schema/catalog.ts";
import { ENVIRONMENTS, type EnvName } from "../system/environments.ts";
import type { LogStore } from "../system/logs.ts";
import type { Settings } from "../system/settings.ts";
import { CodeError } from "./code-error.ts";
import { type Schedule, parseSchedule } from "./cron.ts";
import type { CustomCode, JobInfo } from "./custom-code.ts";
import { type JobRun, type JobRuns, type JobStatus, type JobTrigger, newRunId } from "./job-runs.ts";

/** How often a node looks for due occurrences. */
export const TICK_MS = 1000;
/** An occurrence found this late still runs (a restart, a slow look); older ones that passed unrun are missed. */
export const LATE_MS = 60_000;
/** How often a node notes in system.db that it looks (a node that starts learns from it what passed unrun). */
const HEARTBEAT_MS = 30_000;
/** A run still "running" this long past its timeout was left by a node that stopped. */
const STALE_MS = 5 * 60_000;
const SWEEP_MS = 60_000;
/** Missed occurrences recorded one by one (earlier ones are counted in the oldest row's error). */
const MISSED_ROWS = 10;
const NO_NODE = "no node was running at this time";
const STILL_RUNNING = "the previous run was still running";

export interface JobView {
  name: string;
  schedule: string;
  timezone: string;
  timeoutMs: number;
  /** The next five occurrences, ISO 8601. */
  next: string[];
  running: boolean;
  runs: JobRun[];
}

interface CodeSettings {
  timezone: string;
  timeoutMs: number;
  jobs: { missed: "skip" | "run once" };
}

export interface JobSchedulerDeps {
  code: Pick<CustomCode, "jobs" | "invoke">;
  catalog: Pick<Catalog, "development" | "production" | "latestVersion">;
  envDbs: Record<EnvName, Client>;
  settings: Pick<Settings, "get">;
  /** The code log (source "code"): failures and missed occurrences go there for the code's author. */
  logs: Pick<LogStore, "append">;
  runs: JobRuns;
  log: Logger;
  /** The base of file links in what a job reads. */
  fileBase: () => string;
  now?: () => number;
  /** Reload configuration another node changed (a deploy), when due. */
  refresh?: () => Promise<void> | undefined;
}

const SPANS = [3_600_000, 86_400_000, 31 * 86_400_000, 366 * 86_400_000, Number.POSITIVE_INFINITY];
const MAX_COUNT = 2000;

/**
 * The newest `keep` occurrences in (from, to], oldest first, and how many earlier ones there were (`exact`: that
 * count is complete). Looks back an hour, a day, a month, a year, then all the way, so a long gap costs little.
 */
export function occurrencesIn(s: Schedule, from: number, to: number, keep: number): { newest: number[]; earlier: number; exact: boolean } {
  let previous = { newest: [] as number[], earlier: 0, exact: false };
  for (const span of SPANS) {
    const start = Math.max(from, to - span);
    const found: number[] = [];
    for (let n = s.next(start); n !== null && n <= to && found.length <= MAX_COUNT; n = s.next(n)) found.push(n);
    if (found.length > MAX_COUNT) return { ...previous, earlier: MAX_COUNT, exact: false };
    const result = { newest: found.slice(-keep), earlier: Math.max(0, found.length - keep), exact: start === from };
    if (start === from) return result;
    if (found.length >= keep) {
      // The ones before this window are counted while that stays cheap.
      let more = 0;
      for (let n = s.next(from); n !== null && n <= start && more <= MAX_COUNT - found.length; n = s.next(n)) more++;
      return { ...result, earlier: result.earlier + more, exact: more <= MAX_COUNT - found.length };
    }
    previous = result;
  }
  return previous;
}

const keyOf = (env: EnvName, job: string) => `${env}\u0000${job}`;
const iso = (ms: number) => new Date(ms).toISOString();

export class JobScheduler {
  readonly #now: () => number;
  /** Per job ("env\0name"): the time up to which its occurrences were handled by this node. */
  #cursors = new Map<string, number>();
  #lastTick: number | null = null;
  #lastBeat = Number.NEGATIVE_INFINITY;
  #lastSweep = Number.NEGATIVE_INFINITY;
  /** Runs under way on this node, by job. */
  #running = new Map<string, { id: string; done: Promise<void> }>();
  #schedules = new Map<string, Schedule | Error>();
  #queue: Promise<void> = Promise.resolve();
  #looking = false;
  #closed = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly deps: JobSchedulerDeps) {
    this.#now = deps.now ?? Date.now;
  }

  /** The code whose jobs an environment runs now: development's, or production's newest version (null: none). */
  current(env: EnvName): { version: number; jobs: readonly JobInfo[] } | null {
    const version = env === "development" ? 0 : this.deps.catalog.latestVersion();
    return version === null ? null : { version, jobs: this.deps.code.jobs(env, version) };
  }

  #settings(env: EnvName): CodeSettings {
    return this.deps.settings.get(env).code as unknown as CodeSettings;
  }

  #schedule(job: JobInfo, zone: string): Schedule | Error {
    const key = `${zone}\u0000${job.schedule}`;
    let s = this.#schedules.get(key);
    if (!s) {
      try {
        s = parseSchedule(job.schedule, zone);
      } catch (e) {
        s = e as Error;
        this.deps.log.warn("a custom code job's schedule does not parse; it does not run", { job: job.name, error: s.message });
      }
      this.#schedules.set(key, s);
    }
    return s;
  }

  /** Look for due occurrences now (ticks run one after another). */
  tick(): Promise<void> {
    const next = this.#queue.then(() => this.#tick());
    this.#queue = next.catch(() => {});
    return next;
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    await this.deps.refresh?.()?.then(
      () => this.#refreshLog.ok(),
      (e) => this.#refreshLog.shouldLog(e) && this.deps.log.warn("reloading the configuration failed", { error: String(e) }),
    );
    const now = this.#now();
    if (this.#lastTick === null) {
      // A node that starts handles what passed since some node last looked (missed, unless it is recent).
      const alive = await this.deps.runs.lastAlive();
      this.#lastTick = alive !== null && alive < now ? alive : now;
    }
    const seen = new Set<string>();
    for (const env of ENVIRONMENTS) {
      const current = this.current(env);
      if (!current?.jobs.length) continue;
      const settings = this.#settings(env);
      for (const job of current.jobs) {
        const key = keyOf(env, job.name);
        seen.add(key);
        // A job seen for the first time (new code) starts from the previous look.
        const cursor = this.#cursors.get(key) ?? this.#lastTick;
        this.#cursors.set(key, Math.max(cursor, now));
        if (now <= cursor) continue;
        const schedule = this.#schedule(job, settings.timezone);
        if (schedule instanceof Error) continue;
        const due = occurrencesIn(schedule, cursor, now, MISSED_ROWS + 1);
        if (!due.newest.length) continue;
        await this.#due(env, current.version, job, due, settings, now).catch((e) =>
          this.deps.log.warn("starting a custom code job failed", { env, job: job.name, error: String(e) }),
        );
      }
    }
    for (const key of this.#cursors.keys()) if (!seen.has(key)) this.#cursors.delete(key);
    this.#lastTick = Math.max(this.#lastTick, now);
    if (now - this.#lastBeat >= HEARTBEAT_MS) {
      this.#lastBeat = now;
      await this.deps.runs.beat(now);
    }
    if (now - this.#lastSweep >= SWEEP_MS) {
      this.#lastSweep = now;
      await this.deps.runs.sweep(
        now,
        [...this.#running.values()].map((r) => r.id),
      );
    }
  }

  /** Occurrences of one job came due: the newest runs if it is recent; the others passed unrun (missed). */
  async #due(
    env: EnvName,
    version: number,
    job: JobInfo,
    due: { newest: number[]; earlier: number; exact: boolean },
    settings: CodeSettings,
    now: number,
  ): Promise<void> {
    const newest = due.newest[due.newest.length - 1]!;
    const late = newest > now - LATE_MS;
    const passed = late ? due.newest.slice(0, -1) : due.newest;
    const runOnce = !late && passed.length > 0 && settings.jobs.missed === "run once";
    const rows = (runOnce ? passed.slice(0, -1) : passed).map((occurrence) => ({
      occurrence,
      trigger: "schedule" as const,
      status: "missed" as const,
      error: NO_NODE,
    }));
    if (rows[0] && due.earlier > 0) rows[0].error += ` (and ${due.earlier}${due.exact ? "" : " or more"} earlier occurrences, not listed)`;
    const recorded = await this.deps.runs.record(env, job.name, rows);
    // Noted in the code log by the node that recorded them (or that runs the job for them).
    const ranOnce = runOnce && (await this.#start(env, version, job, passed[passed.length - 1]!, "missed", now)) !== null;
    if (recorded > 0 || ranOnce) {
      const count = passed.length + due.earlier;
      this.deps.logs.append(
        env,
        "code",
        "warn",
        `custom code job ${job.name} missed ${count}${due.exact ? "" : " or more"} occurrence${count === 1 ? "" : "s"} while no node was running${ranOnce ? "; it runs once now" : ""}`,
        { job: job.name, newest: iso(passed[passed.length - 1]!) },
      );
    }
    if (late) await this.#start(env, version, job, newest, "schedule", now);
  }

  /** Claim a run and start it (not awaited); answers its id, or null when another node has it or one is running. */
  async #start(env: EnvName, version: number, job: JobInfo, occurrence: number, trigger: JobTrigger, now: number): Promise<string | null> {
    const key = keyOf(env, job.name);
    const timeoutMs = job.timeoutMs ?? this.#settings(env).timeoutMs;
    const id = newRunId();
    const claim = { id, env, job: job.name, occurrence, trigger, started: now, deadline: now + timeoutMs + STALE_MS };
    if (this.#running.has(key) || !(await this.deps.runs.claim(claim, now))) {
      // Recorded unless the occurrence has its row already (another node took it).
      if (trigger !== "manual")
        await this.deps.runs.record(env, job.name, [{ occurrence, trigger, status: "skipped", error: STILL_RUNNING }]);
      return null;
    }
    const entry = { id, done: Promise.resolve() };
    this.#running.set(key, entry);
    entry.done = this.#execute(env, version, job.name, id, { occurrence, trigger }, timeoutMs).finally(() => {
      if (this.#running.get(key) === entry) this.#running.delete(key);
    });
    return id;
  }

  async #execute(
    env: EnvName,
    version: number,
    name: string,
    id: string,
    at: { occurrence: number; trigger: JobTrigger },
    timeoutMs: number,
  ): Promise<void> {
    const lines: string[] = [];
    const started = performance.now();
    let status: JobStatus = "ok";
    let error: string | null = null;
    try {
      const input = { name, occurrence: iso(at.occurrence), trigger: at.trigger, run: id };
      await this.deps.code.invoke(this.#context(env, version), `job:${name}`, input, timeoutMs, lines);
    } catch (e) {
      const timeout = e instanceof CodeError && e.kind === "timeout";
      status = timeout ? "timeout" : "failed";
      error = timeout ? `the job ran longer than ${timeoutMs} ms` : String((e as Error)?.message ?? e);
      if (!this.#closed)
        this.deps.logs.append(env, "code", "error", `custom code job ${name} ${timeout ? "timed out" : "failed"}: ${error}`, {
          job: name,
          run: id,
          kind: e instanceof CodeError ? e.kind : "error",
        });
    }
    const durationMs = Math.round(performance.now() - started);
    try {
      await this.deps.runs.finish(env, name, id, { status, durationMs, error, lines });
    } catch (e) {
      if (!this.#closed) this.deps.log.warn("recording a custom code job's run failed", { env, job: name, run: id, error: String(e) });
    }
  }

  #context(env: EnvName, version: number): ApiContext {
    const schemas = env === "development" ? this.deps.catalog.development() : this.deps.catalog.production(version);
    if (!schemas) throw new Error(`API version ${version} is no longer deployed`);
    return systemContext(env, this.deps.envDbs[env], schemas, this.deps.fileBase);
  }

  /** Start a run of a job of an environment's current code now; answers its id. 404 unknown job, 409 running. */
  async runNow(env: EnvName, name: string): Promise<string> {
    const current = this.current(env);
    const job = current?.jobs.find((j) => j.name === name);
    if (!current || !job) throw notFound(`there is no job "${name.slice(0, 64)}" in ${env}`);
    const now = this.#now();
    const id = await this.#start(env, current.version, job, now, "manual", now);
    if (id === null) throw conflict(`job ${name} is running now; wait for its run to end`);
    return id;
  }

  /** The jobs of an environment's current code: schedule, the next five occurrences, whether running, newest runs. */
  async list(env: EnvName, runs = 20): Promise<JobView[]> {
    const current = this.current(env);
    if (!current) return [];
    const settings = this.#settings(env);
    const now = this.#now();
    return Promise.all(
      current.jobs.map(async (job) => {
        const schedule = this.#schedule(job, settings.timezone);
        return {
          name: job.name,
          schedule: job.schedule,
          timezone: settings.timezone,
          timeoutMs: job.timeoutMs ?? settings.timeoutMs,
          next: schedule instanceof Error ? [] : schedule.nextRuns(5, now).map(iso),
          running: this.#running.has(keyOf(env, job.name)) || (await this.deps.runs.running(env, job.name, now)),
          runs: await this.deps.runs.list(env, job.name, runs),
        };
      }),
    );
  }

  /** Whether an environment's current code has the job. */
  has(env: EnvName, name: string): boolean {
    return this.current(env)?.jobs.some((j) => j.name === name) ?? false;
  }

  /** One run of a job (also of a job the code no longer has), or null. */
  run(env: EnvName, name: string, id: string): Promise<JobRun | null> {
    return this.deps.runs.get(env, name, id);
  }

  /** Resolves when the runs under way on this node have ended (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.all([...this.#running.values()].map((r) => r.done));
  }

  /** While the store is away the looks go on; each kind of failure is logged once (store-unreachable.ts). */
  readonly #refreshLog = new OutageLog();
  readonly #lookLog = new OutageLog();

  /** Look every `intervalMs` (timer unref'd); answers a function that stops looking. */
  start(intervalMs = TICK_MS): () => void {
    const look = () => {
      if (this.#looking || this.#closed) return;
      this.#looking = true;
      this.tick()
        .then(
          () => this.#lookLog.ok(),
          (e) =>
            this.#closed ||
            !this.#lookLog.shouldLog(e) ||
            this.deps.log.warn("looking for due custom code jobs failed", { error: String(e) }),
        )
        .finally(() => {
          this.#looking = false;
        });
    };
    clearInterval(this.#timer);
    this.#timer = setInterval(look, intervalMs);
    this.#timer.unref?.();
    look();
    return () => clearInterval(this.#timer);
  }

  /** Stop for good: no more looks; runs under way end with the code threads, unrecorded rows are swept later. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }
}
