// Runs a PushService's delivery on its own thread (delivery-thread.ts) for `burrow serve`: the main thread keeps
// queueing sends and forwards a wake-up for each; the thread leases, delivers and records. If the thread cannot
// start, delivery runs on the main thread instead (and says so in the log). The thread (about 10 MB) starts when
// there is something to deliver: at once when the queue holds deliveries (left from before a restart), else with
// the first send. On a store shared with other nodes it starts at once, since it also takes over the deliveries
// a stopped node leaves.

import type { StoreLocation } from "../db/open-store.ts";
import type { Level, LogFormat } from "../log.ts";
import { ENVIRONMENTS } from "../system/environments.ts";
import type { PushService } from "./push-service.ts";
import type { FromDeliveryThread, ToDeliveryThread } from "./delivery-thread.ts";

/** In the compiled binary every module sits in one bundle at the root and the thread at push/ (scripts/build.ts). */
const THREAD_URL = import.meta.url.includes("/$bunfs/")
  ? new URL("./push/delivery-thread.ts", import.meta.url).href
  : new URL("./delivery-thread.ts", import.meta.url).href;
const STOP_WAIT_MS = 15_000;

type Options = { store: StoreLocation; logLevel: Level; logFormat?: LogFormat };

/** Starts delivery when there is work (see the header); the returned function stops it, if it started. */
export async function startDeliveryThread(push: PushService, opts: Options): Promise<() => Promise<void>> {
  let started: Promise<() => Promise<void>> | null = null;
  const start = () => (started ??= launch(push, opts));
  if (opts.store.url || (await push.hasWork())) await start();
  else {
    // The first send starts the thread, which leases what is due as it starts; later sends wake it (launch).
    push.onQueued = () => void start();
  }
  return async () => {
    push.onQueued = null;
    await (await started)?.();
  };
}

async function launch(push: PushService, opts: Options): Promise<() => Promise<void>> {
  const log = push.log;
  let worker: Worker;
  try {
    worker = new Worker(THREAD_URL);
  } catch (e) {
    log.warn("push delivery thread could not start; delivering on the main thread", { message: String((e as Error)?.message ?? e) });
    return push.start();
  }
  const post = (m: ToDeliveryThread) => worker.postMessage(m);
  const started = await new Promise<boolean>((resolve) => {
    worker.onmessage = (e: MessageEvent<FromDeliveryThread>) => {
      if (e.data.type === "ready") resolve(true);
      else if (e.data.type === "failed") {
        log.warn("push delivery thread failed to start; delivering on the main thread", { message: e.data.message });
        resolve(false);
      }
    };
    worker.onerror = (e) => {
      log.warn("push delivery thread failed; delivering on the main thread", { message: String(e.message ?? e) });
      resolve(false);
    };
    post({ type: "start", store: opts.store, logLevel: opts.logLevel, logFormat: opts.logFormat ?? "text" });
  });
  if (!started) {
    worker.terminate();
    return push.start();
  }
  log.info("push delivery thread started");
  let onStopped = () => {};
  worker.onmessage = (e: MessageEvent<FromDeliveryThread>) => {
    if (e.data.type === "limits") push.reportLimits(e.data.env, e.data.limits);
    else if (e.data.type === "stopped") onStopped();
  };
  push.onQueued = (env) => post({ type: "wake", env });
  // Sends queued while the thread started (its first lease may have run before them).
  for (const env of ENVIRONMENTS) post({ type: "wake", env });
  return async () => {
    push.onQueued = null;
    const stopped = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, STOP_WAIT_MS);
      onStopped = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    post({ type: "stop" });
    await stopped;
    worker.terminate();
  };
}
