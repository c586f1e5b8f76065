// Scale-out benchmark: GET by key, create, and a 20-row query on one node with the embedded store, one node on a
// libSQL server (sqld on loopback), and two nodes on that sqld behind HAProxy, all in the same run against the
// built binary; plus the latency the remote store adds per request (p50 at concurrency 1).
// Usage: bun run scripts/bench/scaleout.ts [--seconds 5] [--objects 10000] [--tool wrk|autocannon] [--build]
//        [--binary path] [--write]

import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort, startLoopbackProcess } from "../../tests/helpers/loopback-process.ts";
import { startSqld } from "../../tests/helpers/sqld.ts";
import { type BenchServer, startBenchServer } from "./server.ts";
import { ROOT, ensureBinary, machine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type LoadResult, type Tool } from "./load.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    objects: { type: "string", default: "10000" },
    tool: { type: "string" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const seconds = Math.min(60, Math.max(1, Number(values.seconds)));
const objects = Math.min(100_000, Math.max(1000, Number(values.objects)));
const tool = (values.tool as Tool | undefined) ?? defaultTool();
const exe = values.binary ?? ensureBinary(values.build!);

const SCHEMA = { fields: { title: { type: "string" }, n: { type: "integer" }, done: { type: "boolean" } } };
const body = JSON.stringify({ title: "created by the benchmark", n: 7, done: false });
const rows: (string | number)[][] = [];
const results = new Map<string, LoadResult>();

async function measure(setup: string, base: string, headers: Record<string, string>, ids: string[]): Promise<void> {
  const gets = ids.map((id) => `/bench/${id}`);
  const queries = Array.from({ length: 50 }, (_, i) => `/bench?${new URLSearchParams({ "n[gte]": String(i * 100) })}`);
  const cases: [string, "GET" | "POST", string[], number, Record<string, string>, string?][] = [
    ["GET by key", "GET", gets, 1, headers],
    ["GET by key", "GET", gets, 50, headers],
    // Creates go to a schema of their own, so every setup queries the same 10,000 rows.
    ["create (POST)", "POST", ["/created"], 50, headers, body],
    ["20-row query", "GET", queries, 50, { ...headers, range: "objects=0-19", "x-service-orderby": "n" }],
  ];
  for (const [name, method, paths, c, h, b] of cases) {
    const r = await runLoad({ base, method, paths, headers: h, body: b, connections: c, seconds }, tool);
    results.set(`${setup}|${name}|${c}`, r);
    rows.push([setup, name, c, Math.round(r.rps), r.p50, r.p99, r.errors]);
    console.error(
      `${setup} ${name} c=${c}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms errors ${r.errors}`,
    );
  }
}

async function seeded(server: BenchServer): Promise<string[]> {
  await server.putSchema("bench", SCHEMA);
  await server.putSchema("created", SCHEMA);
  return server.seed("bench", objects, (i) => ({ title: `object ${i}`, n: i, done: i % 2 === 0 }));
}

const cleanup: (() => Promise<unknown>)[] = [];
try {
  // 1. The embedded default.
  const embedded = await startBenchServer(exe);
  cleanup.push(() => embedded.stop());
  await measure("1 node, embedded", embedded.url, embedded.headers, await seeded(embedded));
  await embedded.stop();
  cleanup.pop();

  // 2. One node on sqld.
  const sqld = await startSqld({ namespaces: true });
  cleanup.push(() => sqld.stop());
  const storeEnv = { BURROW_STORE: sqld.url, BURROW_STORE_ADMIN_URL: sqld.adminUrl!, BURROW_STORE_NAMESPACE: "bench" };
  const a = await startBenchServer(exe, { env: storeEnv });
  cleanup.push(() => a.stop());
  const ids = await seeded(a);
  await measure("1 node on sqld", a.url, a.headers, ids);

  // 3. Two nodes on sqld behind HAProxy.
  const b = await startBenchServer(exe, { env: storeEnv });
  cleanup.push(() => b.stop());
  const haproxyBin = execFileSync("node", [join(ROOT, "scripts/install-haproxy.mjs")], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  const port = freePort();
  const cfg = join(a.dir, "haproxy.cfg");
  writeFileSync(
    cfg,
    `global\n  maxconn 4000\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 30s\n  timeout server 30s\n  option http-keep-alive\n` +
      `frontend api\n  bind 127.0.0.1:${port}\n  default_backend nodes\nbackend nodes\n  balance roundrobin\n  option httpchk GET /_health\n` +
      [a, b].map((n, i) => `  server n${i} ${new URL(n.url).host} check inter 1s`).join("\n") +
      "\n",
  );
  const lbUrl = `http://127.0.0.1:${port}`;
  const lb = await startLoopbackProcess({
    name: "haproxy",
    argv: () => [haproxyBin, "-f", cfg, "-db"],
    ready: async () => (await fetch(`${lbUrl}/_health`)).ok,
  });
  cleanup.push(() => lb.stop());
  await Bun.sleep(1500); // both nodes marked up
  await measure("2 nodes on sqld, HAProxy", lbUrl, a.headers, ids);

  const added = (results.get("1 node on sqld|GET by key|1")!.p50 - results.get("1 node, embedded|GET by key|1")!.p50).toFixed(2);
  const added20 = (results.get("1 node on sqld|20-row query|50")!.p50 - results.get("1 node, embedded|20-row query|50")!.p50).toFixed(2);
  const md = [
    `## Scale-out: embedded store, one node on sqld, two nodes behind HAProxy`,
    ``,
    `${machine()}; \`bun run scripts/bench/scaleout.ts\` (${tool}, ${seconds} s per case, ${objects} objects; sqld, HAProxy, the nodes and the load generator share the machine's 2 cores).`,
    ``,
    table(["setup", "workload", "connections", "req/s", "p50 ms", "p99 ms", "errors"], rows),
    ``,
    `Latency the remote store adds to a GET by key at concurrency 1 (p50): ${added} ms; to a 20-row query at 50 connections (p50): ${added20} ms.`,
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("scaleout", md);
} finally {
  for (const c of cleanup.reverse()) await c().catch(() => {});
}
