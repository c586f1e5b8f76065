// Hooks as the datastore sees them (the WriteHooks it calls, src/datastore/write-hooks.ts): which hooks the caller's
// code exports for a schema, whether an environment queues after-hooks, and a before-hook run in the sandbox with
// its refusal or failure turned into the client's answer. Also keeps each environment database's after-hook
// targets - the union of every version's after-hooks there - and its triggers in step with the stored code.

import type { Client } from "@libsql/core/api";
import type { HookChange, WriteHooks } from "../datastore/datastore.ts";
import { ApiError } from "../errors.ts";
import { isPlainObject } from "../plain-object.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import { AFTER_EVENTS, HOOK_TARGETS_TABLE } from "../schema/hook-queue-sql.ts";
import { hookTriggers } from "../schema/migrate.ts";
import type { LogStore } from "../system/logs.ts";
import type { Settings } from "../system/settings.ts";
import { CodeError } from "./code-error.ts";
import type { CustomCode } from "./custom-code.ts";

export interface HookSettings {
  timeoutMs: number;
  maxPerQuery: number;
  attempts: number;
}

export function hookSettings(settings: Settings, env: EnvName): HookSettings {
  return (settings.get(env).code as { hooks: HookSettings }).hooks;
}

/** "schema:event" pairs of every after-hook some version of an environment's code exports, sorted. */
export function afterTargets(code: CustomCode, env: EnvName): string[] {
  const out = new Set<string>();
  for (const b of code.bundles())
    if (b.env === env)
      for (const [schema, events] of Object.entries(b.hooks))
        for (const e of events) if ((AFTER_EVENTS as readonly string[]).includes(e)) out.add(`${schema}:${e}`);
  return [...out].sort();
}

/** The message of a hook that failed (not a refusal), as the client and the code log read it. */
export function hookFailure(change: Pick<HookChange, "schema" | "event">, e: unknown): string {
  const why = e instanceof CodeError ? e.message.replace(/^the method /, "the hook ") : String((e as Error)?.message ?? e);
  return `hook ${change.schema}.${change.event} failed: ${why}`;
}

export class CodeHooks implements WriteHooks {
  /** Per environment: the after-hook targets its database has (as last written), to tell whether writes carry context. */
  private targets: Record<EnvName, string[]> = { development: [], production: [] };
  /** The after-hook queue's backpressure (set once the queue runs). */
  private gate: ((env: EnvName) => Promise<void> | undefined) | null = null;

  constructor(
    private readonly code: CustomCode,
    private readonly settings: Settings,
    private readonly logs: LogStore,
    private readonly envDbs: Record<EnvName, Client>,
  ) {}

  events(ctx: ApiContext, schema: string): readonly string[] {
    return this.code.hookEvents(ctx.env, ctx.version, schema);
  }

  queuesAfterHooks(ctx: ApiContext): boolean {
    return this.targets[ctx.env].length > 0;
  }

  /** Let the after-hook queue hold back clients' writes while it is far behind. */
  useBackpressure(gate: (env: EnvName) => Promise<void> | undefined): void {
    this.gate = gate;
  }

  admit(ctx: ApiContext): Promise<void> | undefined {
    return this.gate?.(ctx.env);
  }

  maxPerQuery(ctx: ApiContext): number {
    return hookSettings(this.settings, ctx.env).maxPerQuery;
  }

  async before(ctx: ApiContext, change: HookChange): Promise<Record<string, unknown> | undefined> {
    const { timeoutMs } = hookSettings(this.settings, ctx.env);
    let value: unknown;
    try {
      value = await this.code.invoke(
        { ...ctx, hookDepth: (ctx.hookDepth ?? 0) + 1 },
        `hook:${change.schema}:${change.event}`,
        change,
        timeoutMs,
      );
    } catch (e) {
      if (e instanceof CodeError && e.kind === "rejected") throw new ApiError(e.status ?? 400, e.message);
      if (e instanceof ApiError) throw e;
      const message = hookFailure(change, e);
      this.logs.append(ctx.env, "code", "error", message, { kind: e instanceof CodeError ? e.kind : "host" });
      throw new ApiError(500, message);
    }
    if (value === null || value === undefined) return undefined;
    if (!isPlainObject(value))
      throw new ApiError(
        500,
        `hook ${change.schema}.${change.event} returned ${Array.isArray(value) ? "an array" : typeof value}: a before-hook returns the object to write, or nothing`,
      );
    return value;
  }

  /**
   * Bring each environment database's after-hook targets and triggers in step with the stored code (at start and
   * after uploads, deploys and reloads); an environment whose targets did not change is left alone.
   */
  async sync(): Promise<void> {
    for (const env of ["development", "production"] as const) {
      const wanted = afterTargets(this.code, env);
      const db = this.envDbs[env];
      const have = (await db.execute(`SELECT schema || ':' || event AS t FROM ${HOOK_TARGETS_TABLE} ORDER BY 1`)).rows.map((r) =>
        String(r.t),
      );
      if (have.join(",") !== wanted.join(",")) {
        const tx = await db.transaction("write");
        try {
          await tx.execute(`DELETE FROM ${HOOK_TARGETS_TABLE}`);
          for (const t of wanted) {
            const [schema, event] = t.split(":");
            await tx.execute({ sql: `INSERT INTO ${HOOK_TARGETS_TABLE} (schema, event) VALUES (?, ?)`, args: [schema!, event!] });
          }
          for (const sql of await hookTriggers(tx)) await tx.execute(sql);
          await tx.commit();
        } finally {
          tx.close();
        }
      }
      this.targets[env] = wanted;
    }
  }
}
