// Password hashing: argon2id on low-priority worker threads (hasher-worker.ts), so login storms do not slow the
// requests the main thread serves; falls back to Bun.password's own thread pool when workers cannot start.
// Each worker takes one job at a time from two queues, verifications (logins) before new hashes (sign-ups,
// password changes), so a flood of sign-ups never makes a login wait behind it. A dummy verify makes unknown
// accounts take as long to reject as wrong passwords.

import { availableParallelism } from "node:os";
import type { HashRequest } from "./hasher-worker.ts";

const ARGON2 = { algorithm: "argon2id", memoryCost: 19456, timeCost: 2 } as const;
/** In the compiled binary every module sits in one bundle at the root and the worker at auth/ (scripts/build.ts). */
const WORKER_URL = import.meta.url.includes("/$bunfs/")
  ? new URL("./auth/hasher-worker.ts", import.meta.url).href
  : new URL("./hasher-worker.ts", import.meta.url).href;

function direct(req: Omit<HashRequest, "id">): Promise<string | boolean> {
  return req.op === "hash" ? Bun.password.hash(req.password, ARGON2) : Bun.password.verify(req.password, req.hash!);
}

interface Pending {
  req: Omit<HashRequest, "id">;
  resolve(v: string | boolean): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  /** The job it runs (one at a time), or null when idle. */
  job: (Pending & { id: number }) | null;
}

class HasherPool {
  private workers: Slot[] = [];
  /** Jobs waiting for a worker: verifications first, then hashes. */
  private readonly verifies: Pending[] = [];
  private readonly hashes: Pending[] = [];
  private nextId = 1;
  private failed = false;

  private start(): void {
    const size = hasherThreads();
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_URL);
      const slot: Slot = { worker, job: null };
      worker.onmessage = (e: MessageEvent<{ id: number; result?: string | boolean; error?: string }>) => {
        const p = slot.job;
        if (!p || p.id !== e.data.id) return;
        slot.job = null;
        this.next(slot);
        if (e.data.error !== undefined) p.reject(new Error(e.data.error));
        else p.resolve(e.data.result!);
      };
      worker.onerror = () => {
        // A worker that cannot run: hash on Bun's own pool from now on, including what was waiting.
        this.failed = true;
        const waiting = [...this.workers.flatMap((s) => (s.job ? [s.job] : [])), ...this.verifies.splice(0), ...this.hashes.splice(0)];
        for (const s of this.workers) s.job = null;
        for (const p of waiting) direct(p.req).then(p.resolve, p.reject);
      };
      worker.unref();
      this.workers.push(slot);
    }
  }

  /** Give an idle worker the next job, verifications first. */
  private next(slot: Slot): void {
    const p = this.verifies.shift() ?? this.hashes.shift();
    if (!p) {
      // Referenced only while it has work: an idle worker never keeps the process alive, and a busy one must
      // (Bun's event loop spins instead of sleeping while it awaits an unreferenced worker).
      slot.worker.unref();
      return;
    }
    const job = { ...p, id: this.nextId++ };
    if (slot.job === null) slot.worker.ref();
    slot.job = job;
    slot.worker.postMessage({ ...p.req, id: job.id });
  }

  run(req: Omit<HashRequest, "id">): Promise<string | boolean> {
    if (this.failed) return direct(req);
    if (this.workers.length === 0) this.start();
    return new Promise((resolve, reject) => {
      (req.op === "verify" ? this.verifies : this.hashes).push({ req, resolve, reject });
      const idle = this.workers.find((s) => s.job === null);
      if (idle) this.next(idle);
    });
  }
}

/** Hashing threads: one fewer than the CPUs (the main thread keeps one), 1 to 4. */
export function hasherThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

const pool = new HasherPool();
let dummyHash: Promise<string> | null = null;

/** Hashes and verifications asked for since the process started (what the tests count). */
export const passwordWork = { hashes: 0, verifies: 0 };

export async function hashPassword(password: string): Promise<string> {
  passwordWork.hashes++;
  return (await pool.run({ op: "hash", password, options: ARGON2 })) as string;
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  passwordWork.verifies++;
  try {
    return (await pool.run({ op: "verify", password, hash })) as boolean;
  } catch {
    return false;
  }
}

/** Spend the time of one verification without an account (timing equalization). */
export async function verifyNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword("burrow-timing-equalizer");
  await verifyPassword(password, await dummyHash);
  return false;
}
