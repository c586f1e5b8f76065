// Lowering the scheduling priority of the calling thread (Linux), for worker threads whose work must yield to
// the requests the main thread serves: SCHED_IDLE (runs only when a CPU is otherwise idle), SCHED_BATCH (a fair
// share, but no preempting on wake-up) or a nice value.
// Elsewhere these do nothing and answer false.

import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { libc } from "./libc.ts";

/** SCHED_IDLE for the calling thread only; true when applied. */
export function idleThreadPolicy(): boolean {
  return threadPolicy(5);
}

/**
 * SCHED_BATCH for the calling thread only (true when applied): the same share of the CPU as before, but waking
 * up it never preempts the thread that is running, so a thread handing it work keeps its CPU.
 */
export function batchThreadPolicy(): boolean {
  return threadPolicy(3);
}

function threadPolicy(policy: number): boolean {
  // pid 0 is the calling thread; the priority in sched_param must be 0 for SCHED_BATCH and SCHED_IDLE.
  return libc()?.sched_setscheduler(0, policy, new Int32Array(1)) === 0;
}

/** A nice value for the calling thread only (setpriority on a thread id affects only that thread on Linux). */
export function niceThread(nice: number): boolean {
  if (process.platform !== "linux") return false;
  try {
    // /proc/thread-self -> "<pid>/task/<tid>"
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid)) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
