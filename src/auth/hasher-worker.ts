// The password-hashing worker thread: lowers its own scheduling priority (Linux: SCHED_IDLE with two or more
// CPUs, else nice 19, on this thread only), then hashes and verifies on request, so a burst of logins cannot
// delay the requests the main thread serves.

import { availableParallelism } from "node:os";
import { idleThreadPolicy, niceThread } from "../os/thread-priority.ts";

declare const self: Worker;

export interface HashRequest {
  id: number;
  op: "hash" | "verify";
  password: string;
  hash?: string;
  options?: { algorithm: "argon2id"; memoryCost: number; timeCost: number };
}

// With one CPU an idle-class thread would starve for as long as requests keep the CPU busy; nice 19 still
// gives it a small share, so a login completes (slowly) even under full load.
if (!(availableParallelism() > 1 && idleThreadPolicy())) niceThread(19);

self.onmessage = (e: MessageEvent<HashRequest>) => {
  const { id, op, password, hash, options } = e.data;
  try {
    const result = op === "hash" ? Bun.password.hashSync(password, options!) : Bun.password.verifySync(password, hash!);
    postMessage({ id, result });
  } catch (err) {
    postMessage({ id, error: String((err as Error)?.message ?? err) });
  }
};
