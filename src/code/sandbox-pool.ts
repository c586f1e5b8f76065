// The sandboxes of one bundle on one thread: a few kept warm with the bundle loaded, more made on demand up to
// a cap (calls beyond it wait their turn), each running one call at a time. A sandbox that hit a limit, or
// whose linear memory grew past the high-water mark, is dropped after its call and replaced, so a method that
// once allocated a lot does not keep the memory. Sandboxes made for a burst beyond the warm ones are dropped once
// they sat idle for `idleMs`, so a rare peak of concurrent calls does not keep their memory for good. Retiring a
// pool (new code) lets calls in flight finish.

import { CodeError } from "./code-error.ts";
import {
  type Dispatch,
  type BundleInfo,
  type MethodResponse,
  Sandbox,
  type SandboxHooks,
  type SandboxLimits,
  type ServiceOps,
} from "./sandbox.ts";
import { INITIAL_BYTES } from "./quickjs-engine.ts";

export interface BundleSpec {
  /** Names this bundle with its limits (a changed bundle or limit is a new key). */
  key: string;
  js: string;
  ops: ServiceOps;
  limits: SandboxLimits;
  /** Sandboxes loaded ahead of calls. */
  warm: number;
  /** Most sandboxes at once (calls beyond wait). */
  max: number;
  /** Idle time after which a sandbox beyond the warm ones is dropped (default 30 s). */
  idleMs?: number;
}

const IDLE_MS = 30_000;

/**
 * Told after a sandbox is thrown away. Its linear memory goes back to the system only once the garbage collector
 * frees its WebAssembly.Memory, and a code thread's own JS heap is so small that a collection may not come for many
 * minutes (seen: 30 thrown-away memories waiting); a code thread sets this to ask for one soon.
 */
export const sandboxDrops: { notify: (() => void) | null } = { notify: null };

export class SandboxPool {
  /** Idle sandboxes, least recently used first (calls take the last). */
  private idle: Sandbox[] = [];
  /** When each idle sandbox was given back. */
  private idleSince = new WeakMap<Sandbox, number>();
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private live = 0;
  private waiters: { resolve: (s: Sandbox) => void; reject: (e: unknown) => void }[] = [];
  private retired = false;
  /** Linear memory past which a sandbox is recycled after its call. */
  private readonly highWater: number;
  info: BundleInfo = { methods: [], hooks: {}, jobs: [] };

  constructor(
    readonly spec: BundleSpec,
    private readonly hooks: SandboxHooks = {},
  ) {
    this.highWater = Math.max(INITIAL_BYTES, INITIAL_BYTES + spec.limits.memoryBytes / 4);
  }

  /** Load the first sandbox (its failure is the bundle's compile error) and warm the rest in the background. */
  async start(): Promise<BundleInfo> {
    const first = await this.make();
    this.info = first.info;
    this.idle.push(first);
    this.refill();
    return this.info;
  }

  private async make(): Promise<Sandbox> {
    this.live++;
    try {
      return await Sandbox.load(this.spec.js, this.spec.ops, this.spec.limits, this.hooks);
    } catch (e) {
      this.live--;
      throw e;
    }
  }

  /** Top the pool up to `warm` idle sandboxes (background; a failure just leaves it smaller). */
  private refill(): void {
    if (this.retired) return;
    const missing = this.spec.warm - this.live;
    for (let i = 0; i < missing; i++)
      this.make().then(
        (s) => this.put(s),
        () => {},
      );
  }

  /** A ready sandbox goes to the next waiting call, else back to idle (a retired pool drops it instead). */
  private put(s: Sandbox): void {
    if (!s.usable) {
      this.drop(s);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(s);
    else if (this.retired) this.drop(s);
    else {
      this.idle.push(s);
      this.idleSince.set(s, performance.now());
      if (this.live > this.spec.warm) this.startSweeping();
    }
  }

  /** Checks now and then for sandboxes beyond the warm ones that sat idle too long; stops once none are left. */
  private startSweeping(): void {
    if (this.sweeper) return;
    const idleMs = this.spec.idleMs ?? IDLE_MS;
    this.sweeper = setInterval(() => this.sweep(idleMs), Math.max(10, idleMs / 2));
    this.sweeper.unref?.();
  }

  private sweep(idleMs: number): void {
    const now = performance.now();
    while (this.live > this.spec.warm && this.idle.length > 0 && now - (this.idleSince.get(this.idle[0]!) ?? now) >= idleMs)
      this.drop(this.idle.shift()!);
    if (this.live <= this.spec.warm || this.retired) this.stopSweeping();
  }

  private stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private drop(s: Sandbox): void {
    this.live--;
    s.dispose();
    sandboxDrops.notify?.();
  }

  /** A sandbox once one is free (or a new one, below `max`). */
  private acquire(): Promise<Sandbox> {
    if (this.live < this.spec.max) return this.make();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private release(s: Sandbox): void {
    if (s.usable && s.memoryBytes() <= this.highWater) {
      this.put(s);
      return;
    }
    this.drop(s);
    // A waiting call gets a fresh sandbox in place of the dropped one; otherwise the pool is topped up.
    if (this.waiters.length)
      this.make().then(
        (n) => this.put(n),
        (e) => this.waiters.shift()?.reject(e),
      );
    else this.refill();
  }

  /**
   * Runs a call on the most recently used idle sandbox, taken and given back within this turn when the method
   * answers without waiting (so calls arriving together reuse one warm sandbox), else once it answers.
   */
  call(name: string, requestJson: string, dispatch: Dispatch, timeoutMs?: number): Promise<MethodResponse> {
    if (this.retired) return Promise.reject(new CodeError("result", "the method's code was replaced while the call started; call again"));
    const idle = this.idle.pop();
    if (idle) return this.run(idle, name, requestJson, dispatch, timeoutMs);
    return this.acquire().then((s) => this.run(s, name, requestJson, dispatch, timeoutMs));
  }

  private run(s: Sandbox, name: string, requestJson: string, dispatch: Dispatch, timeoutMs?: number): Promise<MethodResponse> {
    let answer: MethodResponse | Promise<MethodResponse>;
    try {
      answer = s.callNow(name, requestJson, dispatch, timeoutMs);
    } catch (e) {
      this.release(s);
      return Promise.reject(e);
    }
    if (!(answer instanceof Promise)) {
      this.release(s);
      return Promise.resolve(answer);
    }
    return answer.finally(() => this.release(s));
  }

  /** Stop taking new calls; idle sandboxes go now, busy ones once the calls already waiting are served. */
  retire(): void {
    this.retired = true;
    this.stopSweeping();
    for (const s of this.idle.splice(0)) this.drop(s);
  }

  /** Sandboxes alive (idle and busy). */
  size(): number {
    return this.live;
  }
}
