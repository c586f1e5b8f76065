// The after-hook runner: takes due changes from each environment's queue (written by triggers in the writes' own
// transactions, src/schema/hook-queue-sql.ts) with a lease - one UPDATE, so on several nodes each change goes to one
// of them - and runs the hook of the version current at the change's commit. A hook that fails is tried again
// with a growing delay (1 s, 2 s, 4 s ... at most 5 minutes) and after `code.hooks.attempts` tries moves to the
// dead-letter list (admin API); failures go to the code log. A node that dies holding a lease leaves the change
// to be taken again once the lease runs out: at least once, and the change's id lets a hook de-duplicate.

import type { Client } from "@libsql/core/api";
import type { Logger } from "../log.ts";
import { OutageLog } from "../db/store-unreachable.ts";
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
/** Hooks running (or waiting for a sandbox) at once per environment; more are taken when half are done. */
const IN_FLIGHT = 256;
/** Changes taken per claim. */
const TAKE = 128;
/** A lease lasts the hook's time limit plus this (a change waiting for a sandbox counts against it too). */
const LEASE_SLACK_MS = 60_000;
const MAX_BACKOFF_MS = 5 * 60_000;
/**
 * Backpressure: past HIGH changes due in an environment's queue, its clients' writes that would queue after-hooks
 * wait (at most MAX_WAIT_MS each) until it is back under LOW, so the queue keeps up with writes at full speed
 * instead of growing without bound. Writes made by hooks never wait.
 */
const HIGH = 2_000;
const LOW = 1_000;
const MAX_WAIT_MS = 1_000;
/** How often the due changes are counted while an environment has after-hooks. */
const COUNT_MS = 100;

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

type Outcome = { message: string; final: boolean } | null;

export class HookQueue {
  private timers: Partial<Record<EnvName, ReturnType<typeof setTimeout>>> = {};
  private stopped = true;
  private counts = { ran: 0, failed: 0, dead: 0 };
  private idleRounds: Record<EnvName, number> = { development: 0, production: 0 };
  private inFlight: Record<EnvName, number> = { development: 0, production: 0 };
  private claiming: Record<EnvName, boolean> = { development: false, production: false };
  /** Outcomes waiting to be written (one batch per turn and environment). */
  private outcomes: Record<EnvName, { row: Row; outcome: Outcome }[]> = { development: [], production: [] };
  private flushing: Record<EnvName, Promise<void> | null> = { development: null, production: null };
  /** Changes due (last counted) per environment, and the writes waiting for it to go down. */
  private backlog: Record<EnvName, number> = { development: 0, production: 0 };
  private waiters: Record<EnvName, (() => void)[]> = { development: [], production: [] };
  private counter: ReturnType<typeof setInterval> | undefined;
  private waits = 0;

  constructor(private readonly deps: HookQueueDeps) {}

  start(): () => void {
    this.stopped = false;
    for (const env of ["development", "production"] as const) this.schedule(env, 0);
    this.counter = setInterval(() => void this.countDue(), COUNT_MS);
    this.counter.unref?.();
    return () => this.stop();
  }

  /** A client's write that would queue after-hooks: a promise to wait on while the queue is past HIGH, else undefined. */
  admit(env: EnvName): Promise<void> | undefined {
    if (this.backlog[env] < HIGH || this.stopped) return undefined;
    this.waits++;
    return new Promise<void>((resolve) => {
      this.waiters[env].push(resolve);
      setTimeout(resolve, MAX_WAIT_MS).unref?.();
    });
  }

  private async countDue(): Promise<void> {
    for (const env of ["development", "production"] as const) {
      if (!this.deps.active(env) && this.backlog[env] === 0) continue;
      try {
        const rs = await this.deps.envDbs[env].execute({
          sql: `SELECT count(*) AS n FROM ${HOOK_QUEUE_TABLE} WHERE next_at <= ?`,
          args: [Date.now()],
        });
        this.backlog[env] = Number(rs.rows[0]!.n);
      } catch {
        this.backlog[env] = 0;
      }
      if (this.backlog[env] < LOW) for (const w of this.waiters[env].splice(0)) w();
    }
  }

  stop(): void {
    clearInterval(this.counter);
    for (const env of ["development", "production"] as const) for (const w of this.waiters[env].splice(0)) w();
    this.stopped = true;
    for (const t of Object.values(this.timers)) clearTimeout(t);
    this.timers = {};
  }

  /** While the store is away the queue is looked at every second; that failure is logged once (store-unreachable.ts). */
  private readonly pumpLogs = { development: new OutageLog(), production: new OutageLog() };

  private schedule(env: EnvName, ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timers[env]);
    const t = setTimeout(() => {
      this.timers[env] = undefined;
      this.pump(env).then(
        (n) => {
          // Idle: look again later; busy: the hooks finishing call pump again.
          if (n === 0 && this.inFlight[env] === 0) this.schedule(env, POLL_MS);
        },
        (e) => {
          if (this.pumpLogs[env].shouldLog(e))
            this.deps.log.warn("running after-hooks failed", { env, error: String((e as Error)?.message ?? e) });
          this.schedule(env, 1000);
        },
      );
    }, ms);
    t.unref?.();
    this.timers[env] = t;
  }

  /**
   * Take due changes while fewer than IN_FLIGHT hooks run, and start them; how many were taken. Each finished hook
   * records its outcome (batched) and, once half of the hooks are done, takes more.
   */
  async pump(env: EnvName, now = Date.now()): Promise<number> {
    // Without after-hooks the queue can only hold leftovers of removed code: looked at every 100th time.
    if (!this.deps.active(env) && this.idleRounds[env]++ % 100 !== 0) return 0;
    if (this.claiming[env]) return 0;
    this.claiming[env] = true;
    let taken = 0;
    try {
      const { timeoutMs } = hookSettings(this.deps.settings, env);
      while (!this.stopped && this.inFlight[env] <= IN_FLIGHT - TAKE) {
        const rs = await this.deps.envDbs[env].execute({
          sql: `UPDATE ${HOOK_QUEUE_TABLE} SET lease_until = ?, attempts = attempts + 1
                WHERE id IN (SELECT id FROM ${HOOK_QUEUE_TABLE} WHERE next_at <= ? AND lease_until <= ? ORDER BY id LIMIT ${TAKE})
                RETURNING id, schema, event, key, object, previous, user, auth, source, depth, version, attempts`,
          args: [now + timeoutMs + LEASE_SLACK_MS, now, now],
        });
        this.pumpLogs[env].ok();
        const rows = (rs.rows as unknown as Row[]).sort((a, b) => Number(a.id) - Number(b.id));
        taken += rows.length;
        for (const row of rows) {
          this.inFlight[env]++;
          void this.run(env, row, timeoutMs).then((outcome) => this.finished(env, row, outcome));
        }
        if (rows.length < TAKE) break;
        now = Date.now();
      }
    } finally {
      this.claiming[env] = false;
    }
    return taken;
  }

  private finished(env: EnvName, row: Row, outcome: Outcome): void {
    this.inFlight[env]--;
    this.outcomes[env].push({ row, outcome });
    this.flushing[env] ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush(env));
    if (this.inFlight[env] <= IN_FLIGHT / 2 && !this.timers[env]) this.schedule(env, 0);
  }

  /** Write the outcomes gathered this turn: done changes leave the queue, failed ones wait or go to the dead list. */
  private async flush(env: EnvName): Promise<void> {
    const list = this.outcomes[env].splice(0);
    this.flushing[env] = null;
    if (list.length === 0) return;
    const { attempts: maxAttempts } = hookSettings(this.deps.settings, env);
    const done: number[] = [];
    const stmts: { sql: string; args: (string | number)[] }[] = [];
    for (const { row: r, outcome: error } of list) {
      if (error === null) {
        done.push(Number(r.id));
        continue;
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
    }
    if (done.length)
      stmts.push({ sql: `DELETE FROM ${HOOK_QUEUE_TABLE} WHERE id IN (SELECT value FROM json_each(?))`, args: [JSON.stringify(done)] });
    try {
      await this.deps.envDbs[env].batch(stmts, "write");
      this.counts.ran += done.length;
    } catch (e) {
      // The leases run out and the changes are taken again (at least once).
      this.deps.log.warn("recording after-hook outcomes failed", { env, error: String((e as Error)?.message ?? e) });
    }
  }

  /** Run one change's hook: null when it ran (or there is no such hook any more), else why it failed. */
  private async run(env: EnvName, r: Row, timeoutMs: number): Promise<Outcome> {
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
      // A write past the hook depth fails the same way on every try: dead at once.
      return { message, final: message.includes("hooks nested too deep") };
    }
  }

  /** This process's after-hook figures since start (waits: client writes held back by the backlog). */
  stats(): { ran: number; failed: number; dead: number; waits: number; backlog: Record<EnvName, number> } {
    return { ...this.counts, waits: this.waits, backlog: { ...this.backlog } };
  }
}
