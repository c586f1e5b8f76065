// The after-hook runner: takes due changes from each environment's queue (written by triggers in the writes' own
// transactions, src/schema/hook-queue-sql.ts) with a lease - one UPDATE, so on several nodes each change goes to one
// of them - and runs the hook of the version current at the change's commit. A hook that fails is tried again
// with a growing delay (1 s, 2 s, 4 s ... at most 5 minutes) and after `code.hooks.attempts` tries moves to the
// dead-letter list (admin API); failures go to the code log. A node that dies holding a lease leaves the change
// to be taken again once the lease runs out: at least once, and the change's id lets a hook de-duplicate.

import type { Client } from "@libsql/core/api";
import type { Logger } from "../log.ts";
import type { ApiContext, AuthKind, EnvName } from "../request-context.ts";
import { HOOK_DEAD_TABLE, HOOK_QUEUE_TABLE } from "../schema/hook-queue-sql.ts";
import type { LogStore } from "../system/logs.ts";
import type { Settings } from "../system/settings.ts";
import { CodeError } from "./code-error.ts";
import type { CustomCode } from "./custom-code.ts";
import { hookFailure, hookSettings } from "./hooks.ts";
import { MAX_HOOK_DEPTH } from "../datastore/write-hooks.ts";

/** How often each environment's queue is looked at while idle. */
const POLL_MS = 50;
/** Changes taken at once per environment. */
const TAKE = 64;
/** A lease lasts the hook's time limit plus this. */
const LEASE_SLACK_MS = 30_000;
const MAX_BACKOFF_MS = 5 * 60_000;

/** The delay before try `attempt + 1` after `attempt` failed (1 s doubling, at most 5 minutes). Pure. */
export function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempt - 1));
}

/** A queued change as the hook gets it (`id`: the change's id, for de-duplication). */
export interface AfterChange {
  id: number;
  event: string;
  schema: string;
  key: string;
  object: Record<string, unknown> | null;
  previous: Record<string, unknown> | null;
  user: string | null;
  auth: AuthKind;
  source: string;
  attempt: number;
}

interface Row {
  id: number;
  schema: string;
  event: string;
  key: string;
  object: string | null;
  previous: string | null;
  user: string | null;
  auth: string;
  source: string;
  depth: number;
  version: number;
  attempts: number;
}

export interface HookQueueDeps {
  envDbs: Record<EnvName, Client>;
  code: CustomCode;
  settings: Settings;
  logs: LogStore;
  log: Logger;
  /** The server's context in an environment at a version (undefined when that version is not deployed). */
  context(env: EnvName, version: number): ApiContext | undefined;
  /** Whether the environment has after-hooks (else its queue is looked at only now and then). */
  active(env: EnvName): boolean;
}

export class HookQueue {
  private timers: Partial<Record<EnvName, ReturnType<typeof setTimeout>>> = {};
  private stopped = true;
  private counts = { ran: 0, failed: 0, dead: 0 };
  private idleRounds: Record<EnvName, number> = { development: 0, production: 0 };

  constructor(private readonly deps: HookQueueDeps) {}

  start(): () => void {
    this.stopped = false;
    for (const env of ["development", "production"] as const) this.schedule(env, 0);
    return () => this.stop();
  }

  stop(): void {
    this.stopped = true;
    for (const t of Object.values(this.timers)) clearTimeout(t);
    this.timers = {};
  }

  private schedule(env: EnvName, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.round(env).then(
        (n) => this.schedule(env, n === TAKE ? 0 : POLL_MS),
        (e) => {
          this.deps.log.warn("running after-hooks failed", { env, error: String((e as Error)?.message ?? e) });
          this.schedule(env, 1000);
        },
      );
    }, ms);
    t.unref?.();
    this.timers[env] = t;
  }

  /** One round for an environment: take due changes, run them, record the outcomes; how many were taken. */
  async round(env: EnvName, now = Date.now()): Promise<number> {
    // Without after-hooks the queue can only hold leftovers of removed code: looked at every 100th round.
    if (!this.deps.active(env) && this.idleRounds[env]++ % 100 !== 0) return 0;
    const db = this.deps.envDbs[env];
    const { timeoutMs, attempts: maxAttempts } = hookSettings(this.deps.settings, env);
    const rs = await db.execute({
      sql: `UPDATE ${HOOK_QUEUE_TABLE} SET lease_until = ?, attempts = attempts + 1
            WHERE id IN (SELECT id FROM ${HOOK_QUEUE_TABLE} WHERE next_at <= ? AND lease_until <= ? ORDER BY id LIMIT ${TAKE})
            RETURNING id, schema, event, key, object, previous, user, auth, source, depth, version, attempts`,
      args: [now + timeoutMs + LEASE_SLACK_MS, now, now],
    });
    const rows = (rs.rows as unknown as Row[]).sort((a, b) => Number(a.id) - Number(b.id));
    if (rows.length === 0) return 0;
    const outcomes = await Promise.all(rows.map((r) => this.run(env, r, timeoutMs)));
    const done: number[] = [];
    const stmts: { sql: string; args: (string | number)[] }[] = [];
    rows.forEach((r, i) => {
      const error = outcomes[i] ?? null;
      if (error === null) {
        done.push(Number(r.id));
        return;
      }
      this.counts.failed++;
      if (Number(r.attempts) >= maxAttempts || error.final) {
        this.counts.dead++;
        stmts.push(
          {
            sql: `INSERT OR REPLACE INTO ${HOOK_DEAD_TABLE} (id, at, schema, event, key, object, previous, user, auth, source, depth, version, attempts, failed_at, error)
                  SELECT id, at, schema, event, key, object, previous, user, auth, source, depth, version, attempts, ?, ? FROM ${HOOK_QUEUE_TABLE} WHERE id = ?`,
            args: [Date.now(), error.message, Number(r.id)],
          },
          { sql: `DELETE FROM ${HOOK_QUEUE_TABLE} WHERE id = ?`, args: [Number(r.id)] },
        );
      } else
        stmts.push({
          sql: `UPDATE ${HOOK_QUEUE_TABLE} SET next_at = ?, lease_until = 0, error = ? WHERE id = ?`,
          args: [Date.now() + backoffMs(Number(r.attempts)), error.message, Number(r.id)],
        });
    });
    if (done.length)
      stmts.push({ sql: `DELETE FROM ${HOOK_QUEUE_TABLE} WHERE id IN (SELECT value FROM json_each(?))`, args: [JSON.stringify(done)] });
    await db.batch(stmts, "write");
    this.counts.ran += done.length;
    return rows.length;
  }

  /** Run one change's hook: null when it ran (or there is no such hook any more), else why it failed. */
  private async run(env: EnvName, r: Row, timeoutMs: number): Promise<{ message: string; final: boolean } | null> {
    const version = Number(r.version);
    const events = this.deps.code.hookEvents(env, version, r.schema);
    // The code of that version no longer has this hook (development's code changed): nothing to run.
    if (!(events as readonly string[]).includes(r.event)) return null;
    const ctx = this.deps.context(env, version);
    if (!ctx) return null;
    const depth = Number(r.depth);
    if (depth >= MAX_HOOK_DEPTH)
      return {
        message: `hooks nested too deep: this change was made by a hook at depth ${depth}; hooks run to a depth of ${MAX_HOOK_DEPTH}`,
        final: true,
      };
    const change: AfterChange = {
      id: Number(r.id),
      event: r.event,
      schema: r.schema,
      key: r.key,
      object: r.object === null ? null : (JSON.parse(r.object) as Record<string, unknown>),
      previous: r.previous === null ? null : (JSON.parse(r.previous) as Record<string, unknown>),
      user: r.user,
      auth: r.auth as AuthKind,
      source: r.source,
      attempt: Number(r.attempts),
    };
    try {
      await this.deps.code.invoke({ ...ctx, hookDepth: depth + 1 }, `hook:${r.schema}:${r.event}`, change, timeoutMs);
      return null;
    } catch (e) {
      const message =
        e instanceof CodeError && e.kind === "rejected" ? `hook ${r.schema}.${r.event} refused: ${e.message}` : hookFailure(r, e);
      this.deps.logs.append(env, "code", "error", message, { change: change.id, attempt: change.attempt });
      return { message, final: false };
    }
  }

  /** This process's after-hook figures since start. */
  stats(): { ran: number; failed: number; dead: number } {
    return { ...this.counts };
  }
}
