// The HTTP edge, side by side in one run: this checkout's binary, a baseline binary built from another commit
// (a `git worktree` of --baseline-ref, e.g. the last build with the hand-written router), and the bare floor
// (Bun.serve + bun:sqlite). GET by key and creates at concurrency 50, interleaved rounds, paired ratios.
// Usage: bun run scripts/bench/edge.ts --baseline-ref <commit> [--rounds 5] [--seconds 5] [--connections 50]
//        [--objects 10000] [--build] [--write] [--section edge --title "HTTP edge"]

import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildBaseline, ensureBinary, machine, readFirstLine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type LoadResult } from "./load.ts";
import { startBenchServer, type BenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    "baseline-ref": { type: "string" },
    baseline: { type: "string" },
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "50" },
    objects: { type: "string", default: "10000" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    section: { type: "string", default: "edge" },
    target: { type: "string", default: "0.93" },
    title: { type: "string", default: "HTTP edge" },
  },
});
const target = Math.min(1, Math.max(0.5, Number(values.target)));
const rounds = Math.min(15, Math.max(1, Number(values.rounds)));
const seconds = Math.min(30, Math.max(1, Number(values.seconds)));
const c = Math.min(256, Math.max(1, Number(values.connections)));
const objects = Math.min(200_000, Math.max(1000, Number(values.objects)));
if (!values.baseline && !values["baseline-ref"]) throw new Error("give --baseline-ref <commit> (or --baseline <binary>)");

const current = ensureBinary(values.build!);
const baseline = values.baseline ? { exe: values.baseline, cleanup() {} } : buildBaseline(values["baseline-ref"]!);
const label = values.baseline ? values.baseline : `${values["baseline-ref"]}`;
const tool = defaultTool();
const servers: BenchServer[] = [];
let floor: ReturnType<typeof Bun.spawn> | undefined;

try {
  const setup = async (exe: string) => {
    const s = await startBenchServer(exe);
    servers.push(s);
    await s.putSchema("bench", {
      fields: { title: { type: "string" }, n: { type: "integer" }, done: { type: "boolean" }, tags: { type: "array", items: "string" } },
    });
    const ids = await s.seed("bench", objects, (i) => ({
      bench_id: `k${i}`,
      title: `object ${i}`,
      n: i,
      done: i % 2 === 0,
      tags: ["a", "b"],
    }));
    return { s, paths: ids.map((id) => `/bench/${id}`) };
  };
  const ours = await setup(current);
  const base = await setup(baseline.exe);
  floor = Bun.spawn(
    [process.execPath, join(import.meta.dir, "floor-server.ts"), join(ours.s.dir, "data/development.db"), "o_bench", "bench_id"],
    { stdout: "pipe" },
  );
  const floorUrl = /serving (\S+)/.exec(await readFirstLine(floor.stdout as ReadableStream<Uint8Array>))![1]!;
  const body = JSON.stringify({ title: "created by the benchmark", n: 7, done: false, tags: ["x"] });

  const runs: Record<string, LoadResult[]> = {};
  const run = async (name: string, url: string, method: "GET" | "POST", paths: string[], b?: string) => {
    const r = await runLoad({ base: url, method, paths, headers: ours.s.headers, body: b, connections: c, seconds }, tool);
    (runs[name] ??= []).push(r);
    console.error(`${name}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms errors ${r.errors}`);
  };
  // One discarded warm-up run per server: the first seconds after start carry JIT tiering and heap growth,
  // and would land in round one's p99 of whichever build happened to go first.
  for (const [url, paths] of [
    [floorUrl, ours.paths],
    [ours.s.url, ours.paths],
    [base.s.url, base.paths],
  ] as const) {
    await runLoad({ base: url, method: "GET", paths, headers: ours.s.headers, connections: c, seconds: Math.min(3, seconds) }, tool);
  }
  for (let i = 0; i < rounds; i++) {
    // Alternate which build goes first so drift within a round favours neither.
    const order =
      i % 2 === 0
        ? ([
            ["this change", ours],
            ["baseline", base],
          ] as const)
        : ([
            ["baseline", base],
            ["this change", ours],
          ] as const);
    await run("floor GET", floorUrl, "GET", ours.paths);
    for (const [name, x] of order) await run(`${name} GET`, x.s.url, "GET", x.paths);
    for (const [name, x] of order) await run(`${name} create`, x.s.url, "POST", ["/bench"], body);
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const paired = (a: string, b: string, of: (r: LoadResult) => number = (r) => r.rps) => runs[a]!.map((r, i) => of(r) / of(runs[b]![i]!));
  const p99 = (r: LoadResult) => r.p99;
  // "p99 unchanged within noise": the median of the paired p99 ratios stays inside the baseline's own
  // round-to-round spread (its interquartile range relative to its median), at least 10%.
  const spread = (name: string) => {
    const xs = runs[name]!.map(p99).sort((a, b) => a - b);
    const q = (f: number) => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
    return Math.max(0.1, (q(0.75) - q(0.25)) / median(xs));
  };
  const pct = (xs: number[]) => `${(median(xs) * 100).toFixed(1)}% (${xs.map((x) => (x * 100).toFixed(0)).join(" / ")})`;
  const getVsBase = paired("this change GET", "baseline GET");
  const createVsBase = paired("this change create", "baseline create");
  const getP99 = paired("this change GET", "baseline GET", p99);
  const createP99 = paired("this change create", "baseline create", p99);
  const p99Row = (what: string, xs: number[], base: string) => {
    const limit = 1 + spread(base);
    return [
      `${what} p99: this change / baseline`,
      pct(xs),
      median(xs) <= limit
        ? `≤ ${(limit * 100).toFixed(0)}% (baseline's own spread): met`
        : `≤ ${(limit * 100).toFixed(0)}% (baseline's own spread): MISSED`,
    ];
  };
  const rows = Object.entries(runs).map(([name, rs]) => {
    const m = [...rs].sort((x, y) => x.rps - y.rps)[Math.floor(rs.length / 2)]!;
    return [
      name,
      Math.round(m.rps),
      m.p50,
      m.p99,
      rs.reduce((n, r) => n + r.errors, 0),
      rs.map((r) => Math.round(r.rps)).join(" / "),
      rs.map((r) => r.p99.toFixed(1)).join(" / "),
    ];
  });
  const md = [
    `### ${values.title}: this change vs baseline ${label} (scripts/bench/edge.ts)`,
    ``,
    `${machine()}; ${tool}, ${c} connections, ${seconds} s per run, ${rounds} interleaved rounds, ${objects} objects, built binaries, loopback.`,
    ``,
    table(["case", "req/s (median)", "p50 ms", "p99 ms", "errors", "all runs req/s", "all runs p99 ms"], rows),
    ``,
    table(
      ["ratio (median of per-round ratios)", "measured", "target"],
      [
        ["GET by key: this change / baseline", pct(getVsBase), `≥ ${target * 100}%: ${median(getVsBase) >= target ? "met" : "MISSED"}`],
        ["creates: this change / baseline", pct(createVsBase), `≥ ${target * 100}%: ${median(createVsBase) >= target ? "met" : "MISSED"}`],
        p99Row("GET by key", getP99, "baseline GET"),
        p99Row("creates", createP99, "baseline create"),
        ["GET by key: this change / floor", pct(paired("this change GET", "floor GET")), "-"],
        ["GET by key: baseline / floor", pct(paired("baseline GET", "floor GET")), "-"],
      ],
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection(values.section!, md);
} finally {
  floor?.kill();
  for (const s of servers) await s.stop();
  baseline.cleanup();
}
