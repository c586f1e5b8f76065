// Counters, files and cascades against the built binary: increments/s on one hot object at concurrency 50
// (and that none is lost), upload and download throughput of a 1 MB file, and cascade-deleting 100 parents
// with 10 children each. Usage: bun run scripts/bench/relations.ts [--seconds 5] [--build] [--write]

import { parseArgs } from "node:util";
import { formatUpload } from "../../src/files/upload.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type Tool } from "./load.ts";
import { startBenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    tool: { type: "string" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const seconds = Math.min(60, Math.max(1, Number(values.seconds)));
const tool = (values.tool as Tool | undefined) ?? defaultTool();
const server = await startBenchServer(values.binary ?? ensureBinary(values.build!));
const headers = server.headers;
const rows: (string | number)[][] = [];
const checks: string[][] = [];
const log = (s: string) => console.error(s);

try {
  await server.putSchema("counter", { fields: { n: { type: "integer" } } });
  await server.putSchema("doc", { fields: { title: { type: "string" }, file: { type: "binary" } } });
  await server.putSchema("child", { fields: { name: { type: "string" } } });
  await server.putSchema("parent", {
    fields: { name: { type: "string" }, children: { type: "relationship", schema: "child", many: true } },
  });

  // Increments on one hot object.
  await server.seed("counter", 1, () => ({ counter_id: "hot", n: 0 }));
  const inc = await runLoad(
    { base: server.url, method: "PUT", paths: ["/counter/hot"], headers, body: JSON.stringify({ "n[inc]": 1 }), connections: 50, seconds },
    tool,
  );
  const afterLoad = ((await (await fetch(`${server.url}/counter/hot`, { headers })).json()) as { n: number }).n;
  // wrk stops with requests in flight that the server still applies, so its count is a lower bound: the
  // counter must be at least the successes and at most that plus one request per connection.
  const successes = inc.requests - inc.errors;
  const consistent = afterLoad >= successes && afterLoad - successes <= 50;
  log(`increments: ${inc.rps.toFixed(0)}/s, ${inc.requests} completed, ${inc.errors} errors, counter ${afterLoad}`);
  rows.push([
    'PUT {"n[inc]": 1} on one object, 50 connections',
    Math.round(inc.rps),
    inc.p50,
    inc.p99,
    `${successes} completed OK, counter ${afterLoad} (+${afterLoad - successes} in flight at stop)`,
  ]);
  checks.push(["increments on one hot object at c=50 >= 2,000/s", `${inc.rps.toFixed(0)}/s`, inc.rps >= 2000 ? "met" : "MISSED"]);

  // An exact count: 10,000 increments from 50 concurrent clients, then the counter must be exactly 10,000.
  await server.seed("counter", 1, () => ({ counter_id: "exact", n: 0 }));
  const exactStart = performance.now();
  let failures = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      for (let i = 0; i < 200; i++) {
        const r = await fetch(`${server.url}/counter/exact`, { method: "PUT", headers, body: JSON.stringify({ "n[inc]": 1 }) });
        if (!r.ok) failures++;
        await r.arrayBuffer();
      }
    }),
  );
  const exactMs = performance.now() - exactStart;
  const exact = ((await (await fetch(`${server.url}/counter/exact`, { headers })).json()) as { n: number }).n;
  log(`exact: ${exact} after 10,000 increments, ${failures} failures, ${exactMs.toFixed(0)} ms`);
  rows.push([
    "10,000 increments from 50 concurrent clients (fetch), then read",
    Math.round(10_000 / (exactMs / 1000)),
    "",
    "",
    `counter ${exact}, ${failures} failed`,
  ]);
  checks.push([
    "increments lost",
    `${10_000 - exact} of 10,000 (wrk run consistent: ${consistent ? "yes" : "no"})`,
    exact === 10_000 && failures === 0 && consistent ? "met" : "MISSED",
  ]);

  // 1 MB files: upload (POST with the binary upload format of docs/api/datastore.md#binary-fields) and download (GET /_files/...).
  const mb = new Uint8Array(1024 * 1024).map((_, i) => (i * 7919) & 255);
  const body = JSON.stringify({ title: "one megabyte", file: formatUpload("application/octet-stream", "blob.bin", mb) });
  const up = await runLoad({ base: server.url, method: "POST", paths: ["/doc"], headers, body, connections: 4, seconds }, tool);
  log(`upload: ${up.rps.toFixed(1)}/s`);
  rows.push([
    "upload 1 MB file (POST /doc, base64 body 1.33 MB), 4 connections",
    up.rps.toFixed(1),
    up.p50,
    up.p99,
    `${(up.rps).toFixed(1)} MB/s of file data`,
  ]);
  const one = (await (await fetch(`${server.url}/doc`, { method: "POST", headers, body })).json()) as { file: string };
  const filePath = new URL(one.file).pathname;
  const down = await runLoad({ base: server.url, method: "GET", paths: [filePath], headers: {}, connections: 4, seconds }, tool);
  log(`download: ${down.rps.toFixed(1)}/s`);
  rows.push([
    "download 1 MB file (GET /_files/...), 4 connections",
    down.rps.toFixed(1),
    down.p50,
    down.p99,
    `${(down.rps).toFixed(1)} MB/s`,
  ]);
  checks.push(["1 MB upload / download throughput", `${up.rps.toFixed(0)} / ${down.rps.toFixed(0)} MB/s`, "-"]);

  // Cascade delete: 100 parents with 10 children each.
  for (let p = 0; p < 100; p++) {
    await fetch(`${server.url}/parent`, { method: "POST", headers, body: JSON.stringify({ parent_id: `p${p}`, name: `parent ${p}` }) });
    const r = await fetch(`${server.url}/parent/p${p}/children`, {
      method: "POST",
      headers,
      body: JSON.stringify(Array.from({ length: 10 }, (_, c) => ({ child_id: `p${p}c${c}`, name: `child ${c}` }))),
    });
    if (!r.ok) throw new Error(await r.text());
  }
  const started = performance.now();
  for (let p = 0; p < 100; p++) {
    const keys = Array.from({ length: 10 }, (_, c) => `p${p}c${c}`).join(",");
    const a = await fetch(`${server.url}/parent/p${p}/children/${keys}`, {
      method: "DELETE",
      headers: { ...headers, "x-service-cascadedelete": "true" },
    });
    const b = await fetch(`${server.url}/parent/p${p}`, { method: "DELETE", headers });
    if (!a.ok || !b.ok) throw new Error("cascade delete failed");
  }
  const elapsed = performance.now() - started;
  const left = ((await (await fetch(`${server.url}/child`, { headers: { ...headers, range: "objects=0-0" } })).json()) as unknown[]).length;
  log(`cascade: ${elapsed.toFixed(0)} ms, children left ${left}`);
  rows.push(["cascade delete 100 parents x 10 children (200 requests, one client)", "", elapsed, "", `${left} children left`]);
  checks.push([
    "cascade delete of 100 parents with 10 children each <= 2 s",
    `${(elapsed / 1000).toFixed(2)} s`,
    elapsed <= 2000 && left === 0 ? "met" : "MISSED",
  ]);

  const md = [
    "### Counters, files, cascades (scripts/bench/relations.ts)",
    "",
    `${machine()}; load: ${tool}, ${seconds} s per row, built binary, loopback.`,
    "",
    table(["case", "req/s", "p50 ms", "p99 ms", "notes"], rows),
    "",
    "(For the cascade row the p50 column is the total time in ms.)",
    "",
    table(["target", "measured", ""], checks),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("relations", md);
} finally {
  await server.stop();
}
