// CRUD benchmark against the built binary: create, GET by key and update at concurrency 1 and 50, plus the
// floor (bare Bun.serve + bun:sqlite point read of the same table) in the same run.
// Usage: bun run scripts/bench/crud.ts [--seconds 5] [--objects 10000] [--rounds 3] [--tool wrk|autocannon]
//        [--build] [--binary path] [--write]

import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBenchServer } from "./server.ts";
import { ensureBinary, machine, readFirstLine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type LoadResult, type Tool } from "./load.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    objects: { type: "string", default: "10000" },
    tool: { type: "string" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    rounds: { type: "string", default: "3" },
    binary: { type: "string" },
  },
});
const seconds = Math.min(60, Math.max(1, Number(values.seconds)));
const objects = Math.min(200_000, Math.max(1000, Number(values.objects)));
const tool = (values.tool as Tool | undefined) ?? defaultTool();
const rounds = Math.min(9, Math.max(1, Number(values.rounds)));

const exe = values.binary ?? ensureBinary(values.build!);
const server = await startBenchServer(exe);
const headers = server.headers;

try {
  await server.putSchema("bench", {
    fields: { title: { type: "string" }, n: { type: "integer" }, done: { type: "boolean" }, tags: { type: "array", items: "string" } },
  });
  const ids = await server.seed("bench", objects, (i) => ({ title: `object ${i}`, n: i, done: i % 2 === 0, tags: ["a", "b"] }));
  const getPaths = ids.map((id) => `/bench/${id}`);
  const body = JSON.stringify({ title: "created by the benchmark", n: 7, done: false, tags: ["x"] });

  const floor = Bun.spawn(
    [process.execPath, join(import.meta.dir, "floor-server.ts"), join(server.dir, "data/development.db"), "o_bench", "bench_id"],
    { stdout: "pipe" },
  );
  const floorUrl = /serving (\S+)/.exec(await readFirstLine(floor.stdout))![1]!;

  // Every case runs `rounds` times, interleaved (floor, Burrow, floor, ...), and the median run is reported:
  // on a shared 2-core machine consecutive runs differ by 20% or more, and interleaving spreads that over both.
  const samples = new Map<string, { name: string; c: number; runs: LoadResult[] }>();
  const run = async (name: string, base: string, method: "GET" | "POST" | "PUT", paths: string[], c: number, b?: string) => {
    const r = await runLoad({ base, method, paths, headers, body: b, connections: c, seconds }, tool);
    const key = `${name}@${c}`;
    if (!samples.has(key)) samples.set(key, { name, c, runs: [] });
    samples.get(key)!.runs.push(r);
    console.error(`${name} c=${c}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms errors ${r.errors}`);
  };
  for (const c of [1, 50]) {
    for (let i = 0; i < rounds; i++) {
      await run("floor: Bun.serve + bun:sqlite GET by key", floorUrl, "GET", getPaths, c);
      await run("Burrow GET by key", server.url, "GET", getPaths, c);
    }
    for (let i = 0; i < rounds; i++) {
      await run("Burrow create (POST)", server.url, "POST", ["/bench"], c, body);
      await run("Burrow update (PUT)", server.url, "PUT", getPaths, c, JSON.stringify({ n: 8, title: "updated" }));
    }
  }
  floor.kill();
  const median = (runs: LoadResult[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
  const results = [...samples.values()].map(({ name, c, runs }) => ({ name, c, r: median(runs), all: runs.map((x) => Math.round(x.rps)) }));

  const find = (name: string, c: number) => results.find((x) => x.name.startsWith(name) && x.c === c)!.r;
  // The floor comparison uses the median of per-round ratios: each Burrow run is divided by the floor run
  // just before it, which cancels the machine's drift between rounds.
  const pairedRatio = (c: number) => {
    const floorRuns = samples.get(`floor: Bun.serve + bun:sqlite GET by key@${c}`)!.runs;
    const ours = samples.get(`Burrow GET by key@${c}`)!.runs;
    const ratios = ours.map((r, i) => r.rps / floorRuns[i]!.rps).sort((a, b) => a - b);
    return { median: ratios[Math.floor(ratios.length / 2)]!, all: ratios };
  };
  const paired50 = pairedRatio(50);
  const paired1 = pairedRatio(1);
  const ratio50 = paired50.median;
  const ratio1 = paired1.median;
  const checks = [
    [
      `GET by key at c=50 vs floor >= 70% (median of paired runs)`,
      `${(ratio50 * 100).toFixed(0)}% (${paired50.all.map((r) => (r * 100).toFixed(0)).join(" / ")})`,
      ratio50 >= 0.7 ? "met" : "MISSED",
    ],
    [
      `GET by key at c=1 vs floor (median of paired runs)`,
      `${(ratio1 * 100).toFixed(0)}% (${paired1.all.map((r) => (r * 100).toFixed(0)).join(" / ")})`,
      "-",
    ],
    [`creates/s at c=50 >= 3,000`, find("Burrow create", 50).rps.toFixed(0), find("Burrow create", 50).rps >= 3000 ? "met" : "MISSED"],
    ...["Burrow GET", "Burrow create", "Burrow update"].map((n) => [
      `${n} p99 at c=50 < 20 ms`,
      `${find(n, 50).p99.toFixed(2)} ms`,
      find(n, 50).p99 < 20 ? "met" : "MISSED",
    ]),
  ];
  const md = [
    `### CRUD (scripts/bench/crud.ts)`,
    ``,
    `${machine()}; load: ${results[0]!.r.tool}, 1 thread, ${seconds} s per run, median of ${rounds} interleaved runs, ${objects} objects, built binary, loopback.`,
    ``,
    table(
      ["case", "connections", "req/s (median)", "p50 ms", "p99 ms", "errors", "all runs req/s"],
      results.map(({ name, c, r, all }) => [name, c, Math.round(r.rps), r.p50, r.p99, r.errors, all.join(" / ")]),
    ),
    ``,
    table(["target", "measured", ""], checks),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("crud", md);
} finally {
  await server.stop();
}
