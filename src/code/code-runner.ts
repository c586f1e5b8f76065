// Where custom code runs: the CodeRunner interface (install a bundle's pool, call a method, retire a pool) and
// InlineRunner, which keeps the pools on the calling thread. thread-runner.ts runs InlineRunners on worker
// threads behind the same interface; one contract suite tests both.

import { SandboxPool, type BundleSpec } from "./sandbox-pool.ts";
import { CodeError } from "./code-error.ts";
import type { BundleInfo, Dispatch, MethodResponse, SandboxHooks } from "./sandbox.ts";
import type { ThreadMemory } from "../system/prometheus.ts";
import type { ReadPlanner } from "./local-reads.ts";

export type { BundleSpec } from "./sandbox-pool.ts";

export interface CodeRunner {
  /**
   * Start (and warm) a pool for the bundle; its methods, hooks and jobs, or CodeError("compile"). Installing a key
   * twice is one install.
   */
  install(spec: BundleSpec): Promise<BundleInfo>;
  /**
   * Call a method (or `hook:<schema>:<event>`, `job:<name>`) of an installed bundle with its input as JSON text;
   * `dispatch` serves the guest's services for this call. `reads` lets a runner with its own database connections
   * answer plain reads itself (local-reads.ts). `timeoutMs` replaces the bundle's limit for this call.
   */
  call(
    key: string,
    name: string,
    requestJson: string,
    dispatch: Dispatch,
    reads?: ReadPlanner,
    timeoutMs?: number,
  ): Promise<MethodResponse>;
  /** Retire a bundle's pool: new calls are refused, calls in flight finish. */
  drop(key: string): void;
  close(): Promise<void>;
  /** Memory of the threads the code runs on, as they last reported it (runners on this thread: none). */
  memory?(): ThreadMemory;
}

export class InlineRunner implements CodeRunner {
  private pools = new Map<string, { pool: SandboxPool; ready: Promise<BundleInfo>; started: boolean }>();

  constructor(private readonly hooks: SandboxHooks = {}) {}

  install(spec: BundleSpec): Promise<BundleInfo> {
    const known = this.pools.get(spec.key);
    if (known) return known.ready;
    const pool = new SandboxPool(spec, this.hooks);
    const ready = pool.start();
    const entry = { pool, ready, started: false };
    this.pools.set(spec.key, entry);
    ready.then(
      () => void (entry.started = true),
      () => {
        if (this.pools.get(spec.key)?.pool === pool) this.pools.delete(spec.key);
      },
    );
    return ready;
  }

  async call(
    key: string,
    name: string,
    requestJson: string,
    dispatch: Dispatch,
    _reads?: ReadPlanner,
    timeoutMs?: number,
  ): Promise<MethodResponse> {
    const entry = this.pools.get(key);
    if (!entry) throw new CodeError("result", "this code is not loaded (it was replaced); call again");
    if (!entry.started) await entry.ready;
    return entry.pool.call(name, requestJson, dispatch, timeoutMs);
  }

  drop(key: string): void {
    const entry = this.pools.get(key);
    if (!entry) return;
    this.pools.delete(key);
    entry.ready.then(
      () => entry.pool.retire(),
      () => {},
    );
  }

  async close(): Promise<void> {
    for (const key of [...this.pools.keys()]) this.drop(key);
  }

  /** Sandboxes alive per bundle (tests and status). */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.pools].map(([k, e]) => [k, e.pool.size()]));
  }
}

/** A CodeError as plain data (to cross a thread) and back. */
export interface ErrorData {
  kind: CodeError["kind"] | "host";
  message: string;
  line?: number;
  status?: number;
}

export function errorData(e: unknown): ErrorData {
  if (e instanceof CodeError)
    return {
      kind: e.kind,
      message: e.message,
      ...(e.line !== undefined ? { line: e.line } : {}),
      ...(e.status !== undefined ? { status: e.status } : {}),
    };
  return { kind: "host", message: String((e as Error)?.message ?? e) };
}

export function errorFromData(d: ErrorData): Error {
  return d.kind === "host" ? new Error(d.message) : new CodeError(d.kind, d.message, d.line, d.status);
}
