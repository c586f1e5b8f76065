// Server CPU per GET by key, binaries side by side: every round starts each binary afresh (a process's own luck,
// its JIT and memory layout, moves its figure by several percent, so it is sampled again each round), seeds the
// same objects, warms it, then wrk (one thread, 50 connections) drives it while the server's user + system time
// from /proc is divided by the requests it answered. Finer than req/s on a shared machine (the client's CPU and
// the scheduler's choices drop out), so it resolves effects of a few percent that throughput runs cannot.
// Usage: bun run scripts/bench/cpu-per-request.ts <binary> <binary> [...] [--rounds 9] [--seconds 4] [--objects 1000]
//        [--labels a,b] [--target 2] [--write --section name --title text] [--no-pin]

import { parseArgs } from "node:util";
import { machine, processCpuSeconds, table, writeSection } from "./env.ts";
import { runLoad } from "./load.ts";
import { startBenchServer, type BenchServer } from "./server.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "9" },
    seconds: { type: "string", default: "4" },
    objects: { type: "string", default: "1000" },
    connections: { type: "string", default: "50" },
    "no-pin": { type: "boolean", default: false },
    labels: { type: "string" },
    target: { type: "string" },
    write: { type: "boolean", default: false },
    section: { type: "string", default: "cpu-per-request" },
    title: { type: "string", default: "Server CPU per GET by key (scripts/bench/cpu-per-request.ts)" },
  },
});
if (positionals.length < 2) throw new Error("give two or more binaries to compare (the first is the reference)");
const rounds = Math.min(25, Math.max(1, Number(values.rounds)));
const seconds = Math.min(20, Math.max(1, Number(values.seconds)));
const objects = Math.min(100_000, Math.max(1, Number(values.objects)));
const connections = Math.min(256, Math.max(1, Number(values.connections)));
/** Names for the table (comma-separated, in order), else the paths. */
const labels = values.labels ? values.labels.split(",") : positionals;
if (labels.length !== positionals.length) throw new Error("give one label per binary");
/** Percent over the first binary's CPU per request each other binary may use (optional). */
const target = values.target === undefined ? undefined : Number(values.target);
const pin = !values["no-pin"] && Bun.which("taskset") !== null;
if (pin) Bun.spawnSync(["taskset", "-p", "-c", "0", String(process.pid)], { stdout: "ignore" });

/** One round of one binary: a fresh server process (so each process's own luck, JIT and memory layout, is
 * sampled again every round), seeded, warmed, then measured. */
async function round(exe: string): Promise<{ us: number; rps: number }> {
  const s: BenchServer = await startBenchServer(exe);
  try {
    // The server (all its threads) on the second core, this script and wrk on the first: where the scheduler
    // puts them otherwise moves a process's figure by several percent.
    if (pin) Bun.spawnSync(["taskset", "-a", "-p", "-c", "1", String(s.pid)], { stdout: "ignore" });
    await s.putSchema("thing", { fields: { n: { type: "integer" }, label: { type: "string" } } });
    const paths = (await s.seed("thing", objects, (i) => ({ n: i, label: `thing ${i}` }))).map((k) => `/thing/${k}`);
    await runLoad({ base: s.url, method: "GET", paths, headers: s.headers, connections, seconds: 2 });
    const before = processCpuSeconds(s.pid)!;
    const res = await runLoad({ base: s.url, method: "GET", paths, headers: s.headers, connections, seconds });
    const used = processCpuSeconds(s.pid)! - before;
    if (res.errors) throw new Error(`${exe}: ${res.errors} errors in a round`);
    return { us: (used * 1e6) / res.requests, rps: res.rps };
  } finally {
    await s.stop();
  }
}

{
  const perRequest: number[][] = positionals.map(() => []);
  const rates: number[][] = positionals.map(() => []);
  for (let r = 0; r < rounds; r++) {
    // Alternate the order each round so neither binary always runs right after the other.
    const order = positionals.map((_, i) => i);
    if (r % 2) order.reverse();
    for (const i of order) {
      const { us, rps } = await round(positionals[i]!);
      perRequest[i]!.push(us);
      rates[i]!.push(rps);
    }
    console.error(`round ${r + 1}: ${positionals.map((_, i) => perRequest[i]!.at(-1)!.toFixed(2)).join(" / ")} us`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cpu = perRequest.map(median);
  const rps = rates.map(median);
  const md = [
    `### ${values.title}`,
    "",
    `${machine()}; wrk -t1 -c${connections} GET by key, a fresh server per round${pin ? " (pinned to one core, wrk to the other)" : ""}, warmed 2 s then measured ${seconds} s, ${rounds} interleaved rounds, ${objects} objects; CPU is the server's user + system time over the requests it answered.`,
    "",
    table(
      ["binary", "CPU per request (median)", "req/s (median)", "vs the first: CPU", "vs the first: req/s", "all rounds, µs"],
      positionals.map((_exe, i) => [
        labels[i]!,
        `${cpu[i]!.toFixed(2)} µs`,
        Math.round(rps[i]!),
        `${((cpu[i]! / cpu[0]!) * 100).toFixed(1)}%`,
        `${((rps[i]! / rps[0]!) * 100).toFixed(1)}%`,
        perRequest[i]!.map((v) => v.toFixed(1)).join(" / "),
      ]),
    ),
    ...(target === undefined
      ? []
      : [
          "",
          `Target: each binary within ${target}% of the first's CPU per request: ${positionals
            .slice(1)
            .map(
              (_, j) =>
                `${labels[j + 1]} ${((cpu[j + 1]! / cpu[0]! - 1) * 100).toFixed(1)}% ${cpu[j + 1]! / cpu[0]! <= 1 + target / 100 ? "met" : "MISSED"}`,
            )
            .join(", ")}.`,
        ]),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection(values.section!, md);
}
