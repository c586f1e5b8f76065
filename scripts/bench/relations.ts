// Counters, files and cascades against the built binary: increments/s on one hot object at concurrency 50
// (and that none is lost), upload and download throughput of a 1 MB file, and cascade-deleting 100 parents
// with 10 children each. Usage: bun run scripts/bench/relations.ts [--seconds 5] [--build] [--write]

import { parseArgs } from "node:util";
import { formatUpload } from "../../src/files/upload.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type Tool } from "./load.ts";
import { startBenchServer } from "./server.ts";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "5" }, tool: { type: "string" }, build: { type: "boolean", default: false }, write: { type: "boolean", default: false }, binary: { type: "string" } },
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
  await server.putSchema("parent", { fields: { name: { type: "string" }, children: { type: "relationship", schema: "child", many: true } } });

  // Increments on one hot object.
  await server.seed("counter", 1, () => ({ counter_id: "hot", n: 0 }));
  const inc = await runLoad({ base: server.url, method: "PUT", paths: ["/counter/hot"], headers, body: JSON.stringify({ "n[inc]": 1 }), connections: 50, seconds }, tool);
  const final = ((await (await fetch(`${server.url}/counter/hot`, { headers })).json()) as { n: number }).n;
  const lost = inc.requests - inc.errors - final;
  log(`increments: ${inc.rps.toFixed(0)}/s, ${inc.requests} sent, ${inc.errors} errors, counter ${final}, lost ${lost}`);
  rows.push(["PUT {\"n[inc]\": 1} on one object, 50 connections", Math.round(inc.rps), inc.p50, inc.p99, `${inc.requests} sent, ${inc.errors} errors, final value ${final}`]);
  checks.push(["increments on one hot object at c=50 >= 2,000/s", `${inc.rps.toFixed(0)}/s`, inc.rps >= 2000 ? "met" : "MISSED"]);
  checks.push(["increments lost", `${lost} (counter ${final} = ${inc.requests - inc.errors} successful requests)`, lost === 0 ? "met" : "MISSED"]);

  // 1 MB files: upload (POST with the seed's base64 format) and download (GET /_files/...).
  const mb = new Uint8Array(1024 * 1024).map((_, i) => (i * 7919) & 255);
  const body = JSON.stringify({ title: "one megabyte", file: formatUpload("application/octet-stream", "blob.bin", mb) });
  const up = await runLoad({ base: server.url, method: "POST", paths: ["/doc"], headers, body, connections: 4, seconds }, tool);
  log(`upload: ${up.rps.toFixed(1)}/s`);
  rows.push(["upload 1 MB file (POST /doc, base64 body 1.33 MB), 4 connections", up.rps.toFixed(1), up.p50, up.p99, `${(up.rps).toFixed(1)} MB/s of file data`]);
  const one = (await (await fetch(`${server.url}/doc`, { method: "POST", headers, body })).json()) as { file: string };
  const filePath = new URL(one.file).pathname;
  const down = await runLoad({ base: server.url, method: "GET", paths: [filePath], headers: {}, connections: 4, seconds }, tool);
  log(`download: ${down.rps.toFixed(1)}/s`);
  rows.push(["download 1 MB file (GET /_files/...), 4 connections", down.rps.toFixed(1), down.p50, down.p99, `${(down.rps).toFixed(1)} MB/s`]);
  checks.push(["1 MB upload / download throughput", `${up.rps.toFixed(0)} / ${down.rps.toFixed(0)} MB/s`, "-"]);

  // Cascade delete: 100 parents with 10 children each.
  for (let p = 0; p < 100; p++) {
    await fetch(`${server.url}/parent`, { method: "POST", headers, body: JSON.stringify({ parent_id: `p${p}`, name: `parent ${p}` }) });
    const r = await fetch(`${server.url}/parent/p${p}/children`, { method: "POST", headers, body: JSON.stringify(Array.from({ length: 10 }, (_, c) => ({ child_id: `p${p}c${c}`, name: `child ${c}` }))) });
    if (!r.ok) throw new Error(await r.text());
  }
  const started = performance.now();
  for (let p = 0; p < 100; p++) {
    const keys = Array.from({ length: 10 }, (_, c) => `p${p}c${c}`).join(",");
    const a = await fetch(`${server.url}/parent/p${p}/children/${keys}`, { method: "DELETE", headers: { ...headers, "x-service-cascadedelete": "true" } });
    const b = await fetch(`${server.url}/parent/p${p}`, { method: "DELETE", headers });
    if (!a.ok || !b.ok) throw new Error("cascade delete failed");
  }
  const elapsed = performance.now() - started;
  const left = ((await (await fetch(`${server.url}/child`, { headers: { ...headers, range: "objects=0-0" } })).json()) as unknown[]).length;
  log(`cascade: ${elapsed.toFixed(0)} ms, children left ${left}`);
  rows.push(["cascade delete 100 parents x 10 children (200 requests, one client)", "", elapsed, "", `${left} children left`]);
  checks.push(["cascade delete of 100 parents with 10 children each <= 2 s", `${(elapsed / 1000).toFixed(2)} s`, elapsed <= 2000 && left === 0 ? "met" : "MISSED"]);

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
