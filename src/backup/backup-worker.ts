// The backup worker thread: runs one backup job (backup-job.ts, or remote-backup-job.ts on a libSQL store) off the
// server's JavaScript thread, so copying a large database never delays requests. Messages, host → worker:
// {type: "start", input}, {type: "frozen", at}; worker → host: {type: "freeze"}, {type: "thaw"},
// {type: "progress", done, total, phase}, {type: "done", result}, {type: "error", message}.

import { runBackupJob, type BackupJobInput } from "./backup-job.ts";
import { runRemoteBackupJob } from "./remote-backup-job.ts";
import { niceThread } from "../os/thread-priority.ts";

declare const self: Worker;

let frozen: ((at: number) => void) | null = null;

self.onmessage = (event: MessageEvent) => {
  const msg = event.data as
    | { type: "start"; input: BackupJobInput }
    | { type: "frozen"; at: number }
    | { type: "freeze-failed"; message: string };
  if (msg.type === "frozen") {
    frozen?.(msg.at);
    return;
  }
  if (msg.type === "freeze-failed") {
    failFreeze?.(new Error(msg.message));
    return;
  }
  let lastPost = 0;
  const job = msg.input.store?.url ? runRemoteBackupJob : runBackupJob;
  job(msg.input, {
    freeze: () =>
      new Promise<number>((resolve, reject) => {
        frozen = resolve;
        failFreeze = reject;
        self.postMessage({ type: "freeze" });
      }),
    thaw: () => {
      self.postMessage({ type: "thaw" });
      // Requests come first: once writers go again, the copy and hashing get what CPU the server's own thread
      // leaves (nice 19, not SCHED_IDLE, so a busy machine still finishes the backup). Not before: while writers
      // are held off, this thread must not wait for a CPU.
      niceThread(19);
    },
    progress: (done, total, phase) => {
      const now = Date.now();
      if (now - lastPost < 100 && done < total) return;
      lastPost = now;
      self.postMessage({ type: "progress", done, total, phase });
    },
  }).then(
    (result) => self.postMessage({ type: "done", result }),
    (e: unknown) => self.postMessage({ type: "error", message: (e as Error)?.message ?? String(e) }),
  );
};

let failFreeze: ((e: Error) => void) | null = null;
