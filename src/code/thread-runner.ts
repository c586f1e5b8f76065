// Custom code on worker threads (code-thread.ts), so a method's CPU never runs on the thread that answers API
// requests. Every thread has every installed bundle; a call goes to the thread with the fewest calls in flight
// among those not demoted. A thread that reports a runaway method (it lowered its own priority) gets no new
// calls and is replaced once its calls are done; one that stops answering (a call past its time limit plus a
// grace period) is terminated and its calls fail. Services run here, on the main thread, for every call, except
// plain reads a thread may answer from its own connection once told how (local-reads.ts, embedded store only).

import { type BundleSpec, type CodeRunner, errorFromData } from "./code-runner.ts";
import type { FromCodeThread, ThreadSetup, ToCodeThread } from "./code-thread.ts";
import { jsonText } from "./raw-json.ts";
import { batchedPoster, unbatch } from "./message-batch.ts";
import { CodeError } from "./code-error.ts";
import { Answered, type BundleInfo, type Dispatch, type MethodResponse, bodyOf } from "./sandbox.ts";
import type { LocalReadFiles, ReadPlanner } from "./local-reads.ts";
import type { ThreadMemory } from "../system/prometheus.ts";

/** In the compiled binary every module sits in one bundle at the root and the thread at code/ (scripts/build.ts). */
const THREAD_URL = import.meta.url.includes("/$bunfs/")
  ? new URL("./code/code-thread.ts", import.meta.url).href
  : new URL("./code-thread.ts", import.meta.url).href;

/** A thread that has not answered a call this long after the call's own limit is stuck: it is terminated. */
const GRACE_MS = 5_000;

interface Call {
  resolve: (r: MethodResponse) => void;
  reject: (e: unknown) => void;
  dispatch: Dispatch;
  reads?: ReadPlanner;
  /** When the thread counts as stuck if this call has not answered (epoch ms). */
  giveUpAt: number;
  /** Answers the caller at the call's time limit even if the thread has not said so yet. */
  timer: ReturnType<typeof setTimeout>;
}

/**
 * After its time limit a call is answered from here: a thread running guest code at idle priority may take a
 * moment to notice its own interrupt, and the client should not wait for that.
 */
const ANSWER_SLACK_MS = 25;

/** How often calls past their limit plus the grace period are looked for (one timer, not one per call). */
const SWEEP_MS = 1_000;

class CodeThread {
  readonly worker: Worker;
  readonly calls = new Map<number, Call>();
  private installs = new Map<number, { resolve: (m: BundleInfo) => void; reject: (e: unknown) => void }>();
  demoted = false;
  dead = false;
  /** The thread's last memory report. */
  memory: ThreadMemory = { heapBytes: 0, externalBytes: 0, collections: 0 };

  constructor(private readonly owner: ThreadRunner) {
    this.worker = new Worker(THREAD_URL);
    // First, before any batch: the database files and generation counter for local reads.
    if (owner.setup) this.worker.postMessage(owner.setup);
    this.worker.onmessage = (e: MessageEvent<string>) => {
      for (const m of unbatch<FromCodeThread>(e.data)) this.receive(m);
    };
    this.post = batchedPoster<ToCodeThread>((batch) => this.worker.postMessage(batch));
    this.worker.onerror = (e) => this.owner.lost(this, `the custom code thread failed: ${String(e.message ?? e)}`);
    // The server (or a test) keeps the process alive; a runner nobody closed must not.
    this.worker.unref();
  }

  /** Send a message (batched with the others of this turn). */
  readonly post: (m: ToCodeThread) => void;

  install(id: number, spec: BundleSpec): Promise<BundleInfo> {
    return new Promise((resolve, reject) => {
      this.installs.set(id, { resolve, reject });
      this.post({ type: "install", id, spec });
    });
  }

  private receive(m: FromCodeThread): void {
    switch (m.type) {
      case "installed":
        this.installs.get(m.id)?.resolve(m.info);
        this.installs.delete(m.id);
        return;
      case "result":
      case "failed": {
        const install = this.installs.get(m.id);
        if (install) {
          this.installs.delete(m.id);
          if (m.type === "failed") install.reject(errorFromData(m.error));
          return;
        }
        const call = this.calls.get(m.id);
        if (!call) return;
        this.calls.delete(m.id);
        clearTimeout(call.timer);
        if (m.type === "result") call.resolve({ status: m.status, headers: m.headers, body: bodyOf(m.kind, m.payload) });
        else call.reject(errorFromData(m.error));
        this.owner.settled(this);
        return;
      }
      case "service": {
        const call = this.calls.get(m.id);
        const answer = (msg: ToCodeThread) => {
          if (!this.dead) this.post(msg);
        };
        if (!call) {
          answer({ type: "service-result", sid: m.sid, ok: false, message: "the call is over" });
          return;
        }
        // The thread only ever asks for data.read when it could not answer it: teach it how, where it can.
        const plan = m.service === "data" && m.op === "read" && call.reads ? call.reads.plan(m.args) : null;
        const out = call.dispatch(m.service, m.op, m.args);
        (out instanceof Answered ? Promise.resolve(out.value) : out).then(
          (v) => answer({ type: "service-result", sid: m.sid, ok: true, payload: jsonText(v), ...(plan ? { plan } : {}) }),
          (e) => answer({ type: "service-result", sid: m.sid, ok: false, message: String((e as Error)?.message ?? e) }),
        );
        return;
      }
      case "demoted":
        this.owner.demote(this);
        return;
      case "memory":
        this.memory = { heapBytes: m.heapBytes, externalBytes: m.externalBytes, collections: m.collections };
        return;
    }
  }

  /** Fail everything outstanding and stop the thread. */
  kill(reason: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.worker.terminate();
    for (const c of this.calls.values()) {
      clearTimeout(c.timer);
      c.reject(reason);
    }
    this.calls.clear();
    for (const i of this.installs.values()) i.reject(reason);
    this.installs.clear();
  }
}

export interface ThreadRunnerOptions {
  /** Threads taking calls (at least 1). */
  threads: number;
  /** Told when a thread is replaced or lost. */
  warn?: (message: string) => void;
  /** The embedded store's files: threads answer plain reads themselves (absent: every service call comes here). */
  localReads?: LocalReadFiles;
  /** Int32 counting the API's answered requests: a runaway method pauses while it moves (code-thread.ts). */
  apiActivity?: SharedArrayBuffer;
  /** Own heap growth that makes a thread collect itself (code-thread.ts; tests set it low). */
  collectAfterBytes?: number;
}

export class ThreadRunner implements CodeRunner {
  private threads: CodeThread[] = [];
  private specs = new Map<string, BundleSpec>();
  private nextId = 1;
  private closed = false;
  private readonly sweeper: ReturnType<typeof setInterval>;

  readonly localReads: LocalReadFiles | undefined;
  /** What every thread is told first (see ThreadSetup), or null when there is nothing to tell. */
  readonly setup: ThreadSetup | null;

  constructor(private readonly opts: ThreadRunnerOptions) {
    this.localReads = opts.localReads;
    const { localReads: reads, apiActivity: activity, collectAfterBytes } = opts;
    this.setup = reads || activity || collectAfterBytes !== undefined ? { reads, activity, collectAfterBytes } : null;
    for (let i = 0; i < Math.max(1, opts.threads); i++) this.spawn();
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** A thread with a call past its limit plus the grace period is stuck: it is replaced. */
  private sweep(): void {
    const now = Date.now();
    for (const t of [...this.threads])
      for (const c of t.calls.values())
        if (c.giveUpAt < now) {
          this.lost(t, `a custom code thread stopped answering (a call ran past its limit by ${GRACE_MS} ms)`);
          break;
        }
  }

  private spawn(): CodeThread {
    const t = new CodeThread(this);
    this.threads.push(t);
    for (const spec of this.specs.values()) t.install(this.nextId++, spec).catch(() => {});
    return t;
  }

  private active(): CodeThread[] {
    return this.threads.filter((t) => !t.demoted && !t.dead);
  }

  async install(spec: BundleSpec): Promise<BundleInfo> {
    if (this.closed) throw new Error("the custom code runner is closed");
    this.specs.set(spec.key, spec);
    // Demoted threads take no new calls, so they get no new code (they retire soon).
    const live = this.active();
    const outcomes = await Promise.allSettled(live.map((t) => t.install(this.nextId++, spec)));
    const ok = outcomes.find((o) => o.status === "fulfilled");
    if (ok) return (ok as PromiseFulfilledResult<BundleInfo>).value;
    this.drop(spec.key);
    // Every thread gives the same compile error; a thread lost meanwhile gives its own.
    const reasons = outcomes.map((o) => (o as PromiseRejectedResult).reason as unknown);
    throw (
      reasons.find((r) => r instanceof CodeError && r.kind === "compile") ?? reasons[0] ?? new Error("no custom code thread is running")
    );
  }

  call(
    key: string,
    name: string,
    requestJson: string,
    dispatch: Dispatch,
    reads?: ReadPlanner,
    timeoutMs?: number,
  ): Promise<MethodResponse> {
    const spec = this.specs.get(key);
    if (!spec) return Promise.reject(new CodeError("result", "this code is not loaded (it was replaced); call again"));
    const limit = timeoutMs ?? spec.limits.timeoutMs;
    // The thread with the fewest calls in flight, preferring threads not demoted.
    let best: CodeThread | null = null;
    for (const t of this.threads) if (!t.dead && !t.demoted && (best === null || t.calls.size < best.calls.size)) best = t;
    if (best === null) for (const t of this.threads) if (!t.dead && (best === null || t.calls.size < best.calls.size)) best = t;
    best ??= this.spawn();
    const thread = best;
    const id = this.nextId++;
    return new Promise<MethodResponse>((resolve, reject) => {
      // The call is answered at its limit; the thread stays responsible for stopping it (and is replaced if it
      // has not within the grace period).
      const timer = setTimeout(() => {
        const call = thread.calls.get(id);
        if (!call) return;
        call.resolve = () => {};
        call.reject = () => {};
        reject(new CodeError("timeout", `the method ran longer than ${limit} ms`));
      }, limit + ANSWER_SLACK_MS);
      const local = this.localReads && reads;
      thread.calls.set(id, {
        resolve,
        reject,
        dispatch,
        ...(local ? { reads } : {}),
        giveUpAt: Date.now() + limit + GRACE_MS,
        timer,
      });
      thread.post({
        type: "call",
        id,
        key,
        name,
        payload: requestJson,
        ...(local ? { scope: reads.scope } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      });
    });
  }

  drop(key: string): void {
    if (!this.specs.delete(key)) return;
    for (const t of this.threads) if (!t.dead) t.post({ type: "drop", key });
  }

  /** A thread reported a runaway method: no new calls; a fresh thread takes its place (at most twice the threads). */
  demote(t: CodeThread): void {
    if (t.demoted || t.dead) return;
    t.demoted = true;
    this.opts.warn?.(
      "custom code: a method ran 100 ms without yielding; its thread now runs at idle priority and is replaced once its calls end",
    );
    if (!this.closed && this.active().length < this.opts.threads && this.threads.length < this.opts.threads * 2) this.spawn();
    this.settled(t);
  }

  /** A call of `t` ended: a demoted thread with nothing left to do is retired. */
  settled(t: CodeThread): void {
    if (t.demoted && t.calls.size === 0) this.retire(t);
  }

  private retire(t: CodeThread): void {
    t.kill(new CodeError("result", "the custom code thread was retired"));
    this.threads = this.threads.filter((x) => x !== t);
    if (!this.closed && this.active().length < this.opts.threads) this.spawn();
  }

  /** A thread failed or hangs: its calls fail, a fresh thread replaces it. */
  lost(t: CodeThread, message: string): void {
    if (t.dead) return;
    this.opts.warn?.(message);
    t.kill(new CodeError("timeout", message));
    this.threads = this.threads.filter((x) => x !== t);
    if (!this.closed && this.active().length < this.opts.threads) this.spawn();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const t of this.threads) t.kill(new Error("the server is stopping"));
    this.threads = [];
  }

  /** The code threads' memory as they last reported it, summed over the live threads. */
  memory(): ThreadMemory {
    const live = this.threads.filter((t) => !t.dead);
    const sum = (f: (m: ThreadMemory) => number) => live.reduce((n, t) => n + f(t.memory), 0);
    return { heapBytes: sum((m) => m.heapBytes), externalBytes: sum((m) => m.externalBytes), collections: sum((m) => m.collections) };
  }

  /** Threads and their calls in flight (tests and status). */
  stats(): { threads: number; demoted: number; inFlight: number } {
    const live = this.threads.filter((t) => !t.dead);
    return { threads: live.length, demoted: live.filter((t) => t.demoted).length, inFlight: live.reduce((n, t) => n + t.calls.size, 0) };
  }
}
