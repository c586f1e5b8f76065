// What the request log costs: the built binary at --log-level warn (no log hooks) and at info (one line per
// request on stderr, batched per event-loop turn), GET by key and creates at concurrency 50, interleaved
// rounds, paired ratios. The server's stderr goes to a file, as under a service manager.
// Usage: bun run scripts/bench/request-log.ts [--rounds 5] [--seconds 5] [--build] [--write]

import { parseArgs } from "node:util";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type LoadResult } from "./load.ts";
import { startBenchServer, type BenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "5" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const rounds = Math.min(15, Math.max(1, Number(values.rounds)));
const seconds = Math.min(30, Math.max(1, Number(values.seconds)));
const exe = ensureBinary(values.build!);
const tool = defaultTool();
const servers: BenchServer[] = [];

try {
  const setup = async (logLevel: "warn" | "info") => {
    const s = await startBenchServer(exe, { logLevel });
    servers.push(s);
    await s.putSchema("bench", { fields: { title: { type: "string" }, n: { type: "integer" } } });
    const ids = await s.seed("bench", 10_000, (i) => ({ title: `object ${i}`, n: i }));
    return { s, paths: ids.map((id) => `/bench/${id}`) };
  };
  const quiet = await setup("warn");
  const logged = await setup("info");
  const body = JSON.stringify({ title: "created by the benchmark", n: 7 });
  const runs: Record<string, LoadResult[]> = {};
  const run = async (name: string, x: { s: BenchServer; paths: string[] }, method: "GET" | "POST") => {
    const r = await runLoad(
      {
        base: x.s.url,
        method,
        paths: method === "GET" ? x.paths : ["/bench"],
        headers: x.s.headers,
        body: method === "POST" ? body : undefined,
        connections: 50,
        seconds,
      },
      tool,
    );
    (runs[name] ??= []).push(r);
    console.error(`${name}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms errors ${r.errors}`);
  };
  for (const x of [quiet, logged])
    await runLoad(
      { base: x.s.url, method: "GET", paths: x.paths, headers: x.s.headers, connections: 50, seconds: Math.min(3, seconds) },
      tool,
    );
  for (let i = 0; i < rounds; i++) {
    const order =
      i % 2 === 0
        ? ([
            ["warn", quiet],
            ["info", logged],
          ] as const)
        : ([
            ["info", logged],
            ["warn", quiet],
          ] as const);
    for (const [name, x] of order) await run(`GET by key, ${name}`, x, "GET");
    for (const [name, x] of order) await run(`create, ${name}`, x, "POST");
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const paired = (a: string, b: string) => runs[a]!.map((r, i) => r.rps / runs[b]![i]!.rps);
  const pct = (xs: number[]) => `${(median(xs) * 100).toFixed(1)}% (${xs.map((x) => (x * 100).toFixed(0)).join(" / ")})`;
  const rows = Object.entries(runs).map(([name, rs]) => {
    const m = [...rs].sort((x, y) => x.rps - y.rps)[Math.floor(rs.length / 2)]!;
    return [name, Math.round(m.rps), m.p50, m.p99, rs.reduce((n, r) => n + r.errors, 0), rs.map((r) => Math.round(r.rps)).join(" / ")];
  });
  const md = [
    `### Request log cost: --log-level info vs warn (scripts/bench/request-log.ts)`,
    ``,
    `${machine()}; ${tool}, 50 connections, ${seconds} s per run, ${rounds} interleaved rounds, 10000 objects, built binary, loopback, stderr to a file.`,
    ``,
    table(["case", "req/s (median)", "p50 ms", "p99 ms", "errors", "all runs req/s"], rows),
    ``,
    table(
      ["ratio (median of per-round ratios)", "measured"],
      [
        ["GET by key: info / warn", pct(paired("GET by key, info", "GET by key, warn"))],
        ["creates: info / warn", pct(paired("create, info", "create, warn"))],
      ],
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("request-log", md);
} finally {
  for (const s of servers) await s.stop();
}
