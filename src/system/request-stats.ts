// Request figures of this process, by area (data, users, code, push, files, admin, system, other): counts, server
// errors (5xx), client errors (4xx) and latency, kept per minute for the last hour (the status page's charts and
// percentiles) and as totals since start (the Prometheus histogram). Recording is a few array increments: no
// allocation per request. Percentiles come from log-scale buckets 25% wide, so they are exact to within a bucket.
// Each process keeps its own figures; with several nodes, each node's /_metrics is scraped on its own.

export const AREAS = ["data", "users", "code", "push", "files", "admin", "system", "other"] as const;
export type Area = (typeof AREAS)[number];
const AREA_INDEX: Record<Area, number> = Object.fromEntries(AREAS.map((a, i) => [a, i])) as Record<Area, number>;

/** Fine buckets for percentiles: upper bounds 0.05 ms × 1.25^i, up to about 40 s, then everything above. */
const FINE_BASE = 0.05;
const FINE_FACTOR = 1.25;
const FINE_COUNT = 62;
const LOG_FACTOR = Math.log(FINE_FACTOR);
export const FINE_BOUNDS: readonly number[] = Array.from({ length: FINE_COUNT }, (_, i) => FINE_BASE * FINE_FACTOR ** i);
/** What a percentile past the last bucket reads as (about 47 s: "at least"). */
const OVERFLOW_MS = FINE_BASE * FINE_FACTOR ** FINE_COUNT;

/** Prometheus histogram buckets, seconds (the client libraries' defaults, with 1 ms and 2.5 ms added). */
export const PROM_BOUNDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const MINUTES = 60;
const A = AREAS.length;

function fineIndex(ms: number): number {
  if (!(ms > FINE_BASE)) return 0;
  const i = Math.ceil(Math.log(ms / FINE_BASE) / LOG_FACTOR);
  return Math.min(i, FINE_COUNT);
}

export interface AreaFigures {
  requests: number;
  /** Requests per second over the window. */
  rate: number;
  serverErrors: number;
  clientErrors: number;
  /** Share of 5xx among the requests, 0..1. */
  errorRate: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface MinuteFigures {
  /** Start of the minute, ms since the epoch. */
  t: number;
  requests: number[];
  serverErrors: number[];
  p95: (number | null)[];
}

export class RequestStats {
  /** Per minute slot and area: requests, 5xx, 4xx; then fine latency buckets (FINE_COUNT + 1 per area). */
  private readonly counts = new Uint32Array(MINUTES * A * 3);
  private readonly fine = new Uint32Array(MINUTES * A * (FINE_COUNT + 1));
  /** The minute (ms since the epoch / 60000) each slot holds. */
  private readonly slotMinute = new Float64Array(MINUTES).fill(-1);
  /** Since start, per area and status class (1xx..5xx): counts; per area: Prometheus buckets, sum and count. */
  readonly totals = new Float64Array(A * 5);
  readonly promBuckets = new Float64Array(A * (PROM_BOUNDS.length + 1));
  readonly promSum = new Float64Array(A);
  readonly since: number;
  /** Requests answered since start, in shared memory: threads doing background work read it to yield to the API. */
  readonly answered = new Int32Array(new SharedArrayBuffer(4));

  constructor(private readonly now: () => number = Date.now) {
    this.since = now();
  }

  /** The slot of a minute, emptied when it held an older one; -1 when it holds a newer one (the clock went back). */
  private slot(minute: number): number {
    const s = minute % MINUTES;
    if (this.slotMinute[s]! > minute) return -1;
    if (this.slotMinute[s] !== minute) {
      this.slotMinute[s] = minute;
      this.counts.fill(0, s * A * 3, (s + 1) * A * 3);
      this.fine.fill(0, s * A * (FINE_COUNT + 1), (s + 1) * A * (FINE_COUNT + 1));
    }
    return s;
  }

  record(area: Area, status: number, ms: number): void {
    Atomics.add(this.answered, 0, 1);
    const a = AREA_INDEX[area];
    const s = this.slot(Math.floor(this.now() / 60_000));
    if (s >= 0) {
      const c = (s * A + a) * 3;
      this.counts[c]!++;
      if (status >= 500) this.counts[c + 1]!++;
      else if (status >= 400) this.counts[c + 2]!++;
      this.fine[(s * A + a) * (FINE_COUNT + 1) + fineIndex(ms)]!++;
    }
    const cls = Math.min(4, Math.max(0, Math.floor(status / 100) - 1));
    this.totals[a * 5 + cls]!++;
    const seconds = ms / 1000;
    let b = 0;
    while (b < PROM_BOUNDS.length && seconds > PROM_BOUNDS[b]!) b++;
    this.promBuckets[a * (PROM_BOUNDS.length + 1) + b]!++;
    this.promSum[a]! += seconds;
  }

  /** The minutes of the window that are still current: [slot, minute start] newest last. */
  private window(minutes: number): { slot: number; minute: number }[] {
    const current = Math.floor(this.now() / 60_000);
    const out: { slot: number; minute: number }[] = [];
    for (let m = current - Math.min(MINUTES, minutes) + 1; m <= current; m++) {
      const s = m % MINUTES;
      if (this.slotMinute[s] === m) out.push({ slot: s, minute: m });
    }
    return out;
  }

  private percentiles(hist: Uint32Array | Float64Array, total: number): [number | null, number | null, number | null] {
    if (total === 0) return [null, null, null];
    const at = (q: number) => {
      const target = Math.ceil(q * total);
      let seen = 0;
      for (let i = 0; i <= FINE_COUNT; i++) {
        seen += hist[i]!;
        if (seen >= target) return Math.round((i < FINE_COUNT ? FINE_BOUNDS[i]! : OVERFLOW_MS) * 100) / 100;
      }
      return OVERFLOW_MS;
    };
    return [at(0.5), at(0.95), at(0.99)];
  }

  /** Figures per area over the last `minutes` (at most 60); the current minute counts as far as it has gone. */
  summary(minutes = 60): Record<Area, AreaFigures> {
    const slots = this.window(minutes);
    const span = Math.max(1, Math.min(minutes * 60, (this.now() - this.since) / 1000));
    const out = {} as Record<Area, AreaFigures>;
    for (const area of AREAS) {
      const a = AREA_INDEX[area];
      let requests = 0;
      let serverErrors = 0;
      let clientErrors = 0;
      const hist = new Float64Array(FINE_COUNT + 1);
      for (const { slot } of slots) {
        const c = (slot * A + a) * 3;
        requests += this.counts[c]!;
        serverErrors += this.counts[c + 1]!;
        clientErrors += this.counts[c + 2]!;
        const f = (slot * A + a) * (FINE_COUNT + 1);
        for (let i = 0; i <= FINE_COUNT; i++) hist[i]! += this.fine[f + i]!;
      }
      const [p50, p95, p99] = this.percentiles(hist, requests);
      out[area] = {
        requests,
        rate: Math.round((requests / span) * 100) / 100,
        serverErrors,
        clientErrors,
        errorRate: requests ? serverErrors / requests : 0,
        p50,
        p95,
        p99,
      };
    }
    return out;
  }

  /** One entry per minute of the last hour that saw requests, oldest first: per area (AREAS order) requests, 5xx, p95. */
  series(): MinuteFigures[] {
    return this.window(MINUTES).map(({ slot, minute }) => {
      const requests: number[] = [];
      const serverErrors: number[] = [];
      const p95: (number | null)[] = [];
      for (let a = 0; a < A; a++) {
        const c = (slot * A + a) * 3;
        requests.push(this.counts[c]!);
        serverErrors.push(this.counts[c + 1]!);
        const f = (slot * A + a) * (FINE_COUNT + 1);
        p95.push(this.percentiles(this.fine.subarray(f, f + FINE_COUNT + 1), this.counts[c]!)[1]);
      }
      return { t: minute * 60_000, requests, serverErrors, p95 };
    });
  }
}
