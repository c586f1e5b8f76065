// Client library benchmark (built binary, loopback, bounded): in Node, requests per second of the client's
// MAC-signed GET by key against raw fetch with the same signing (alternating rounds, c=50), and the time from a
// write's answer to the client's live callback. The module is the one the server serves (/_sdk/burrow.js).
// Usage: bun run scripts/bench/sdk.ts [--seconds 3] [--rounds 6] [--build] [--write]

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { startBenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "6" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const SECONDS = Math.min(30, Math.max(1, Number(values.seconds)));
const ROUNDS = Math.min(20, Math.max(2, Number(values.rounds)));
const server = await startBenchServer(values.binary ?? ensureBinary(values.build!));
const dir = mkdtempSync(join(tmpdir(), "burrow-sdk-bench-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
try {
  await server.putSchema("bench", {
    fields: { title: { type: "string" }, n: { type: "integer" } },
    permissions: { create: "open", read: "open", update: "open", delete: "open" },
  });
  const ids = await server.seed("bench", 2000, (i) => ({ title: `object ${i}`, n: i }));
  await server.putSettings("development", { rateLimits: { ipPerMinute: 1_000_000 } });
  for (const u of ["bench", "bench2"])
    await fetch(`${server.url}/user`, {
      method: "POST",
      headers: server.headers,
      body: JSON.stringify({ username: u, password: "bench-password-1" }),
    });
  const file = join(dir, "burrow.mjs");
  writeFileSync(file, await (await fetch(`${server.url}/_sdk/burrow.js`)).text());
  const node = Bun.spawn(
    [
      "node",
      join(import.meta.dir, "sdk-node.mjs"),
      file,
      server.url,
      server.headers["x-service-api-key"]!,
      JSON.stringify(ids),
      String(SECONDS),
      String(ROUNDS),
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const out = await new Response(node.stdout).text();
  if ((await node.exited) !== 0) throw new Error(`the node side failed: ${out}`);
  const { results, delays } = JSON.parse(out.trim().split("\n").pop()!) as {
    results: Record<"client" | "fetch", { rps: number; failed: number }[]>;
    delays: number[];
  };
  const ratios = results.client.map((c, i) => c.rps / results.fetch[i]!.rps);
  const nodeVersion = Bun.spawnSync(["node", "--version"]).stdout.toString().trim();
  const md = [
    "## The client library (scripts/bench/sdk.ts)",
    "",
    `${machine()}; built binary, loopback; Node ${nodeVersion} importing /_sdk/burrow.js; c=50 in one process, ${SECONDS} s per run, ${ROUNDS} alternating rounds.`,
    "",
    table(
      ["measure", "result", "target"],
      [
        [
          "MAC-signed GET by key: the client / raw fetch with the same signing",
          `${(median(ratios) * 100).toFixed(1)}% (${ratios.map((r) => Math.round(r * 100)).join(" / ")}); client ${Math.round(median(results.client.map((r) => r.rps)))} req/s, fetch ${Math.round(median(results.fetch.map((r) => r.rps)))} req/s`,
          "overhead ≤ 10%",
        ],
        [
          "from a write's answer to the client's live callback",
          `p50 ${pct(delays, 50).toFixed(1)} ms, p99 ${pct(delays, 99).toFixed(1)} ms (${delays.length} of 50 writes)`,
          "-",
        ],
        ["failed requests", String([...results.client, ...results.fetch].reduce((n, r) => n + r.failed, 0)), "0"],
      ],
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("sdk", md);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
