// The push delivery thread (a Worker started by delivery-host.ts for `burrow serve`): it opens the store's
// system and environment databases on connections of its own, like a second node would, runs the
// push workers of both environments there (they pick up settings changes through the configuration epoch before
// every lease), and lowers its own scheduling priority (Linux: SCHED_IDLE, else nice 19), so a broadcast going
// out does not delay the API requests the main thread answers.

import { type StoreLocation, openStore } from "../db/open-store.ts";
import { type Level, type LogFormat, createLogger } from "../log.ts";
import { startHttpClientThread } from "../os/http-client-thread.ts";
import { idleThreadPolicy, niceThread } from "../os/thread-priority.ts";
import type { EnvName } from "../system/environments.ts";
import { Settings } from "../system/settings.ts";
import { type InFlightLimits, PushService } from "./push-service.ts";

declare const self: Worker;

export type ToDeliveryThread =
  | { type: "start"; store: StoreLocation; logLevel: Level; logFormat: LogFormat }
  | { type: "wake"; env: EnvName }
  | { type: "stop" };
export type FromDeliveryThread =
  | { type: "ready" }
  | { type: "stopped" }
  | { type: "failed"; message: string }
  | { type: "limits"; env: EnvName; limits: InFlightLimits };

let push: PushService | null = null;
let stopWorkers: (() => Promise<void>) | null = null;
let close: (() => void) | null = null;
let stopping = false;

async function start(location: StoreLocation, logLevel: Level, logFormat: LogFormat): Promise<void> {
  // SCHED_IDLE even with one CPU: an idle-class thread never preempts the main thread when it wakes (a nice 19
  // one does, and on one CPU that doubled GET p99 during a broadcast), yet it is not starved: the scheduler still
  // gives it a small weight (3 against 1024), so delivery goes on under full API load, slowly. Threads it starts
  // inherit the class: Bun's shared HTTP client thread, which carries every fetch of the process, must not be one,
  // so it is made first (serve has made it already at start-up; this is the second line of defence).
  await startHttpClientThread();
  if (!idleThreadPolicy()) niceThread(19);
  const log = createLogger(logLevel, undefined, logFormat);
  const store = await openStore(location);
  const system = store.system;
  const envDbs = { development: store.development, production: store.production };
  const settings = new Settings(system);
  await settings.refresh();
  push = new PushService(envDbs, settings, log, store.remote);
  push.onLimits = (env, limits) => postMessage({ type: "limits", env, limits } satisfies FromDeliveryThread);
  stopWorkers = push.start();
  close = () => store.close();
}

self.onmessage = (e: MessageEvent<ToDeliveryThread>) => {
  const msg = e.data;
  if (msg.type === "start") {
    start(msg.store, msg.logLevel, msg.logFormat).then(
      () => postMessage({ type: "ready" } satisfies FromDeliveryThread),
      (err) => postMessage({ type: "failed", message: String((err as Error)?.message ?? err) } satisfies FromDeliveryThread),
    );
  } else if (msg.type === "wake") {
    // Settings saved just before this send (credentials, concurrency) apply to it: the worker looks before leasing.
    push?.wake(msg.env);
  } else if (msg.type === "stop" && !stopping) {
    stopping = true;
    (stopWorkers ?? (async () => {}))()
      .then(() => close?.())
      .finally(() => postMessage({ type: "stopped" } satisfies FromDeliveryThread));
  }
};
