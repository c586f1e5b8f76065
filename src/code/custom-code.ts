// Custom code as the rest of the server sees it: upload development's bundle (checked by loading it), find the
// method a URL names in the caller's environment and API version, and call it. Each (environment, version)
// with code has a pool on the runner, keyed by its code and limits, started on first use (development and the
// newest production version at start-up and after uploads and deploys); new code starts a new pool, and the
// old one is retired once the new one is ready, so calls in flight finish on the code they started with.

/// <reference path="../../sandbox/burrow.d.ts" />
import { ApiError, badRequest } from "../errors.ts";
import { asDiskFull } from "../db/disk-full.ts";
import type { Logger } from "../log.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { Catalog } from "../schema/catalog.ts";
import { prepareBundle, type BundleLanguage } from "./bundle.ts";
import type { CodeRunner } from "./code-runner.ts";
import { type CodeStore, type StoredBundle, codeHash } from "./code-store.ts";
import { SERVICE_OPS, type ServiceDeps, callServices } from "./call-services.ts";
import { readPlanner } from "./local-reads.ts";
import { CodeError } from "./code-error.ts";
import {
  type BundleInfo,
  DEFAULT_LIMITS,
  type Dispatch,
  type HookEvent,
  type JobInfo,
  type MethodInfo,
  type MethodResponse,
  type SandboxLimits,
} from "./sandbox.ts";
import { parseSchedule } from "./cron.ts";
import type { CodeFigures } from "../system/prometheus.ts";

export type { BundleInfo, HookEvent, JobInfo, MethodInfo, MethodResponse } from "./sandbox.ts";

const NO_EVENTS: readonly HookEvent[] = Object.freeze([]);

/** The request object a method gets: the guest contract's own type (sandbox/burrow.d.ts), so the two cannot drift. */
export type GuestRequest = Burrow.Request;

interface CodeSettings {
  timeoutMs: number;
  memoryMb: number;
}

/** Sandboxes per bundle per thread: kept warm, and at most. */
const WARM = 1;
const MAX_PER_THREAD = 16;

export class CustomCode {
  /** "env:version" -> the installed pool key and its readiness. */
  private installed = new Map<string, { key: string; ready: Promise<BundleInfo> }>();
  /** The last key computed per bundle and settings document (the hot path of every call). */
  private keys = new WeakMap<StoredBundle, { settings: object; key: string; limits: SandboxLimits; done: boolean }>();
  private runnerInstance: CodeRunner | null = null;
  private counts = { calls: 0, failures: 0, inFlight: 0 };
  private changed: (() => Promise<void>)[] = [];

  constructor(
    private readonly store: CodeStore,
    private readonly catalog: Catalog,
    private readonly deps: ServiceDeps,
    private readonly log: Logger,
    private readonly makeRunner: () => CodeRunner,
  ) {}

  /** Follow changes of the stored code (uploads, removals, deploys, reloads): hooks keep their triggers in step. */
  onChanged(listener: () => Promise<void>): void {
    this.changed.push(listener);
  }

  private async tellChanged(): Promise<void> {
    for (const l of this.changed) await l();
  }

  /** The runner starts with the first code (a server without custom code starts no thread). */
  private runner(): CodeRunner {
    this.runnerInstance ??= this.makeRunner();
    return this.runnerInstance;
  }

  /** The method `name` of the code an environment and version run, if any (synchronous: on every request). */
  method(env: EnvName, version: number, name: string): MethodInfo | undefined {
    return this.store.get(env, version)?.byName.get(name);
  }

  /** The hooks an environment's code at a version exports for a schema (synchronous: on every write). */
  hookEvents(env: EnvName, version: number, schema: string): readonly HookEvent[] {
    const hooks = this.store.get(env, version)?.hooks;
    return hooks && Object.hasOwn(hooks, schema) ? hooks[schema]! : NO_EVENTS;
  }

  /** The jobs of an environment's code at a version. */
  jobs(env: EnvName, version: number): readonly JobInfo[] {
    return this.store.get(env, version)?.jobs ?? [];
  }

  /** Every stored bundle's environment, version, hooks and jobs (development's and each production version's). */
  bundles(): { env: EnvName; version: number; hooks: Record<string, HookEvent[]>; jobs: JobInfo[] }[] {
    return this.store.all().map((b) => ({ env: b.env, version: b.version, hooks: b.hooks, jobs: b.jobs }));
  }

  /** Development's code: its source as uploaded, its methods, hooks and jobs, or null. */
  development(): ({ source: string; updated: string } & BundleInfo) | null {
    const b = this.store.get("development", 0);
    return b ? { source: b.source, methods: b.methods, hooks: b.hooks, jobs: b.jobs, updated: new Date(b.updated).toISOString() } : null;
  }

  /** Code of a production version (null when it has none). */
  production(version: number): ({ source: string; updated: string } & BundleInfo) | null {
    const b = this.store.get("production", version);
    return b ? { source: b.source, methods: b.methods, hooks: b.hooks, jobs: b.jobs, updated: new Date(b.updated).toISOString() } : null;
  }

  private limits(env: EnvName): SandboxLimits {
    const s = this.deps.settings.get(env).code as CodeSettings;
    return { ...DEFAULT_LIMITS, timeoutMs: s.timeoutMs, memoryBytes: s.memoryMb * 1024 * 1024 };
  }

  private keyOf(b: Pick<StoredBundle, "env" | "version" | "hash">, limits: SandboxLimits): string {
    return `${b.env}:${b.version}:${b.hash}:${limits.timeoutMs}:${limits.memoryBytes}`;
  }

  /** The pool key and limits of a bundle under the current settings (cached until either changes). */
  private keyFor(b: StoredBundle): { key: string; limits: SandboxLimits; done: boolean } {
    const settings = this.deps.settings.get(b.env);
    let k = this.keys.get(b);
    if (k?.settings !== settings) {
      const limits = this.limits(b.env);
      k = { settings, key: this.keyOf(b, limits), limits, done: false };
      this.keys.set(b, k);
    }
    return k;
  }

  /** The pool key of a bundle, installing it (and retiring the pool it replaces) when needed. */
  private ensure(b: StoredBundle): string | Promise<string> {
    const k = this.keyFor(b);
    const { key, limits } = k;
    // Installed and ready: no promise to wait on.
    if (k.done && this.installed.get(`${b.env}:${b.version}`)?.key === key) return key;
    const slot = `${b.env}:${b.version}`;
    const current = this.installed.get(slot);
    if (current?.key === key)
      return current.ready.then(() => {
        k.done = true;
        return key;
      });
    const ready = this.runner().install({ key, js: b.js, ops: SERVICE_OPS, limits, warm: WARM, max: MAX_PER_THREAD });
    this.installed.set(slot, { key, ready });
    ready.then(
      () => {
        if (current) this.runner().drop(current.key);
      },
      () => {
        if (this.installed.get(slot)?.key === key) this.installed.delete(slot);
      },
    );
    return ready.then(() => key);
  }

  /** Start the pools of development and the newest production version (start-up, uploads, deploys, reloads). */
  prewarm(): void {
    const latest = this.catalog.latestVersion();
    for (const b of [this.store.get("development", 0), latest === null ? undefined : this.store.get("production", latest)])
      if (b)
        Promise.resolve(this.ensure(b)).catch((e) =>
          this.log.warn("custom code could not be loaded", { env: b.env, version: b.version, message: String((e as Error)?.message ?? e) }),
        );
  }

  /**
   * After a reload or deploy (the stored code may have changed): retire pools whose code is gone or changed, warm
   * the rest; settles once those following changes (onChanged) are in step.
   */
  sync(): Promise<void> {
    for (const [slot, entry] of this.installed) {
      const [env, version] = slot.split(":") as [EnvName, string];
      const b = this.store.get(env, Number(version));
      if (!b || this.keyOf(b, this.limits(env)) !== entry.key) {
        this.installed.delete(slot);
        this.runnerInstance?.drop(entry.key);
      }
    }
    this.prewarm();
    return this.tellChanged();
  }

  /**
   * Check and store development's code: it must compile, load and export valid methods whose names no
   * development schema has. Answers the methods; CodeError("compile") or ApiError 400 otherwise.
   */
  async upload(source: string, lang: BundleLanguage = "auto"): Promise<BundleInfo & { language: "js" | "ts" }> {
    const prepared = prepareBundle(source, lang);
    const limits = this.limits("development");
    // Loading the bundle into its pool is the check: once stored, the pool is already warm for the first call.
    const slot = "development:0";
    const key = this.keyOf({ env: "development", version: 0, hash: codeHash(prepared.js) }, limits);
    const previous = this.installed.get(slot);
    const ready =
      previous?.key === key
        ? previous.ready
        : this.runner().install({ key, js: prepared.js, ops: SERVICE_OPS, limits, warm: WARM, max: MAX_PER_THREAD });
    const info = await ready;
    const { methods } = info;
    try {
      this.checkJobs(info.jobs);
      await this.catalog.exclusive(async () => {
        const schemas = this.catalog.development().schemas;
        const clash = methods.find((m) => schemas.has(m.name));
        if (clash) throw badRequest(`method "${clash.name}" has the name of a schema; a method and a schema cannot share a name`);
        for (const [schema, events] of Object.entries(info.hooks)) {
          const s = schemas.get(schema);
          const signup = events.find((e) => e === "beforeSignup" || e === "afterSignup");
          if (signup && s && !s.def.user)
            throw badRequest(`hooks.${schema}.${signup}: ${schema} is not a user schema (signup hooks run on user schemas only)`);
        }
        await this.store.putDevelopment(source, prepared.js, info);
      });
    } catch (e) {
      if (previous?.key !== key) this.runner().drop(key);
      throw e;
    }
    const current = this.installed.get(slot);
    this.installed.set(slot, { key, ready });
    if (current && current.key !== key) this.runner().drop(current.key);
    await this.tellChanged();
    return { ...info, language: prepared.language };
  }

  /** Every job's schedule must parse in the configured time zone (the guest cannot judge cron). */
  private checkJobs(jobs: readonly JobInfo[]): void {
    const zone = (this.deps.settings.get("development").code as { timezone: string }).timezone;
    for (const j of jobs) {
      try {
        parseSchedule(j.schedule, zone);
      } catch (e) {
        throw new CodeError("compile", `job ${j.name}: ${(e as Error).message}`);
      }
    }
  }

  /**
   * Run a hook (`hook:<schema>:<event>`) or job (`job:<name>`) of the code `ctx`'s environment and version run,
   * with `input` as its argument and `timeoutMs` as its limit; its services act as the server in that
   * environment at `ctx.hookDepth`. Answers the value it returned (JSON; undefined as null). Log lines it
   * writes are also pushed to `lines` when given. Throws CodeError (kind "rejected" for `reject(...)`).
   */
  async invoke(ctx: ApiContext, name: string, input: unknown, timeoutMs: number, lines?: string[]): Promise<unknown> {
    const b = this.store.get(ctx.env, ctx.version);
    if (!b)
      throw new CodeError("result", `there is no custom code in ${ctx.env}${ctx.env === "production" ? ` version ${ctx.version}` : ""}`);
    const ensured = this.ensure(b);
    const key = typeof ensured === "string" ? ensured : await ensured;
    const system: ApiContext = { ...ctx, principal: { kind: "system" }, auth: "code", origin: "code" };
    let dispatch: Dispatch = callServices(this.deps, system, Date.now() + timeoutMs);
    if (lines) {
      const inner = dispatch;
      dispatch = (service, op, args) => {
        if (service === "log" && lines.length < 1000) {
          const [message] = args;
          lines.push(`${op}: ${typeof message === "string" ? message : (JSON.stringify(message) ?? String(message))}`.slice(0, 2000));
        }
        return inner(service, op, args);
      };
    }
    this.counts.calls++;
    this.counts.inFlight++;
    try {
      const r = await this.runner().call(key, name, JSON.stringify(input), dispatch, readPlanner(system), timeoutMs);
      return r.body.kind === "json" ? (JSON.parse(r.body.text) as unknown) : null;
    } catch (e) {
      this.counts.failures++;
      throw e;
    } finally {
      this.counts.inFlight--;
    }
  }

  /** Remove development's code (its methods answer 404 again). */
  async remove(): Promise<boolean> {
    const removed = await this.store.removeDevelopment();
    await this.sync();
    return removed;
  }

  /** Call a method for an API request; `ctx` is the caller's context (its user is in `request.loggedInUser`). */
  async call(ctx: ApiContext, request: GuestRequest): Promise<MethodResponse> {
    const b = this.store.get(ctx.env, ctx.version);
    if (!b?.byName.has(request.methodName)) throw new ApiError(404, `there is no method "${request.methodName}"`);
    const ensured = this.ensure(b);
    const key = typeof ensured === "string" ? ensured : await ensured;
    const timeoutMs = this.keyFor(b).limits.timeoutMs;
    const system: ApiContext = { ...ctx, principal: { kind: "system" }, auth: "code", origin: "code" };
    this.counts.calls++;
    this.counts.inFlight++;
    // A write of the method refused for a full disk: the guest is told in the 507's words, and a method that fails
    // after it (the usual case: it did not catch) answers the 507 rather than a 500 (db/disk-full.ts).
    let diskFull: ApiError | null = null;
    const services = callServices(this.deps, system, Date.now() + timeoutMs);
    const dispatch: typeof services = (service, op, args) => {
      const out = services(service, op, args);
      return out instanceof Promise
        ? out.catch((e: unknown) => {
            const full = asDiskFull(e);
            if (full === null) throw e;
            diskFull = full;
            throw full;
          })
        : out;
    };
    try {
      return await this.runner().call(key, request.methodName, JSON.stringify(request), dispatch, readPlanner(system));
    } catch (e) {
      this.counts.failures++;
      if (diskFull !== null) throw diskFull;
      throw this.failure(ctx.env, request.methodName, e);
    } finally {
      this.counts.inFlight--;
    }
  }

  /**
   * This process's custom code figures: whether its threads run, bundles loaded, calls and failures since start,
   * and the threads' memory (JS heap in use, memory held outside it) when they run.
   */
  stats(): CodeFigures {
    const threadMemory = this.runnerInstance?.memory?.();
    return {
      running: this.runnerInstance !== null,
      bundles: this.installed.size,
      ...this.counts,
      ...(threadMemory ? { threadMemory } : {}),
    };
  }

  /** The API error of a failed call; the failure is also logged for the code's author (source=code). */
  private failure(env: EnvName, name: string, e: unknown): ApiError {
    if (!(e instanceof CodeError)) {
      this.log.error("custom code call failed", { method: name, message: String((e as Error)?.message ?? e) });
      return new ApiError(500, `custom code method ${name} failed`);
    }
    if (e.kind === "result" && /call again/.test(e.message)) return new ApiError(503, `${e.message}`, { headers: { "retry-after": "1" } });
    const message = `custom code method ${name} failed: ${e.message}`;
    this.deps.logs.append(env, "code", "error", message, { kind: e.kind });
    return new ApiError(500, message);
  }

  async close(): Promise<void> {
    await this.runnerInstance?.close();
    await this.deps.logs.flush();
  }
}
