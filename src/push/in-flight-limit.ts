// How many sends one push provider keeps in flight, found while a broadcast runs (latency-based, like TCP
// Vegas): while the provider's round trip stays near the shortest one seen, more sends in flight mean more
// deliveries a second and the limit grows; once round trips stretch (sends queue at the provider, on the
// connection or in our own thread) more in flight only adds waiting, and the limit shrinks back. A provider
// 100 ms away thus ends up with hundreds in flight, one on loopback with a few dozen. 429s, 5xx and timeouts
// in more than 5% of a window's answers shrink it too. `push.concurrency` is the ceiling. Pure: time comes in
// with the samples.

export interface InFlightLimitOptions {
  /** The ceiling (push.concurrency). */
  max: number;
  /** The floor (never below 1). */
  min?: number;
  /** Where it starts. */
  initial?: number;
}

/** Round trips within this factor of the shortest seen leave room to grow. */
export const GROW_BELOW = 1.5;
/** Round trips beyond this factor of the shortest seen shrink the limit (towards 2x). */
export const SHRINK_ABOVE = 2.5;
/** How fast the remembered shortest round trip is allowed to rise (per second), so a lasting change of route is
 * taken in rather than shrinking the limit for ever. */
const NO_LOAD_RISE_PER_S = 0.01;
/** More than this share of a window answered 429/5xx/timeout shrinks the limit (a few bad endpoints among many
 * Web Push services, or one device's 5xx, do not). */
const SLOW_DOWN_SHARE = 0.05;
/** Round trips shorter than this count as this long (timer resolution). */
const NO_LOAD_FLOOR_MS = 0.05;
/** Fewest samples that close a window. */
const MIN_WINDOW = 8;

export class InFlightLimit {
  /** The current limit (fractional; callers compare with <). */
  limit: number;
  readonly max: number;
  readonly min: number;
  /** The shortest window mean round trip seen (ms), rising slowly with time. */
  noLoadMs = Number.POSITIVE_INFINITY;
  private noLoadAt = 0;
  private sum = 0;
  private count = 0;
  private peak = 0;
  private retries = 0;

  constructor(o: InFlightLimitOptions) {
    this.max = Math.max(1, Math.floor(o.max));
    this.min = Math.min(this.max, Math.max(1, Math.floor(o.min ?? 8)));
    this.limit = Math.min(this.max, Math.max(this.min, o.initial ?? 20));
  }

  /**
   * One finished send: its round trip, how many were in flight when it started (itself included), whether the
   * provider asked to slow down (429, 5xx, timeout) and the time it finished (ms). A window closes after as
   * many samples as the limit (about one round trip's worth) and moves the limit once.
   */
  sample(rttMs: number, inFlight: number, slowDown: boolean, nowMs: number): void {
    this.sum += Math.max(0, rttMs);
    this.count++;
    if (inFlight > this.peak) this.peak = inFlight;
    if (slowDown) this.retries++;
    if (this.count >= Math.max(MIN_WINDOW, Math.ceil(this.limit))) this.close(nowMs);
  }

  private close(nowMs: number): void {
    const rtt = this.sum / this.count;
    const used = this.peak >= this.limit * 0.5;
    const retries = this.retries;
    const count = this.count;
    this.sum = this.count = this.peak = this.retries = 0;
    if (Number.isFinite(this.noLoadMs)) {
      this.noLoadMs *= 1 + (NO_LOAD_RISE_PER_S * Math.max(0, nowMs - this.noLoadAt)) / 1000;
    }
    this.noLoadAt = nowMs;
    if (rtt < this.noLoadMs) this.noLoadMs = rtt;
    if (retries > count * SLOW_DOWN_SHARE) {
      this.limit = Math.max(this.min, this.limit * 0.75);
      return;
    }
    const ratio = rtt / Math.max(this.noLoadMs, NO_LOAD_FLOOR_MS);
    if (ratio > SHRINK_ABOVE) this.limit = Math.max(this.min, this.limit * Math.max(0.5, 2 / ratio));
    else if (ratio < GROW_BELOW && used) this.limit = Math.min(this.max, this.limit * 1.25 + 1);
  }
}
