// The history of custom code jobs in system.db: one row per run, skipped or missed occurrence, keyed by
// (environment, job, occurrence) for the schedule's rows. Claiming an occurrence is one INSERT that succeeds on
// one node only and only while no run of the job is under way, so every node may try and one runs it (on the
// embedded store and on a libSQL server alike). Also the schedulers' heartbeat: when some node last looked,
// which tells a node that starts which occurrences passed while none ran. The newest runs of a job are kept.

import type { Client, InStatement, Row } from "@libsql/core/api";
import type { EnvName } from "../system/environments.ts";

export type JobTrigger = "schedule" | "manual" | "missed";
export type JobStatus = "running" | "ok" | "failed" | "timeout" | "skipped" | "missed";

export interface JobRun {
  id: string;
  trigger: JobTrigger;
  status: JobStatus;
  /** The scheduled time (a manual run: when it was asked for), ISO 8601. */
  occurrence: string;
  /** When it started (null: it did not run), ISO 8601. */
  started: string | null;
  durationMs: number | null;
  error: string | null;
  /** The first log lines it wrote (services.log), "level: message". */
  log: string[];
}

/** Runs kept per job (the newest; a running one is never removed). */
export const KEEP_RUNS = 100;
/** Log lines kept per run, and characters per line. */
export const MAX_RUN_LINES = 200;
const MAX_LINE = 1000;
const MAX_ERROR = 2000;

export const JOB_RUNS_DDL = [
  `CREATE TABLE IF NOT EXISTS job_runs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, env TEXT NOT NULL, job TEXT NOT NULL,
     occurrence INTEGER NOT NULL, trigger TEXT NOT NULL, status TEXT NOT NULL, started INTEGER, deadline INTEGER, duration INTEGER,
     error TEXT, log TEXT) STRICT`,
  // One row per scheduled occurrence: the INSERT that claims it succeeds on one node.
  `CREATE UNIQUE INDEX IF NOT EXISTS job_runs_occurrence ON job_runs (env, job, occurrence) WHERE trigger <> 'manual'`,
  `CREATE INDEX IF NOT EXISTS job_runs_by_job ON job_runs (env, job, seq)`,
  `CREATE TABLE IF NOT EXISTS job_heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1), alive INTEGER NOT NULL) STRICT`,
];

/** A run id: 16 hex digits. */
export function newRunId(): string {
  const b = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

function runOf(r: Row): JobRun {
  return {
    id: r.id as string,
    trigger: r.trigger as JobTrigger,
    status: r.status as JobStatus,
    occurrence: iso(r.occurrence)!,
    started: iso(r.started),
    durationMs: r.duration === null ? null : Number(r.duration),
    error: (r.error as string | null) ?? null,
    log: r.log ? (JSON.parse(r.log as string) as string[]) : [],
  };
}

const COLUMNS = "id, trigger, status, occurrence, started, duration, error, log";

export interface Claim {
  id: string;
  env: EnvName;
  job: string;
  occurrence: number;
  trigger: JobTrigger;
  started: number;
  /** Past this time a row still "running" is taken for a run whose node stopped. */
  deadline: number;
}

export class JobRuns {
  constructor(private readonly db: Client) {}

  async init(): Promise<void> {
    await this.db.batch(JOB_RUNS_DDL, "write");
  }

  /**
   * Start a run: true when this node inserted it. False when the occurrence has a row already (another node
   * took it) or a run of the job is under way (`running` is not past its deadline at `now`).
   */
  async claim(c: Claim, now: number): Promise<boolean> {
    const rs = await this.db.execute({
      sql: `INSERT INTO job_runs (id, env, job, occurrence, trigger, status, started, deadline)
            SELECT ?, ?, ?, ?, ?, 'running', ?, ?
            WHERE NOT EXISTS (SELECT 1 FROM job_runs WHERE env = ? AND job = ? AND status = 'running' AND deadline > ?)
            ON CONFLICT DO NOTHING RETURNING id`,
      args: [c.id, c.env, c.job, c.occurrence, c.trigger, c.started, c.deadline, c.env, c.job, now],
    });
    return rs.rows.length === 1;
  }

  /**
   * Record occurrences that did not run (skipped or missed), oldest first; an occurrence with a row keeps it.
   * Answers how many were recorded.
   */
  async record(
    env: EnvName,
    job: string,
    rows: { occurrence: number; trigger: JobTrigger; status: JobStatus; error: string }[],
  ): Promise<number> {
    if (!rows.length) return 0;
    const done = await this.db.batch(
      rows.map((r) => ({
        sql: `INSERT INTO job_runs (id, env, job, occurrence, trigger, status, error) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        args: [newRunId(), env, job, r.occurrence, r.trigger, r.status, r.error.slice(0, MAX_ERROR)],
      })),
      "write",
    );
    return done.reduce((n, r) => n + r.rowsAffected, 0);
  }

  /** A run ended: its status, duration, error and log lines; then the job's oldest rows past KEEP_RUNS go. */
  async finish(
    env: EnvName,
    job: string,
    id: string,
    end: { status: JobStatus; durationMs: number; error: string | null; lines: readonly string[] },
  ): Promise<void> {
    const lines = end.lines.slice(0, MAX_RUN_LINES).map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}…` : l));
    if (end.lines.length > MAX_RUN_LINES) lines.push(`… ${end.lines.length - MAX_RUN_LINES} more lines (GET /_admin/api/logs?source=code)`);
    const statements: InStatement[] = [
      {
        sql: `UPDATE job_runs SET status = ?, duration = ?, error = ?, log = ?, deadline = NULL WHERE id = ?`,
        args: [end.status, end.durationMs, end.error === null ? null : end.error.slice(0, MAX_ERROR), JSON.stringify(lines), id],
      },
      {
        sql: `DELETE FROM job_runs WHERE env = ? AND job = ? AND status <> 'running'
              AND seq < (SELECT seq FROM job_runs WHERE env = ? AND job = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
        args: [env, job, env, job, KEEP_RUNS - 1],
      },
    ];
    await this.db.batch(statements, "write");
  }

  /** Runs still "running" past their deadline were left by a node that stopped: failed (except `mine`). */
  async sweep(now: number, mine: readonly string[]): Promise<number> {
    const rs = await this.db.execute({
      sql: `UPDATE job_runs SET status = 'failed', error = 'the node running it stopped before it ended', deadline = NULL
            WHERE status = 'running' AND deadline <= ? AND id NOT IN (SELECT value FROM json_each(?))`,
      args: [now, JSON.stringify(mine)],
    });
    return rs.rowsAffected;
  }

  /** The newest runs of a job, newest first. */
  async list(env: EnvName, job: string, limit: number): Promise<JobRun[]> {
    const rs = await this.db.execute({
      sql: `SELECT ${COLUMNS} FROM job_runs WHERE env = ? AND job = ? ORDER BY seq DESC LIMIT ?`,
      args: [env, job, limit],
    });
    return rs.rows.map(runOf);
  }

  async get(env: EnvName, job: string, id: string): Promise<JobRun | null> {
    const rs = await this.db.execute({
      sql: `SELECT ${COLUMNS} FROM job_runs WHERE env = ? AND job = ? AND id = ?`,
      args: [env, job, id],
    });
    return rs.rows[0] ? runOf(rs.rows[0]) : null;
  }

  /** Whether a run of the job is under way on some node (a row "running" and not past its deadline). */
  async running(env: EnvName, job: string, now: number): Promise<boolean> {
    const rs = await this.db.execute({
      sql: `SELECT 1 FROM job_runs WHERE env = ? AND job = ? AND status = 'running' AND deadline > ? LIMIT 1`,
      args: [env, job, now],
    });
    return rs.rows.length > 0;
  }

  /** When a scheduler last looked (any node), or null before the first look. */
  async lastAlive(): Promise<number | null> {
    const rs = await this.db.execute(`SELECT alive FROM job_heartbeat WHERE id = 1`);
    return rs.rows[0] ? Number(rs.rows[0].alive) : null;
  }

  async beat(now: number): Promise<void> {
    await this.db.execute({
      sql: `INSERT INTO job_heartbeat (id, alive) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET alive = max(alive, excluded.alive)`,
      args: [now],
    });
  }
}
