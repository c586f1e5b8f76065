// One custom-code sandbox: a QuickJS module instance of its own (quickjs-engine.ts) with a runtime and context,
// the guest bootstrap (sandbox/bootstrap.js) and one bundle loaded. It runs one call at a time under hard
// limits - a wall-clock deadline enforced by the interrupt handler and by a host timer (a guest awaiting
// forever), a memory cap, a stack cap - and bridges the guest's `services` to a host dispatcher through
// promises resolved by the host. A call's crossings into QuickJS (request and name in, the call, pending jobs,
// the two host functions) go through quickjs-bridge.ts on the library's FFI. A sandbox that hit a limit is
// marked unusable and dropped whole (its wasm memory with it), never reused.

import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import bootstrap from "../../sandbox/bootstrap.js" with { type: "text" };
import { newEngine } from "./quickjs-engine.ts";
import { QuickJSBridge } from "./quickjs-bridge.ts";
import { jsonText } from "./raw-json.ts";
import { CodeError, type GuestError, classify, lineOf } from "./code-error.ts";
import type { BundleInfo } from "./bundle-info.ts";

export interface SandboxLimits {
  /** Wall time of one call, ms. */
  timeoutMs: number;
  /** QuickJS heap cap, bytes. */
  memoryBytes: number;
  /** QuickJS stack cap, bytes. */
  stackBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { timeoutMs: 25_000, memoryBytes: 64 * 1024 * 1024, stackBytes: 512 * 1024 };

/** How long guest code may run without yielding before the `onLongRun` hook is told (once per call). */
export const LONG_RUN_MS = 100;

/** What a guest may call: service name -> operation names (the dispatcher decides what they do). */
export type ServiceOps = Record<string, readonly string[]>;
/** A service operation answered on the spot (no waiting): the guest's promise is settled before the host returns. */
export class Answered {
  constructor(readonly value: unknown) {}
}

/** Runs one service operation for the guest; its value goes back to the guest as JSON. */
export type Dispatch = (service: string, op: string, args: unknown[]) => Promise<unknown> | Answered;

export interface SandboxHooks {
  /** Guest code ran LONG_RUN_MS without yielding (a busy loop): the thread may lower its priority. */
  onLongRun?: () => void;
  /** Called at every interrupt check after that, with the call's deadline (epoch ms): the thread may pause. */
  whileLongRun?: (deadline: number) => void;
}

export type { BundleInfo, HookEvent, JobInfo, MethodInfo } from "./bundle-info.ts";
export { HOOK_EVENTS } from "./bundle-info.ts";

export interface MethodResponse {
  status: number;
  headers: Record<string, string>;
  /** json: the body's JSON text (serialized once, in the guest); text: the string; bytes: base64 (plain data crosses threads as JSON). */
  body: { kind: "json"; text: string } | { kind: "text"; value: string } | { kind: "bytes"; base64: string };
}

/** What the guest's `__done` reported for the call in progress. */
type Outcome = { ok: true; response: MethodResponse } | { ok: false; error: GuestError } | { ok: false; limit: CodeError };

export class Sandbox {
  /** False once a call hit a limit or the sandbox was disposed: drop it. */
  usable = true;
  private dispatch: Dispatch | null = null;
  private deadline = Infinity;
  /** The current call's time limit (the pool's, or the call's own: hooks and jobs have theirs). */
  private callTimeoutMs = 0;
  private inCall = false;
  /** Host calls the guest started that have not settled (a call may leave some behind, e.g. an unawaited log). */
  private hostCalls = 0;
  /** When guest code last started running synchronously (a call, or jobs after a host promise settled). */
  private syncSince = 0;
  private longRunTold = false;
  /** The current call's outcome once the guest reported it (or a limit stopped it), and who waits for it. */
  private outcome: Outcome | null = null;
  private wake: (() => void) | null = null;

  private constructor(
    private readonly rt: QuickJSRuntime,
    private readonly ctx: QuickJSContext,
    private readonly bridge: QuickJSBridge,
    private readonly run: QuickJSHandle,
    readonly info: BundleInfo,
    private readonly limits: SandboxLimits,
    private readonly memory: WebAssembly.Memory,
    private readonly hooks: SandboxHooks,
  ) {}

  /** Bytes of linear memory this sandbox holds (it never shrinks; a grown sandbox is recycled). */
  memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Load a bundle (JavaScript ES module source) under `limits`; throws CodeError("compile") with the line. */
  static async load(source: string, ops: ServiceOps, limits: SandboxLimits = DEFAULT_LIMITS, hooks: SandboxHooks = {}): Promise<Sandbox> {
    const { engine, memory } = await newEngine(limits.memoryBytes);
    const rt = engine.newRuntime();
    rt.setMemoryLimit(limits.memoryBytes);
    rt.setMaxStackSize(limits.stackBytes);
    const ctx = rt.newContext();
    const bridge = new QuickJSBridge(engine, rt, ctx);
    let holder: Sandbox | null = null;
    const settle = (deferred: QuickJSDeferredPromise, failure: string | null, value: unknown) => {
      if (failure !== null) {
        const err = ctx.newError(failure);
        deferred.reject(err);
        err.dispose();
      } else {
        const text = jsonText(value);
        const h = text === undefined ? ctx.undefined : ctx.newString(text);
        deferred.resolve(h);
        if (text !== undefined) h.dispose();
      }
    };
    // The guest's service call: its JSON answer at once (a string, or undefined) when the dispatcher answered on
    // the spot - the bootstrap wraps it in a settled promise, so its continuation runs in this same turn - else a
    // promise the host settles later.
    // Operations by number, in the order the bootstrap numbers them (the order of `ops`).
    const table = Object.entries(ops).flatMap(([service, names]) => names.map((name) => [service, name] as const));
    const host = bridge.newFunction("__host", (b, argc, argv) => {
      const sandbox = holder;
      let pending: Promise<unknown>;
      try {
        if (!sandbox?.dispatch) throw new Error("services are only available during a call");
        const operation = table[b.getNumber(b.arg(argc, argv, 0))];
        if (!operation) throw new Error("there is no such service operation");
        const out = sandbox.dispatch(operation[0], operation[1], JSON.parse(b.getString(b.arg(argc, argv, 1))) as unknown[]);
        if (out instanceof Answered) {
          const text = jsonText(out.value);
          return text === undefined ? 0 : b.newString(text);
        }
        pending = out;
      } catch (e) {
        const deferred = ctx.newPromise();
        settle(deferred, String((e as Error)?.message ?? e), undefined);
        return b.own(deferred.handle);
      }
      const deferred = ctx.newPromise();
      sandbox.hostCalls++;
      void (async () => {
        let value: unknown;
        let failure: string | null = null;
        try {
          value = await pending;
        } catch (e) {
          failure = String((e as Error)?.message ?? e);
        }
        sandbox.hostCalls--;
        if (!sandbox.usable) return; // the call timed out meanwhile; this sandbox is being dropped
        settle(deferred, failure, value);
        sandbox.pump();
      })();
      return b.own(deferred.handle);
    });
    ctx.setProp(ctx.global, "__host", host);
    host.dispose();
    // One permanent function for every call's answer (a host promise per call would cost two new functions).
    const done = bridge.newFunction("__done", (b, argc, argv) => {
      const sandbox = holder;
      if (!sandbox || sandbox.outcome) return 0;
      const code = b.getNumber(b.arg(argc, argv, 0));
      const headers = b.getString(b.arg(argc, argv, 1));
      sandbox.outcome =
        code > 0
          ? { ok: true, response: responseOf(code, headers, b.getNumber(b.arg(argc, argv, 2)), b.getString(b.arg(argc, argv, 3))) }
          : { ok: false, error: JSON.parse(headers) as GuestError };
      sandbox.wake?.();
      return 0;
    });
    ctx.setProp(ctx.global, "__done", done);
    done.dispose();
    const opsHandle = ctx.newString(JSON.stringify(ops));
    ctx.setProp(ctx.global, "__serviceOps", opsHandle);
    opsHandle.dispose();
    ctx.unwrapResult(ctx.evalCode(bootstrap, "bootstrap.js", { type: "global", strict: true })).dispose();

    // Loading runs the bundle's top level: it gets the same deadline as a call.
    const deadline = Date.now() + limits.timeoutMs;
    rt.setInterruptHandler(() => Date.now() > deadline);
    const evaluated = ctx.evalCode(source, "bundle.js", { type: "module" });
    if (evaluated.error) {
      const e = ctx.dump(evaluated.error) as GuestError;
      evaluated.error.dispose();
      const c = classify(e, limits.timeoutMs);
      throw c.kind === "thrown" ? new CodeError("compile", c.message, lineOf(e)) : c;
    }
    let exportsHandle = evaluated.value;
    const state = ctx.getPromiseState(exportsHandle);
    if (state.type === "fulfilled" && !state.notAPromise) {
      exportsHandle.dispose();
      exportsHandle = state.value;
    } else if (state.type !== "fulfilled") {
      exportsHandle.dispose();
      if (state.type === "rejected") {
        const e = ctx.dump(state.error) as GuestError;
        state.error.dispose();
        throw new CodeError("compile", String(e?.message ?? e), lineOf(e ?? {}));
      }
      throw new CodeError("compile", "the bundle's top level awaits something that never settles");
    }
    const burrow = ctx.getProp(ctx.global, "__burrow");
    const install = ctx.getProp(burrow, "install");
    const installed = ctx.callFunction(install, ctx.undefined, exportsHandle);
    install.dispose();
    exportsHandle.dispose();
    if (installed.error) {
      const e = ctx.dump(installed.error) as GuestError;
      installed.error.dispose();
      burrow.dispose();
      throw new CodeError("compile", String(e?.message ?? e));
    }
    const info = JSON.parse(ctx.getString(installed.value)) as BundleInfo;
    installed.value.dispose();
    const run = ctx.getProp(burrow, "run");
    burrow.dispose();
    const sandbox = new Sandbox(rt, ctx, bridge, run, info, limits, memory, hooks);
    holder = sandbox;
    rt.setInterruptHandler(() => sandbox.interrupt());
    return sandbox;
  }

  /** QuickJS asks this often while guest code runs: true stops it. */
  private interrupt(): boolean {
    const now = Date.now();
    if (!this.longRunTold && this.hooks.onLongRun && now - this.syncSince > LONG_RUN_MS) {
      this.longRunTold = true;
      this.hooks.onLongRun();
    } else if (this.longRunTold && this.hooks.whileLongRun && now <= this.deadline) {
      this.hooks.whileLongRun(this.deadline);
      return Date.now() > this.deadline;
    }
    return now > this.deadline;
  }

  /**
   * Run the guest's pending promise jobs (after the host settled one of its promises). A job that fails is a
   * limit (interrupt, memory, stack: uncatchable in the guest) or a failure inside the answer's own handlers:
   * either ends the call in progress.
   */
  private pump(): void {
    if (!this.usable) return;
    this.syncSince = Date.now();
    const error = this.bridge.executePendingJobs();
    if (!error) return;
    const handle = this.bridge.handle(error);
    const e = this.ctx.dump(handle) as GuestError;
    handle.dispose();
    if (this.inCall && !this.outcome) {
      this.outcome = { ok: false, limit: this.fail(classify(e, this.callTimeoutMs)) };
      this.wake?.();
    }
  }

  /**
   * Call a method (or `hook:<schema>:<event>`, `job:<name>`) with its input (JSON text); `dispatch` serves the
   * guest's services for this call only; `timeoutMs` replaces the sandbox's limit for this call.
   */
  async call(name: string, requestJson: string, dispatch: Dispatch, timeoutMs?: number): Promise<MethodResponse> {
    return this.callNow(name, requestJson, dispatch, timeoutMs);
  }

  /**
   * The same call, answered at once (no promise) when the method finished without waiting for anything: the
   * pool then has this sandbox back before the next call starts, so under concurrency sync methods keep reusing
   * one warm sandbox instead of spreading over many (16 sandboxes in turn cost 26 us a call, one 19 us).
   * Throws at once for a sync failure.
   */
  callNow(name: string, requestJson: string, dispatch: Dispatch, timeoutMs?: number): MethodResponse | Promise<MethodResponse> {
    if (!this.usable) throw new Error("this sandbox is no longer usable");
    if (this.inCall) throw new Error("a sandbox runs one call at a time");
    this.inCall = true;
    this.dispatch = dispatch;
    const { ctx, limits, bridge } = this;
    this.callTimeoutMs = timeoutMs ?? limits.timeoutMs;
    this.deadline = Date.now() + this.callTimeoutMs;
    this.syncSince = Date.now();
    this.longRunTold = false;
    this.outcome = null;
    let waiting = false;
    try {
      const namePtr = bridge.newString(name);
      const reqPtr = bridge.newString(requestJson);
      const started = bridge.call2(this.run.value, namePtr, reqPtr);
      bridge.free(namePtr);
      bridge.free(reqPtr);
      if (started.error) {
        const handle = bridge.handle(started.error);
        const e = ctx.dump(handle) as GuestError;
        handle.dispose();
        throw this.fail(classify(e, this.callTimeoutMs));
      }
      bridge.free(started.value);
      this.pump();
      // A synchronous method (or one whose awaits were already settled) has answered by now: no timer needed.
      if (this.outcome) return this.answer();
      waiting = true;
      return this.waitForAnswer();
    } finally {
      if (!waiting) this.endCall();
    }
  }

  /** Waits for a method that awaits something: until it answers or its time limit. */
  private async waitForAnswer(): Promise<MethodResponse> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timedOut = await new Promise<boolean>((resolve) => {
        this.wake = () => resolve(false);
        timer = setTimeout(() => resolve(true), Math.max(0, this.deadline - Date.now()));
      });
      if (timedOut && !this.outcome) {
        // Awaiting something that never settles: the guest still holds handles, so the sandbox is dropped
        // whole rather than disposed (disposing a runtime with live objects aborts the wasm instance).
        this.usable = false;
        throw new CodeError("timeout", `the method ran longer than ${this.callTimeoutMs} ms`);
      }
      return this.answer();
    } finally {
      clearTimeout(timer);
      this.endCall();
    }
  }

  /** The call's outcome as its answer, or its error. */
  private answer(): MethodResponse {
    const outcome = this.outcome!;
    if (outcome.ok) return outcome.response;
    if ("limit" in outcome) throw outcome.limit;
    throw this.fail(classify(outcome.error, this.callTimeoutMs));
  }

  private endCall(): void {
    this.wake = null;
    this.outcome = null;
    this.dispatch = null;
    this.deadline = Infinity;
    this.inCall = false;
  }

  /** A limit hit leaves the runtime in an unknown state: mark it unusable. */
  private fail(e: CodeError): CodeError {
    if (e.kind === "timeout" || e.kind === "memory" || e.kind === "stack") this.usable = false;
    return e;
  }

  /**
   * Free the sandbox. One that is unusable, or still has host calls outstanding (their promises hold guest
   * objects; freeing the runtime then would abort the wasm instance), is dropped whole instead.
   */
  dispose(): void {
    if (!this.usable) return;
    this.usable = false;
    if (this.hostCalls > 0) return;
    this.run.dispose();
    this.bridge.dispose();
    this.ctx.dispose();
    this.rt.dispose();
  }
}

/**
 * The answer the bootstrap checked (status 200-599, headers of strings as JSON or "" for none, kind 0 json / 1 text
 * / 2 bytes / 3 text carried as its JSON, for a text with a NUL character).
 */
function responseOf(status: number, headers: string, kind: number, payload: string): MethodResponse {
  const h = headers === "" ? {} : (JSON.parse(headers) as Record<string, string>);
  if (kind === 3) return { status, headers: h, body: { kind: "text", value: JSON.parse(payload) as string } };
  return { status, headers: h, body: bodyOf(kind === 1 ? "text" : kind === 2 ? "bytes" : "json", payload) };
}

/** A method's body from its kind and the text it is carried as (JSON text, the text, or base64 bytes). */
export function bodyOf(kind: MethodResponse["body"]["kind"], text: string): MethodResponse["body"] {
  return kind === "json" ? { kind, text } : kind === "text" ? { kind, value: text } : { kind, base64: text };
}

/** The text a method's body is carried as (the inverse of bodyOf). */
export function bodyText(b: MethodResponse["body"]): string {
  return b.kind === "json" ? b.text : b.kind === "text" ? b.value : b.base64;
}
