// Load shedding at the edge: when the server cannot keep up, a share of ordinary requests is answered at once with
// 503 and Retry-After instead of waiting in line, so the requests it admits keep their latency. How far behind the
// server is shows in the event loop: a timer due every few milliseconds fires late by about as long as a request
// arriving now waits for its turn. While that lag (the median of the last five looks) is above the target, the admitted
// share shrinks by a factor each tick; while below, it grows back by a step (full admission within about 0.1 s of
// the load dropping). A turn of the loop can hold thousands of requests read at once (and the timer cannot fire
// inside it), so within a turn that has run past the target and read a flood of requests (more than FLOOD_TURN),
// every further ordinary request is refused at once.
// Past a cap on requests in flight (work waiting on a remote store, say), ordinary requests are shed whatever the
// lag. Sign-in and token requests, the admin API and console, health, status and metrics are never shed, so an
// operator can act and users already signed in can refresh during an overload. The share is pure (AdmissionState).

import type { SheddingFigures } from "../system/operations.ts";
import { pathOf } from "./origin.ts";

/** Which requests may be shed. */
export type RequestClass = "ordinary" | "kept";

/** Paths never shed: the admin API and console, health and status, sign-in and tokens (`/<user schema>/accessToken`, ...). */
export function requestClass(path: string): RequestClass {
  if (path.startsWith("/_admin") || path === "/_health" || path.startsWith("/_status") || path === "/_metrics") return "kept";
  const slash = path.indexOf("/", 1);
  const second = slash < 0 ? "" : path.slice(slash + 1);
  if (second === "accessToken" || second === "refreshToken" || second === "logout") return "kept";
  return "ordinary";
}

export interface AdmissionOptions {
  /** Event loop lag (ms) above which ordinary requests are shed; 0 turns shedding off. */
  targetMs: number;
  /** Ordinary requests in flight past which new ones are shed. */
  maxInFlight: number;
}

/** Looks whose median is the lag that counts (odd). */
const LOOKS = 5;

/** The admitted share and its adjustment. Pure: `tick` is told the lag, `admit` answers for one request. */
export class AdmissionState {
  fraction = 1;
  private credit = 0;

  constructor(private readonly opts: AdmissionOptions) {}

  /** The last LOOKS looks at the lag, oldest overwritten first. */
  private readonly looks = new Float64Array(LOOKS);
  /** The same looks sorted (reused: a look every 5 ms allocates nothing). */
  private readonly sorted = new Float64Array(LOOKS);
  private nextLook = 0;
  /**
   * The lag that counts: the median of the last LOOKS looks. One late timer - a collection, a slow task, the process
   * descheduled - sheds nothing however late it was (with a smoothed average a single 70 ms stall did), nor does the
   * backlog turn after it; three late looks in five (an overload lasting more than a few turns) do.
   */
  lag = 0;

  /** One look at the lag: shrink the share while over the target (never below 2%), grow it back while under. */
  tick(lagMs: number): void {
    this.looks[this.nextLook] = lagMs;
    this.nextLook = (this.nextLook + 1) % LOOKS;
    this.sorted.set(this.looks);
    this.lag = this.sorted.sort()[LOOKS >> 1]!;
    const over = this.lag > this.opts.targetMs;
    if (over) this.fraction = Math.max(0.02, this.fraction * (this.lag > 4 * this.opts.targetMs ? 0.5 : 0.8));
    else this.fraction = Math.min(1, this.fraction + 0.05);
  }

  /** Whether an ordinary request is admitted: every request while the share is 1, else that share of them, evenly. */
  admit(inFlight: number): boolean {
    if (inFlight >= this.opts.maxInFlight) return false;
    if (this.fraction >= 1) return true;
    this.credit += this.fraction;
    if (this.credit >= 1) {
      this.credit -= 1;
      return true;
    }
    return false;
  }
}

/** How often the lag is looked at. */
export const TICK_MS = 5;

/**
 * Requests one turn of the loop must have read past the target before the rest of it is refused: a flood reads
 * thousands at once, a steady moderate load a handful (400 requests/s during a 30 ms task: about 12).
 */
export const FLOOD_TURN = 64;

const SHED_BODY = JSON.stringify({ error: "the server is overloaded; retry after a second" });

/**
 * The edge's admission control over `figures` (the status page's and /_metrics' view): `enter` answers a shed
 * request's 503 or null to go on, `leave` is called when an admitted request has its answer. The lag is looked at
 * only while requests come (a timer every TICK_MS, stopped after a quiet second).
 */
export function admissionControl(opts: AdmissionOptions, figures: SheddingFigures) {
  const state = new AdmissionState(opts);
  figures.enabled = opts.targetMs > 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  let last = 0;
  let lastRequest = 0;
  /** Requests that arrived since the timer last fired: within one turn of the loop, how many it has read. */
  let thisTurn = 0;
  const probe = () => {
    thisTurn = 0;
    const now = performance.now();
    const lag = Math.max(0, now - last - TICK_MS);
    last = now;
    state.tick(lag);
    figures.admitFraction = state.fraction;
    figures.queueMs = Math.round(lag * 10) / 10;
    if (now - lastRequest > 1000 && state.fraction >= 1 && timer) {
      clearInterval(timer);
      timer = null;
      figures.queueMs = 0;
    }
  };
  return {
    /**
     * A request arrives (`set`: its Elysia context's headers-and-status object, marked when admitted): its 503, or
     * null to go on. The path is looked at only when something may be shed, so an unloaded server pays a clock read.
     */
    enter(request: Request, set: object): Response | null {
      if (!figures.enabled) return null;
      const now = performance.now();
      lastRequest = now;
      if (timer === null) {
        last = now;
        timer = setInterval(probe, TICK_MS);
        (timer as { unref?: () => void }).unref?.();
      }
      // Within one long turn of the loop (a batch of requests read at once), a request reached past the target has
      // waited at least that long: refused at once, so the turn ends soon, whatever the share the timer set last.
      // A long turn with few requests in it is one slow task (a broadcast queued, a collection), not a flood.
      const flooded = now - last - TICK_MS > opts.targetMs && ++thisTurn > FLOOD_TURN;
      if (
        (flooded || state.fraction < 1 || figures.inFlight >= opts.maxInFlight) &&
        requestClass(pathOf(request.url)) === "ordinary" &&
        (flooded || !state.admit(figures.inFlight))
      ) {
        figures.shed++;
        return new Response(SHED_BODY, { status: 503, headers: { "content-type": "application/json", "retry-after": "1" } });
      }
      figures.admitted++;
      figures.inFlight++;
      (set as Marked)[ADMITTED] = true;
      return null;
    },
    /** The admitted request of `set` has its answer. */
    leave(set: object): void {
      if ((set as Marked)[ADMITTED] !== true) return;
      (set as Marked)[ADMITTED] = false;
      figures.inFlight--;
    },
    stop(): void {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

const ADMITTED = Symbol("burrow.admitted");
type Marked = { [ADMITTED]?: boolean };
