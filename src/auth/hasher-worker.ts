// The password-hashing worker thread: lowers its own scheduling priority (Linux: nice 19 on this thread only),
// then hashes and verifies on request, so a burst of logins cannot starve the event loop that serves reads.

import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";

declare const self: Worker;

export interface HashRequest {
  id: number;
  op: "hash" | "verify";
  password: string;
  hash?: string;
  options?: { algorithm: "argon2id"; memoryCost: number; timeCost: number };
}

try {
  // /proc/thread-self -> "<pid>/task/<tid>": setpriority on a thread id affects only that thread on Linux.
  const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
  if (Number.isInteger(tid)) setPriority(tid, 19);
} catch {
  // Not Linux, or no /proc: hashing still happens off the main thread, at normal priority.
}

self.onmessage = (e: MessageEvent<HashRequest>) => {
  const { id, op, password, hash, options } = e.data;
  try {
    const result = op === "hash" ? Bun.password.hashSync(password, options!) : Bun.password.verifySync(password, hash!);
    postMessage({ id, result });
  } catch (err) {
    postMessage({ id, error: String((err as Error)?.message ?? err) });
  }
};
