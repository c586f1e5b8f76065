// Open-loop writes for the backup benchmarks: one write every 1000/rate ms, each timed from when it was due (so a
// stall counts in every write due during it), and the latency figures of the writes due in a window. Bounded in
// time (maxMs) and in writes in flight.

import { cpuCounters, stealPercent } from "./env.ts";

export interface Sample {
  due: number;
  ms: number;
  ok: boolean;
}

/** Sends `send(i, due)` every 1000/rate ms until stop() or maxMs; a write is ok when it answers 201. */
export function writeLoop(
  send: (i: number, due: number) => Promise<Response>,
  rate: number,
  maxMs: number,
): { samples: Sample[]; stop(): Promise<void> } {
  const samples: Sample[] = [];
  const inflight = new Set<Promise<void>>();
  let stopped = false;
  const interval = 1000 / rate;
  const started = performance.now();
  const loop = (async () => {
    for (let i = 0; !stopped && performance.now() - started < maxMs; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      const p = send(i, due)
        .then(async (r) => {
          await r.arrayBuffer();
          samples.push({ due, ms: performance.now() - due, ok: r.status === 201 });
        })
        .catch(() => void samples.push({ due, ms: performance.now() - due, ok: false }));
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      if (inflight.size > 5000) throw new Error("the server stopped answering");
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(inflight);
    },
  };
}

/** Count, p50, p99, max (ms) and failures of the writes due in [from, to]. */
export function windowStats(
  samples: readonly Sample[],
  from: number,
  to: number,
): { n: number; p50: number; p99: number; max: number; failed: number } {
  const xs = samples.filter((s) => s.due >= from && s.due <= to);
  const ms = xs.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN;
  return { n: xs.length, p50: at(0.5), p99: at(0.99), max: ms.at(-1) ?? NaN, failed: xs.filter((s) => !s.ok).length };
}

/**
 * One table row: the write loop runs a second before `action` and half a second after; the row has what the
 * action took, the writes due meanwhile (count, p50, p99, max, failures), its detail and the CPU steal. `after`
 * runs once the loop has stopped (deleting big files there keeps that work out of the measured window).
 */
export async function duringAction(
  send: (i: number, due: number) => Promise<Response>,
  opts: { rate: number; maxMs: number; log: (s: string) => void },
  name: string,
  action: () => Promise<string>,
  after: () => void = () => {},
): Promise<(string | number)[]> {
  const loop = writeLoop(send, opts.rate, opts.maxMs);
  await Bun.sleep(1000); // the loop is steady before the action starts
  const from = performance.now();
  const cpu0 = cpuCounters();
  const detail = await action();
  const to = performance.now();
  const cpu1 = cpuCounters();
  await Bun.sleep(500);
  await loop.stop();
  after();
  const s = windowStats(loop.samples, from, to);
  opts.log(`${name}: ${JSON.stringify(s)} ${detail}`);
  return [name, `${((to - from) / 1000).toFixed(1)} s`, s.n, s.p50, s.p99, s.max, s.failed, detail, stealPercent(cpu0, cpu1)];
}
