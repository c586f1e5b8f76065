// A custom-code thread (a Worker started by thread-runner.ts): an InlineRunner whose sandboxes call their
// services through the main thread. It runs as SCHED_BATCH (Linux): a fair share of the CPU, but never
// preempting the main thread when a message wakes it. Guest code that runs 100 ms without yielding (a busy
// loop) moves this thread to the idle scheduling class (Linux; nice 19 on one CPU) and tells the main thread,
// which sends new calls elsewhere and replaces this thread once its calls are done, so a runaway method cannot
// slow the API. From then on the busy method also pauses whenever the API is answering requests (it runs while
// the API is quiet), since a CPU kept busy at idle priority still slows the other CPUs of a small virtual machine.

import { gcAndSweep } from "bun:jsc";
import { availableParallelism } from "node:os";
import { batchThreadPolicy, idleThreadPolicy, niceThread } from "../os/thread-priority.ts";
import { type BundleSpec, type ErrorData, InlineRunner, errorData } from "./code-runner.ts";
import { RawJson } from "./raw-json.ts";
import { batchedPoster, unbatch } from "./message-batch.ts";
import { type Answered, type BundleInfo, type MethodResponse, bodyText } from "./sandbox.ts";
import { LocalReads, type LocalReadFiles, type ReadPlan } from "./local-reads.ts";
import { sandboxDrops } from "./sandbox-pool.ts";
import type { ThreadMemory } from "../system/prometheus.ts";

declare const self: Worker;

export type ToCodeThread =
  | { type: "install"; id: number; spec: BundleSpec }
  | { type: "call"; id: number; key: string; name: string /** the request's JSON */; payload: string; scope?: string; timeoutMs?: number }
  | { type: "service-result"; sid: number; ok: true /** the answer's JSON (none: undefined) */; payload?: string; plan?: ReadPlan }
  | { type: "service-result"; sid: number; ok: false; message: string }
  | { type: "drop"; key: string };

export type FromCodeThread =
  | { type: "installed"; id: number; info: BundleInfo }
  | { type: "result"; id: number; status: number; headers: Record<string, string>; kind: MethodResponse["body"]["kind"]; payload: string }
  | { type: "failed"; id: number; error: ErrorData }
  | { type: "service"; sid: number; id: number; service: string; op: string; args: unknown[] }
  | { type: "demoted" }
  /** The thread's own memory (JS heap in use, memory held outside it: mostly the sandboxes' linear memory). */
  | ({ type: "memory" } & ThreadMemory);

/** What the main thread tells a thread first: the embedded store's files, the API's answered-requests counter. */
export interface ThreadSetup {
  reads?: LocalReadFiles;
  activity?: SharedArrayBuffer;
  /** Own heap growth that makes the thread collect (default OWN_GROWTH_BYTES; tests set it low). */
  collectAfterBytes?: number;
}

// Woken by a message, this thread waits for a free CPU instead of taking the one the main thread is on: measured,
// a call batch's postMessage cost the main thread about 100 us (it was preempted by the thread it woke), 8-14 us
// with this.
batchThreadPolicy();
const post = batchedPoster<FromCodeThread>((batch) => self.postMessage(batch));
let demoted = false;
/** The API's answered-requests counter, and its value when a busy method last looked. */
let activity: Int32Array | null = null;
let activitySeen = 0;
const nap = new Int32Array(new SharedArrayBuffer(4));
/** How long a busy method sleeps at a time while the API answers requests. */
const PAUSE_MS = 2;

const runner = new InlineRunner({
  onLongRun() {
    if (demoted) return;
    demoted = true;
    if (!(availableParallelism() > 1 && idleThreadPolicy())) niceThread(19);
    if (activity) activitySeen = Atomics.load(activity, 0);
    // At once, not batched: this runs inside the busy guest code, and a batch would wait for it to end.
    self.postMessage(JSON.stringify([{ type: "demoted" } satisfies FromCodeThread]));
  },
  whileLongRun(deadline) {
    if (!activity) return;
    // Requests were answered since the last look: sleep until a pause passes without any (or the deadline).
    let seen = Atomics.load(activity, 0);
    while (seen !== activitySeen && Date.now() < deadline) {
      activitySeen = seen;
      Atomics.wait(nap, 0, 0, PAUSE_MS);
      seen = Atomics.load(activity, 0);
    }
  },
});

// Collections of this thread's heap. The collector paces full collections by the heap's size counting the
// sandboxes' linear memory (tens of MB) while the thread's own objects are a few MB, so garbage of tens of MB
// piled up between full collections (seen as process memory growing for an hour under steady custom code calls).
// The thread collects itself when its own objects grew by OWN_GROWTH_BYTES since the last collection (checked
// every 5 s; a collection of this small heap takes a few ms and never involves the thread answering requests),
// and a second after a sandbox is dropped (its memory is freed only by a collection).
const OWN_GROWTH_BYTES = 2 * 1024 * 1024;
let collectAfterBytes = OWN_GROWTH_BYTES;
let ownAfterCollect = 0;
let collections = 0;
function ownBytes(m: NodeJS.MemoryUsage): number {
  return Math.max(0, m.heapUsed - m.external);
}
function collect(): NodeJS.MemoryUsage {
  gcAndSweep();
  collections++;
  const m = process.memoryUsage();
  ownAfterCollect = ownBytes(m);
  return m;
}
let collectAsked = false;
sandboxDrops.notify = () => {
  if (collectAsked) return;
  collectAsked = true;
  setTimeout(() => {
    collectAsked = false;
    collect();
  }, 1000);
};

/** The thread's memory to the main thread at start, after each install and every 5 s (code figures, /_metrics). */
const MEMORY_EVERY_MS = 5_000;
function reportMemory(): void {
  let m = process.memoryUsage();
  if (ownBytes(m) > ownAfterCollect + collectAfterBytes) m = collect();
  const report: FromCodeThread = { type: "memory", heapBytes: m.heapUsed, externalBytes: m.external, collections };
  self.postMessage(JSON.stringify([report]));
}
reportMemory();
setInterval(reportMemory, MEMORY_EVERY_MS).unref?.();

const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
let nextSid = 1;

/** Set by the main thread's first message when the store is embedded: reads this thread may answer itself. */
let local: LocalReads | null = null;

self.onmessage = (e: MessageEvent<string | ThreadSetup>) => {
  if (typeof e.data !== "string") {
    if (e.data.reads) local = new LocalReads(e.data.reads);
    if (e.data.activity) activity = new Int32Array(e.data.activity);
    if (e.data.collectAfterBytes !== undefined) collectAfterBytes = e.data.collectAfterBytes;
    return;
  }
  for (const m of unbatch<ToCodeThread>(e.data)) receive(m);
};

function receive(m: ToCodeThread): void {
  switch (m.type) {
    case "install":
      runner.install(m.spec).then(
        (info) => {
          post({ type: "installed", id: m.id, info });
          reportMemory(); // a new pool's sandboxes count at once, not at the next report
        },
        (err) => post({ type: "failed", id: m.id, error: errorData(err) }),
      );
      break;
    case "call": {
      const { id, scope } = m;
      const dispatch = (service: string, op: string, args: unknown[]): Promise<unknown> | Answered => {
        if (local && scope !== undefined && service === "data" && op === "read") {
          const answered = local.read(scope, args);
          if (answered) return answered;
        }
        return new Promise<unknown>((resolve, reject) => {
          const sid = nextSid++;
          pending.set(sid, { resolve, reject });
          post({ type: "service", sid, id, service, op, args });
        });
      };
      runner.call(m.key, m.name, m.payload, dispatch, undefined, m.timeoutMs).then(
        (r) => post({ type: "result", id, status: r.status, headers: r.headers, kind: r.body.kind, payload: bodyText(r.body) }),
        (err) => post({ type: "failed", id, error: errorData(err) }),
      );
      break;
    }
    case "service-result": {
      const p = pending.get(m.sid);
      if (!p) return;
      pending.delete(m.sid);
      if (m.ok && m.plan) local?.learn(m.plan);
      if (m.ok) p.resolve(m.payload === undefined ? undefined : new RawJson(m.payload));
      else p.reject(new Error(m.message));
      break;
    }
    case "drop":
      runner.drop(m.key);
      break;
  }
}
