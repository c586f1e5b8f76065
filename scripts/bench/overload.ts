// Overload: an open-loop offered load of 4x what the server answers, with load shedding on (the default) and off.
// The built binary serves a 20-row query of a 10,000-object schema; its capacity is measured first (wrk or autocannon,
// closed loop, 10 s); then scripts/bench/open-loop.ts offers 4x that for 20 s and a quarter of it for 5 s after,
// measuring admitted (2xx) latency, the 503s' latency, how long p99 takes to come back to its idle value after the
// load drops, the server's RSS, and whether an admin call and a sign-in still get through during the overload.
// Usage: bun run scripts/bench/overload.ts [--factor 4] [--seconds 20] [--build] [--write]

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT, ensureBinary, machine, table, writeSection } from "./env.ts";
import { runLoad } from "./load.ts";
import { startBenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    factor: { type: "string", default: "4" },
    seconds: { type: "string", default: "20" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const factor = Math.min(10, Math.max(1, Number(values.factor)));
const seconds = Math.min(120, Math.max(5, Number(values.seconds)));
const exe = ensureBinary(values.build!);

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** The two workloads: a cheap request (refusing 4x of it costs about as much as answering it) and a dearer one. */
const WORKLOADS = [
  { name: "20-row query", path: "/item?kind=k7", range: "objects=0-19" },
  { name: "200-row query", path: "/item?n[lt]=5000", range: "objects=0-199" },
] as const;

async function run(shedding: boolean, w: (typeof WORKLOADS)[number]) {
  const server = await startBenchServer(exe, { env: { BURROW_SHED_TARGET_MS: shedding ? "20" : "0" } });
  try {
    await server.putSchema("item", {
      fields: { title: { type: "string" }, kind: { type: "string" }, n: { type: "integer" } },
      permissions: { create: "open", read: "open", update: "open", delete: "open" },
      indexes: [["kind"], ["n"]],
    });
    await server.seed("item", 10_000, (i) => ({ title: `item ${i}`, kind: `k${i % 50}`, n: i }));
    const path = w.path;
    const headers = { ...server.headers, range: w.range };
    // Capacity: closed loop at full speed.
    const cap = await runLoad({ base: server.url, method: "GET", paths: [path], headers, connections: 16, seconds: 10 });
    const capacity = Math.round(cap.rps);
    const quarter = Math.max(100, Math.round(capacity / 4));
    const idle = await openLoop(server.url + path, headers, `${quarter}x5`);
    const rss0 = rssMb(server.pid);
    let rssMax = rss0;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(server.pid))), 200);
    // During the overload: an admin call and a sign-in (kept apart from shedding) every 0.5 s.
    const kept: number[] = [];
    const keptStatuses: Record<string, number> = {};
    let stop = false;
    const side = (async () => {
      await Bun.sleep(3000);
      while (!stop) {
        const t0 = performance.now();
        const r = await fetch(`${server.url}/_admin/api/status`, { headers: { authorization: "Bearer none" } }).catch(() => null);
        kept.push(performance.now() - t0);
        keptStatuses[String(r?.status ?? "network")] = (keptStatuses[String(r?.status ?? "network")] ?? 0) + 1;
        await Bun.sleep(500);
      }
    })();
    const over = await openLoop(server.url + path, headers, `${capacity * factor}x${seconds},${quarter}x5`);
    stop = true;
    await side;
    clearInterval(sampler);
    return { capacity, idle: idle[0]!, overload: over[0]!, after: over[1]!, rss0, rssMax, kept, keptStatuses };
  } finally {
    await server.stop();
  }
}

type Phase = {
  rate: number;
  sent: number;
  byStatus: Record<string, number>;
  unanswered: number;
  okPerSecond: number;
  ok: { p50: number | null; p99: number | null; p999: number | null; max: number | null };
  shed: { p50: number | null; p99: number | null };
  windows: { atMs: number; p99: number | null; n: number }[];
};

async function openLoop(url: string, headers: Record<string, string>, phases: string): Promise<Phase[]> {
  const args = ["run", join(ROOT, "scripts/bench/open-loop.ts"), "--url", url, "--phases", phases, "--connections", "64"];
  for (const [k, v] of Object.entries(headers)) args.push("--header", `${k}: ${v}`);
  const p = Bun.spawn([process.execPath, ...args], { stdout: "pipe", stderr: "inherit" });
  const timer = setTimeout(() => p.kill(), 300_000);
  const text = await new Response(p.stdout).text();
  clearTimeout(timer);
  if ((await p.exited) !== 0) throw new Error("open-loop generator failed");
  return JSON.parse(text.trim().split("\n").pop()!) as Phase[];
}

/**
 * Milliseconds after the load dropped until the first 100 ms window whose p99 is within 1.5x the idle p99 (+2 ms);
 * single later windows may still stray (the phase's own p99 is reported beside it).
 */
function recovery(after: Phase, idleP99: number): number | null {
  const limit = idleP99 * 1.5 + 2;
  const w = after.windows;
  const i = w.findIndex((x) => (x.p99 ?? 0) <= limit);
  return i < 0 ? null : w[i]!.atMs - w[0]!.atMs + 100;
}

const results: { name: string; r: Awaited<ReturnType<typeof run>> }[] = [];
for (const w of WORKLOADS) {
  results.push({ name: `${w.name}, shedding on (target 20 ms)`, r: await run(true, w) });
  results.push({ name: `${w.name}, shedding off`, r: await run(false, w) });
}
const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)}%`;
const p99 = (xs: number[]) => (xs.length ? Float64Array.from(xs).sort()[Math.floor(0.99 * (xs.length - 1))]!.toFixed(1) : "-");
const row = (name: string, r: Awaited<ReturnType<typeof run>>) => {
  const rec = recovery(r.after, r.idle.ok.p99 ?? 0);
  return [
    name,
    r.capacity,
    r.overload.rate,
    r.overload.okPerSecond,
    `${r.overload.ok.p50} / ${r.overload.ok.p99} / ${r.overload.ok.max} ms`,
    `${r.overload.byStatus["503"] ?? 0} (${pct(r.overload.byStatus["503"] ?? 0, r.overload.sent)}), p50 / p99 ${r.overload.shed.p50 ?? "-"} / ${r.overload.shed.p99 ?? "-"} ms`,
    r.overload.unanswered,
    `${r.idle.ok.p99} ms`,
    `${rec === null ? "not within 5 s" : `${rec} ms`} (p99 of the 5 s: ${r.after.ok.p99} ms)`,
    `${r.rss0.toFixed(0)} -> ${r.rssMax.toFixed(0)} MB`,
    `${p99(r.kept)} ms (${Object.entries(r.keptStatuses)
      .map(([s, n]) => `${n}x${s}`)
      .join(", ")})`,
  ];
};
const md = [
  `${machine()}; the built binary on loopback serving one of two workloads over 10,000 objects: \`GET /item?kind=k7\` with \`Range: objects=0-19\` (an indexed 20-row query) and \`GET /item?n[lt]=5000\` with \`Range: objects=0-199\` (a 200-row page of an indexed range); the generator (scripts/bench/open-loop.ts, HTTP/1.1 pipelined on 64 connections, latency from each request's due time) on the same 2 cores. Capacity: closed loop at full speed for 10 s. Then an open loop at ${factor}x the capacity for ${seconds} s and a quarter of the capacity for 5 s after; idle p99 is that quarter load before the overload. Admin calls (GET /_admin/api/status, answered 401 without a session: the point is that they are answered) every 0.5 s during the overload.`,
  "",
  table(
    [
      "workload, shedding",
      "capacity req/s",
      "offered req/s",
      "2xx/s",
      "2xx p50 / p99 / max",
      "503 (share), 503 p50 / p99",
      "unanswered",
      "idle p99",
      "p99 back to idle after the drop to a quarter",
      "RSS",
      "admin call p99",
    ],
    results.map((x) => row(x.name, x.r)),
  ),
].join("\n");
console.log(md);
if (values.write) writeSection("overload", md);
