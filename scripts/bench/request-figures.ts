// What recording a request's figures costs, in process: the start mark, the area from the route pattern and
// RequestStats.record (what every request pays at every log level, for the status page and /_metrics), against the time one GET by
// key takes at the measured throughput. The end-to-end comparison is scripts/bench/edge.ts against a build
// without the recording. Usage: bun run scripts/bench/request-figures.ts [--write] [--rps 27000]

import { parseArgs } from "node:util";
import { RequestStats } from "../../src/system/request-stats.ts";
import { areaOf } from "../../src/http/request-area.ts";
import { machine, table, writeSection } from "./env.ts";

const { values } = parseArgs({ options: { write: { type: "boolean", default: false }, rps: { type: "string", default: "27000" } } });
const rps = Math.max(1000, Number(values.rps));
const stats = new RequestStats();
const requests = Array.from({ length: 1000 }, (_, i) => new Request(`http://localhost/bench/${i}`));
const starts = new WeakMap<Request, number>();
const N = 2_000_000;
const runs: number[] = [];
for (let round = 0; round < 5; round++) {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const r = requests[i % 1000]!;
    starts.set(r, performance.now());
    const s = starts.get(r)!;
    starts.delete(r);
    stats.record(areaOf("/:schema/:id", r), 200, performance.now() - s);
  }
  runs.push(((performance.now() - t0) / N) * 1e6);
}
runs.sort((a, b) => a - b);
const ns = runs[2]!;
const perRequestNs = 1e9 / rps;
const md = [
  "### Request figures: recording cost per request (scripts/bench/request-figures.ts)",
  "",
  `${machine()}; ${N.toLocaleString("en")} recordings per run, 5 runs, median.`,
  "",
  table(
    ["measure", "value"],
    [
      ["start mark + area + RequestStats.record", `${ns.toFixed(0)} ns`],
      [`one GET by key at ${rps.toLocaleString("en")} req/s (one core)`, `${(perRequestNs / 1000).toFixed(1)} µs`],
      ["recording's share of a GET by key", `${((ns / perRequestNs) * 100).toFixed(2)}%`],
    ],
  ),
].join("\n");
console.log(md);
if (values.write) writeSection("request-figures-micro", md);
