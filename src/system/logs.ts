// Log lines kept for the admin API (GET /_admin/api/logs?source=...): custom code's `log` service writes here.
// Lines are buffered and written in one transaction per 200 ms (or 200 lines); each (environment, source) keeps
// its newest MAX_LINES, older ones are pruned as new ones arrive. Messages and details are capped in size.

import type { Client } from "@libsql/core/api";
import type { EnvName } from "./environments.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogLine {
  id: number;
  env: EnvName;
  source: string;
  level: LogLevel;
  message: string;
  details: unknown;
  time: string;
}

/** Lines kept per environment and source. */
export const MAX_LINES = 10_000;
const MAX_MESSAGE = 4096;
const MAX_DETAILS = 16384;
const FLUSH_MS = 200;
const FLUSH_LINES = 200;

interface Pending {
  env: EnvName;
  source: string;
  level: LogLevel;
  message: string;
  details: string | null;
  created: number;
}

export class LogStore {
  private pending: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private writes = 0;

  constructor(private readonly system: Client) {}

  /** Keep one line (written within FLUSH_MS). */
  append(env: EnvName, source: string, level: LogLevel, message: string, details?: unknown): void {
    let d: string | null = null;
    if (details !== undefined) {
      try {
        d = JSON.stringify(details) ?? null;
      } catch {
        d = JSON.stringify(String(details));
      }
      if (d !== null && d.length > MAX_DETAILS) d = JSON.stringify(`${d.slice(0, MAX_DETAILS)}…`);
    }
    this.pending.push({
      env,
      source,
      level,
      message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message,
      details: d,
      created: Date.now(),
    });
    if (this.pending.length >= FLUSH_LINES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Write what is buffered (also called on close and before reads). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const lines = this.pending.splice(0);
    if (!lines.length) return this.flushing;
    const prune = ++this.writes % 20 === 1;
    const groups = new Set(lines.map((l) => `${l.env}\u0000${l.source}`));
    this.flushing = this.flushing
      .then(() =>
        this.system.batch(
          [
            ...lines.map((l) => ({
              sql: `INSERT INTO logs (env, source, level, message, details, created) VALUES (?, ?, ?, ?, ?, ?)`,
              args: [l.env, l.source, l.level, l.message, l.details, l.created],
            })),
            ...(prune
              ? [...groups].map((g) => {
                  const [env, source] = g.split("\u0000");
                  return {
                    sql: `DELETE FROM logs WHERE env = ? AND source = ? AND id <= (SELECT id FROM logs WHERE env = ? AND source = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
                    args: [env!, source!, env!, source!, MAX_LINES],
                  };
                })
              : []),
          ],
          "write",
        ),
      )
      .then(
        () => {},
        () => {}, // a log write that failed is not worth failing anything else for
      );
    return this.flushing;
  }

  /** Newest first; `before` pages back by id. */
  async list(env: EnvName, source: string, opts: { limit: number; before?: number; level?: LogLevel }): Promise<LogLine[]> {
    await this.flush();
    const minLevel = opts.level ? LOG_LEVELS.indexOf(opts.level) : 0;
    const levels = LOG_LEVELS.slice(minLevel);
    const rs = await this.system.execute({
      sql: `SELECT id, env, source, level, message, details, created FROM logs
            WHERE env = ? AND source = ? AND id < ? AND level IN (${levels.map(() => "?").join(", ")})
            ORDER BY id DESC LIMIT ?`,
      args: [env, source, opts.before ?? Number.MAX_SAFE_INTEGER, ...levels, opts.limit],
    });
    return rs.rows.map((r) => ({
      id: Number(r.id),
      env: r.env as EnvName,
      source: r.source as string,
      level: r.level as LogLevel,
      message: r.message as string,
      details: r.details === null ? null : JSON.parse(r.details as string),
      time: new Date(Number(r.created)).toISOString(),
    }));
  }
}
