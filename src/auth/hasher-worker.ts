// The password-hashing worker thread: lowers its own scheduling priority (Linux: SCHED_IDLE with two or more
// CPUs, else nice 19, on this thread only), then hashes and verifies on request, so a burst of logins cannot
// delay the requests the main thread serves.

import { readlinkSync } from "node:fs";
import { availableParallelism, setPriority } from "node:os";

declare const self: Worker;

export interface HashRequest {
  id: number;
  op: "hash" | "verify";
  password: string;
  hash?: string;
  options?: { algorithm: "argon2id"; memoryCost: number; timeCost: number };
}

/** Linux: SCHED_IDLE for this thread only, so any waking request handler preempts hashing at once. */
function idlePolicy(): boolean {
  try {
    const { dlopen } = require("bun:ffi") as typeof import("bun:ffi");
    const libc = dlopen("libc.so.6", { sched_setscheduler: { args: ["i32", "i32", "ptr"], returns: "i32" } });
    // pid 0 is the calling thread; 5 is SCHED_IDLE; the priority in sched_param must be 0.
    return libc.symbols.sched_setscheduler(0, 5, new Int32Array(1)) === 0;
  } catch {
    return false;
  }
}

/** Otherwise nice 19 for this thread (setpriority on a thread id affects only that thread on Linux). */
function lowestNice(): void {
  try {
    // /proc/thread-self -> "<pid>/task/<tid>"
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid)) setPriority(tid, 19);
  } catch {
    // Not Linux, or no /proc: hashing still happens off the main thread, at normal priority.
  }
}

// With one CPU an idle-class thread would starve for as long as requests keep the CPU busy; nice 19 still
// gives it a small share, so a login completes (slowly) even under full load.
if (process.platform === "linux" && !(availableParallelism() > 1 && idlePolicy())) lowestNice();

self.onmessage = (e: MessageEvent<HashRequest>) => {
  const { id, op, password, hash, options } = e.data;
  try {
    const result = op === "hash" ? Bun.password.hashSync(password, options!) : Bun.password.verifySync(password, hash!);
    postMessage({ id, result });
  } catch (err) {
    postMessage({ id, error: String((err as Error)?.message ?? err) });
  }
};
