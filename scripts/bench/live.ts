// Live data against the built binary, on loopback, in one run (docs/api/live.md): N open SSE streams with one
// subscription each (raw-socket clients in a second process, scripts/bench/live-clients.ts) - the server's memory per
// stream and GET by key with them open vs none; one write matching all N (time until the last subscriber has it);
// sustained deliveries per second; creates per second with 1,000 subscriptions open (each create matching one) vs
// none; a replay of 10,000 missed events; a kill -9 during a burst (every acknowledged write reaches every stream
// once). Then, in this process, the hub's cost per write as subscribers grow, beside the cost of one query per
// subscriber per write (the design PocketBase's realtime uses).
// Usage: bun run scripts/bench/live.ts [--streams 10000] [--writes 30] [--seconds 5] [--build] [--binary path] [--write]

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { runLoad } from "./load.ts";
import { startBenchServer, type BenchServer } from "./server.ts";
import { killDuringBurst } from "./live-kill.ts";
import { hubCostPerWrite } from "./live-hub-cost.ts";
import { startClients } from "./live-client-process.ts";

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    writes: { type: "string", default: "30" },
    seconds: { type: "string", default: "5" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const N = Math.min(15_000, Math.max(10, Number(values.streams)));
const WRITES = Math.min(200, Math.max(3, Number(values.writes)));
const SECONDS = Math.min(60, Math.max(1, Number(values.seconds)));
const exe = values.binary ?? ensureBinary(values.build!);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const now = () => performance.timeOrigin + performance.now();
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

/** Streams with one subscription each; `spec(i)` is stream i's subscription. */
async function makeStreams(server: BenchServer, n: number, spec: (i: number) => unknown): Promise<[string, string][]> {
  const out: [string, string][] = [];
  const one = async (i: number) => {
    const s = (await (await fetch(`${server.url}/_live/streams`, { method: "POST", headers: server.headers })).json()) as {
      stream: string;
      token: string;
    };
    const r = await fetch(`${server.url}/_live/streams/${s.stream}/subscriptions/s`, {
      method: "PUT",
      headers: server.headers,
      body: JSON.stringify(spec(i)),
    });
    if (!r.ok) throw new Error(`subscription: ${await r.text()}`);
    out[i] = [s.stream, s.token];
  };
  for (let i = 0; i < n; i += 64) await Promise.all(Array.from({ length: Math.min(64, n - i) }, (_, j) => one(i + j)));
  return out;
}

async function post(server: BenchServer, path: string, body: unknown): Promise<Response> {
  const r = await fetch(`${server.url}${path}`, { method: "POST", headers: server.headers, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r;
}

const rows: (string | number)[][] = [];
const server = await startBenchServer(exe, { logLevel: "warn" });
const clients = startClients();
try {
  await server.putSettings("development", { live: { streamsPerIp: 20_000 } });
  await server.putSchema("item", { fields: { tag: { type: "string" }, n: { type: "integer" }, mark: { type: "string" } } });
  await server.putSchema("solo", { fields: { n: { type: "integer" }, mark: { type: "string" } } });
  const keys = await server.seed("item", 10_000, (i) => ({ tag: "seed", n: i }));
  const gets = {
    base: server.url,
    method: "GET" as const,
    paths: keys.map((k) => `/item/${k}`),
    headers: server.headers,
    connections: 50,
    seconds: SECONDS,
  };

  // 1. Memory and GET by key, with N idle streams open vs none.
  await runLoad({ ...gets, seconds: 2 }); // warm-up
  const idleGet = await runLoad(gets);
  const rssBefore = rssOf(server.pid);
  const streams = await makeStreams(server, N, () => ({ schema: "item", query: "tag=all" }));
  const opened = await clients.ask({ cmd: "open", url: server.url, streams });
  await Bun.sleep(5000); // the garbage of connecting goes first (the collector runs on its own)
  const rssAfter = rssOf(server.pid);
  const openGet = await runLoad(gets);
  rows.push([
    "server RSS per open stream (subscription included)",
    `${((rssAfter - rssBefore) / N / 1024).toFixed(1)} KB`,
    `${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssAfter / 2 ** 20).toFixed(0)} MB for ${opened.open} streams`,
  ]);
  rows.push([
    `GET by key, c=50: ${N} streams open / none`,
    `${((openGet.rps / idleGet.rps) * 100).toFixed(1)}%`,
    `${Math.round(openGet.rps)} vs ${Math.round(idleGet.rps)} req/s (target ≥ 90%)`,
  ]);

  // 2. One write matching all N: time until the last subscriber has it.
  const lastMs: number[] = [];
  const allMs: number[] = [];
  for (let w = 0; w < WRITES; w++) {
    const marker = `m-${w}-x`;
    const watch = clients.ask({ cmd: "watch", marker, timeoutMs: 10_000 });
    await Bun.sleep(20);
    const t0 = now();
    await post(server, "/item", { tag: "all", mark: marker });
    const { times } = (await watch) as { times: number[] };
    if (times.length < N) throw new Error(`write ${w}: ${times.length} of ${N} subscribers got it`);
    const ms = times.map((t) => t - t0);
    lastMs.push(Math.max(...ms));
    allMs.push(...ms);
    await Bun.sleep(100);
  }
  rows.push([
    `one write matching all ${N}: until the last subscriber has it`,
    `p50 ${pct(lastMs, 50).toFixed(0)} ms, p99 ${pct(lastMs, 99).toFixed(0)} ms`,
    `over ${WRITES} writes (target p99 ≤ 250 ms); any one subscriber: p50 ${pct(allMs, 50).toFixed(0)} ms`,
  ]);

  // 3. Sustained deliveries: writes matching all N, back to back, for SECONDS.
  const before = (await clients.ask({ cmd: "count" })).events as number;
  const t1 = now();
  let written = 0;
  while (now() - t1 < SECONDS * 1000) {
    await post(server, "/item", { tag: "all" });
    written++;
  }
  // Until everything written has arrived (polled every 50 ms, at most 10 s): the rate counts delivery, not a fixed wait.
  const expected = before + written * N;
  let after = (await clients.ask({ cmd: "count" })) as { events: number; connected: number };
  for (const end = now() + 10_000; after.events < expected && now() < end; ) {
    await Bun.sleep(50);
    after = (await clients.ask({ cmd: "count" })) as { events: number; connected: number };
  }
  const secs = (now() - t1) / 1000;
  rows.push([
    "sustained deliveries to subscribers",
    `${Math.round((after.events - before) / secs).toLocaleString("en")} events/s`,
    `${written} writes × ${N} streams in ${secs.toFixed(1)} s, ${after.connected} still connected (target ≥ 100,000/s)`,
  ]);
  await clients.ask({ cmd: "close" });
  clients.stop();

  // 4. Creates with 1,000 subscriptions open (each create matches one of them) vs none.
  const creates = {
    base: server.url,
    method: "POST" as const,
    paths: ["/solo"],
    headers: server.headers,
    connections: 50,
    seconds: SECONDS,
  };
  const bodies = (n: number) => JSON.stringify({ n, mark: "c" });
  const noSubs = await runLoad({ ...creates, body: bodies(5) });
  const thousand = startClients();
  const subs = await makeStreams(server, 1000, (i) => ({ schema: "solo", query: `n=${i}` }));
  await thousand.ask({ cmd: "open", url: server.url, streams: subs });
  const withSubs = await runLoad({ ...creates, body: bodies(5) });
  await Bun.sleep(1500); // what was written arrives
  const delivered = (await thousand.ask({ cmd: "count" })).events as number;
  thousand.stop();
  rows.push([
    "creates, c=50: 1,000 subscriptions open (each create matches one) / none",
    `${((withSubs.rps / noSubs.rps) * 100).toFixed(1)}%`,
    `${Math.round(withSubs.rps)} vs ${Math.round(noSubs.rps)} creates/s, ${delivered} events delivered (target ≥ 85%)`,
  ]);

  // 5. Replay: 10,000 events missed while disconnected, received after a reconnect.
  const [rid, rtoken] = (await makeStreams(server, 1, () => ({ schema: "solo", query: "mark=replay" })))[0]!;
  const first = await fetch(`${server.url}/_live/streams/${rid}?token=${rtoken}`);
  const text = new TextDecoder();
  let got = "";
  const r0 = first.body!.getReader();
  while (!got.includes("\nid: ")) got += text.decode((await r0.read()).value);
  const lastId = /id: (\d+)\n\n/.exec(got)![1];
  await r0.cancel();
  for (let i = 0; i < 10; i++)
    await post(
      server,
      "/solo",
      Array.from({ length: 1000 }, (_, j) => ({ n: i * 1000 + j, mark: "replay" })),
    );
  const tr = now();
  const again = await fetch(`${server.url}/_live/streams/${rid}?token=${rtoken}`, { headers: { "last-event-id": lastId! } });
  const r1 = again.body!.getReader();
  let count = 0;
  let tail = "";
  while (count < 10_000) {
    const r = await r1.read();
    if (r.done) break;
    tail += text.decode(r.value);
    const parts = tail.split("event: create\n");
    count += parts.length - 1;
    tail = parts[parts.length - 1]!;
  }
  const replayMs = now() - tr;
  await r1.cancel();
  rows.push(["replay of 10,000 missed events after a reconnect", `${replayMs.toFixed(0)} ms`, `${count} events received (target ≤ 1 s)`]);
} finally {
  clients.stop();
  await server.stop();
}

// 6. kill -9 during a burst.
const kill = await killDuringBurst(exe);
rows.push([
  `kill -9 during a burst, ${kill.streams} streams`,
  `${kill.missing} missed, ${kill.duplicates} twice`,
  `${kill.acknowledged} writes acknowledged (${kill.beforeKill} before the kill), each to every stream; ${kill.reconnectMs.toFixed(0)} ms until all were back`,
]);

// 7. The hub's cost per write as subscribers grow, beside a query per subscriber per write.
const cost = await hubCostPerWrite([1, 100, 10_000]);

const md = [
  `## Live data (scripts/bench/live.ts)`,
  "",
  `${machine()}; built binary, loopback; SSE clients on raw sockets in a second process (scripts/bench/live-clients.ts); ${N} streams.`,
  "",
  table(["measure", "result", "detail"], rows),
  "",
  "Cost of one write for its subscribers (in process; all subscribers match, so each gets an event):",
  "",
  table(["subscribers", "Burrow's hub: one predicate per subscriber", "one SQL query per subscriber (PocketBase's design)"], cost),
  "",
  "The query-per-subscriber column runs on the embedded store in this process, its cheapest case: each check is a",
  "point query on the written row. PocketBase's realtime runs one such rule query per subscriber for every write; its",
  "cost grows with subscribers times writes, where Burrow's grows with the subscribers an object can concern (filters",
  "with a `field=value` condition are looked up, not scanned) and never waits on the database per subscriber.",
].join("\n");
console.log(md);
if (values.write) writeSection("live", md);
