// Runs a backup job on the backup worker thread (backup-worker.ts) and answers its freeze request by holding every
// writer of the three databases off: one write transaction per database (BEGIN IMMEDIATE through the Client, so
// this process's queued writes wait in their write gates, and other processes' writes wait on SQLite's lock)
// until the worker has pinned its snapshots. Used by the server (its own clients) and by `burrow backup`.

import type { Client, Transaction } from "@libsql/core/api";
import type { BackupJobInput, BackupJobResult } from "./backup-job.ts";

/** In the compiled binary every module sits in one bundle at the root and the worker at backup/ (scripts/build.ts). */
const WORKER_URL = import.meta.url.includes("/$bunfs/")
  ? new URL("./backup/backup-worker.ts", import.meta.url).href
  : new URL("./backup-worker.ts", import.meta.url).href;

/** How long the freeze may wait for a write transaction already running before it gives up (and tries again). */
const FREEZE_WAIT_MS = 5_000;
const FREEZE_TRIES = 3;

export class FreezeTimeout extends Error {}

function within<T>(p: Promise<T>, ms: number, onLate: (v: T) => void): Promise<T> {
  let timer: Timer | undefined;
  let late = false;
  return Promise.race([
    p.then((v) => {
      if (late) onLate(v);
      return v;
    }),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => {
        late = true;
        reject(new FreezeTimeout("a write transaction did not end in time"));
      }, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Holds every writer of `clients` off (in this order, always the same); resolves with the function that lets them go. */
export async function freezeWriters(clients: readonly Client[], waitMs = FREEZE_WAIT_MS): Promise<() => void> {
  for (let attempt = 1; ; attempt++) {
    const held: Transaction[] = [];
    const release = () => {
      for (const tx of held.splice(0)) tx.close();
    };
    try {
      for (const c of clients) held.push(await within(c.transaction("write"), waitMs, (tx) => tx.close()));
      return release;
    } catch (e) {
      release();
      if (!(e instanceof FreezeTimeout) || attempt >= FREEZE_TRIES) throw e;
      await Bun.sleep(50 * attempt);
    }
  }
}

export interface Progress {
  done: number;
  total: number;
  phase: string;
}

/** Runs one backup on a worker thread; `clients` are system, development and production (the freeze's order). */
export function runBackupWorker(
  input: BackupJobInput,
  clients: readonly Client[],
  onProgress?: (p: Progress) => void,
): Promise<BackupJobResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL);
    let release: (() => void) | null = null;
    const finish = (fn: () => void) => {
      release?.();
      release = null;
      worker.terminate();
      fn();
    };
    worker.onerror = (e) => finish(() => reject(new Error(`the backup worker failed: ${e.message}`)));
    worker.onmessage = (event: MessageEvent) => {
      const m = event.data as { type: string; [k: string]: unknown };
      if (m.type === "freeze") {
        freezeWriters(clients).then(
          (r) => {
            release = r;
            worker.postMessage({ type: "frozen", at: Date.now() });
          },
          (e: unknown) =>
            worker.postMessage({
              type: "freeze-failed",
              message: `could not hold writes off for the backup's instant: ${(e as Error).message}`,
            }),
        );
      } else if (m.type === "thaw") {
        release?.();
        release = null;
      } else if (m.type === "progress") onProgress?.({ done: m.done as number, total: m.total as number, phase: m.phase as string });
      else if (m.type === "done") finish(() => resolve(m.result as BackupJobResult));
      else if (m.type === "error") finish(() => reject(new Error(m.message as string)));
    };
    worker.postMessage({ type: "start", input });
  });
}
