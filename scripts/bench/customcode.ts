// Custom code benchmark against the built binary (wrk): a method that returns a constant, one that reads one
// object by key, one that runs a 20-row query - beside the native GET by key and the native 20-row query in the
// same run - plus server CPU per call (from /proc, main and code threads together), the time an upload takes
// to be callable (pool start), and GET by key p99 while a runaway method burns its time limit.
// Usage: bun run scripts/bench/customcode.ts [--seconds 5] [--rounds 3] [--build] [--binary path] [--write]

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startBenchServer } from "./server.ts";
import { ensureBinary, machine, processCpuSeconds, table, writeSection } from "./env.ts";
import { runLoad, type LoadResult } from "./load.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const seconds = Math.min(60, Math.max(1, Number(values.seconds)));
const rounds = Math.min(9, Math.max(1, Number(values.rounds)));
const OBJECTS = 10_000;
const C = 50;

const BUNDLE = `
export const methods = [
  { name: "constant", execute() { return { body: { ok: true } }; } },
  { name: "read_one", params: ["id"], async execute(r, s) { return { body: await s.data.read("bench", r.params.id) }; } },
  { name: "query20", async execute(r, s) { return { body: await s.data.query("bench", { where: { done: true }, limit: 20 }) }; } },
  { name: "spin", execute() { for (;;) {} } },
];`;

const exe = values.binary ?? ensureBinary(values.build!);
const server = await startBenchServer(exe);
const headers = server.headers;

try {
  await server.putSchema("bench", { fields: { title: { type: "string" }, n: { type: "integer" }, done: { type: "boolean" } } });
  const ids = await server.seed("bench", OBJECTS, (i) => ({ title: `object ${i}`, n: i, done: i % 2 === 0 }));

  // Pool start: from the upload to the first answered call, several times (each upload is new code).
  const starts: { upload: number; firstCall: number }[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await server.putCode(`${BUNDLE}\n// upload ${i}\n`);
    const t1 = performance.now();
    const r = await fetch(`${server.url}/constant`, { headers });
    if (r.status !== 200) throw new Error(`constant: ${r.status} ${await r.text()}`);
    starts.push({ upload: t1 - t0, firstCall: performance.now() - t1 });
  }

  const cases: { name: string; paths: string[]; extra?: Record<string, string> }[] = [
    { name: "native GET by key", paths: ids.map((id) => `/bench/${id}`) },
    { name: "method: constant", paths: ["/constant"] },
    { name: "method: read one by key", paths: ids.map((id) => `/read_one?id=${id}`) },
    { name: "native query, 20 rows", paths: ["/bench?done=true"], extra: { range: "objects=0-19" } },
    { name: "method: query, 20 rows", paths: ["/query20"] },
  ];
  // Warm-up, not recorded: each case under load once, so the rounds measure warm calls (JavaScriptCore's tiers for
  // the server and for QuickJS's WebAssembly; the first seconds of a fresh process ran at half the later rate).
  for (const c of cases) await runLoad({ base: server.url, method: "GET", paths: c.paths, headers: { ...headers, ...c.extra }, connections: C, seconds: Math.min(3, seconds) }, "wrk");
  const samples = new Map<string, { r: LoadResult; cpuUs: number }[]>();
  for (let round = 0; round < rounds; round++)
    for (const c of cases) {
      const cpu0 = processCpuSeconds(server.pid);
      const r = await runLoad({ base: server.url, method: "GET", paths: c.paths, headers: { ...headers, ...c.extra }, connections: C, seconds }, "wrk");
      const cpu1 = processCpuSeconds(server.pid);
      const requests = r.rps * seconds;
      const cpuUs = cpu0 !== null && cpu1 !== null && requests > 0 ? ((cpu1 - cpu0) / requests) * 1e6 : NaN;
      if (!samples.has(c.name)) samples.set(c.name, []);
      samples.get(c.name)!.push({ r, cpuUs });
      console.error(`${c.name}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms errors ${r.errors} cpu ${cpuUs.toFixed(0)} us/call`);
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rows = cases.map((c) => {
    const s = samples.get(c.name)!;
    return { name: c.name, rps: median(s.map((x) => x.r.rps)), p50: median(s.map((x) => x.r.p50)), p99: median(s.map((x) => x.r.p99)), cpu: median(s.map((x) => x.cpuUs)), errors: s.reduce((n, x) => n + x.r.errors, 0), all: s.map((x) => Math.round(x.r.rps)) };
  });
  const row = (n: string) => rows.find((r) => r.name === n)!;
  // Paired ratios: each method run against the native run of the same round.
  const paired = (n: string) => median(samples.get(n)!.map((x, i) => x.r.rps / samples.get("native GET by key")![i]!.r.rps));

  // A runaway method: GET by key p99 idle, then while `spin` calls burn their 25 s (two at a time, re-issued).
  const latency = async () => runLoad({ base: server.url, method: "GET", paths: ids.map((id) => `/bench/${id}`), headers, connections: 10, seconds }, "wrk");
  const idle = await latency();
  let spinning = true;
  const spinners = [0, 1].map(async () => {
    while (spinning) await fetch(`${server.url}/spin`, { headers }).then((r) => r.text()).catch(() => {});
  });
  await Bun.sleep(500);
  const busy = await latency();
  spinning = false;
  console.error(`runaway: GET p99 idle ${idle.p99} ms, during ${busy.p99} ms (waiting for the spin calls to end)`);
  await Promise.all(spinners);

  const demotions = readFileSync(join(server.dir, "server.log"), "utf8").split("\n").filter((l) => l.includes("idle priority")).length;
  const constRatio = paired("method: constant");
  const readRatio = paired("method: read one by key");
  const cpuGap = row("method: constant").cpu - row("native GET by key").cpu;
  const poolStart = median(starts.map((s) => s.upload + s.firstCall));
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const checks = [
    ["constant method >= 60% of native GET by key req/s (c=50, median of paired runs)", `${(constRatio * 100).toFixed(1)}%`, verdict(constRatio >= 0.6)],
    ["one-read method >= 40% of native GET by key req/s", `${(readRatio * 100).toFixed(1)}%`, verdict(readRatio >= 0.4)],
    ["server CPU per warm call within 50 us of a native route (constant vs GET by key)", `${cpuGap.toFixed(0)} us`, verdict(cpuGap <= 50)],
    ["pool start <= 50 ms (upload answered + first call, median of 5)", `${poolStart.toFixed(0)} ms`, verdict(poolStart <= 50)],
    ["GET by key p99 during a runaway method < 1.5x idle (c=10)", `${idle.p99.toFixed(2)} -> ${busy.p99.toFixed(2)} ms (${(busy.p99 / idle.p99).toFixed(2)}x)`, verdict(busy.p99 < 1.5 * idle.p99)],
  ];
  const md = [
    `### Custom code (scripts/bench/customcode.ts)`,
    ``,
    `${machine()}; wrk, ${C} connections, ${seconds} s per run, median of ${rounds} interleaved rounds, ${OBJECTS} objects, built binary, loopback. CPU per call is the server process's user + system time (main and code threads) over the requests served.`,
    ``,
    table(["case", "req/s (median)", "p50 ms", "p99 ms", "server CPU us/call", "errors", "all runs req/s"], rows.map((r) => [r.name, Math.round(r.rps), r.p50, r.p99, r.cpu.toFixed(0), r.errors, r.all.join(" / ")])),
    ``,
    `Code threads moved to idle priority during the run (a call ran 100 ms without yielding): ${demotions} (the runaway part causes 2 or more).`,
    ``,
    `Pool start, 5 uploads: upload answered in ${starts.map((s) => s.upload.toFixed(0)).join(" / ")} ms, then the first call in ${starts.map((s) => s.firstCall.toFixed(1)).join(" / ")} ms.`,
    ``,
    table(["target", "measured", ""], checks),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("customcode", md);
} finally {
  await server.stop();
}
