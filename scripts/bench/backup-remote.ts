// Backups on a libSQL server: a Burrow node on sqld (--store) with a development database of --rows objects
// (~1 KB each), then write latency while nothing runs (baseline), while POST /_admin/api/backups copies the three
// databases row by row from sqld, and while `burrow backup --store` does the same from another process; then
// `burrow restore --store` of that backup onto new namespaces, and into a data directory. Writes are sent open-loop
// at a fixed rate, each timed from when it was due. Bounded in count and time.
// Usage: bun run scripts/bench/backup-remote.ts [--rows 300000] [--rate 100] [--baseline 5] [--write]

import { createClient } from "@libsql/client/http";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tempDir } from "../../tests/helpers/app.ts";
import { runCli, startServerProcess, type ServerProcess } from "../../tests/helpers/spawn.ts";
import { startSqld, type Sqld } from "../../tests/helpers/sqld.ts";
import { duringAction } from "./write-loop.ts";
import { machine, table, writeSection } from "./env.ts";
import { SOURCE, adminHeaders, apiPost, createSchemas, fillBigSql, nodeEnv } from "./backup-node.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "300000" },
    rate: { type: "string", default: "100" },
    baseline: { type: "string", default: "5" },
    write: { type: "boolean", default: false },
  },
});
const ROWS = Math.min(5_000_000, Math.max(1000, Number(values.rows)));
const RATE = Math.min(500, Math.max(10, Number(values.rate)));
const BASELINE_S = Math.min(60, Math.max(2, Number(values.baseline)));
const PHASE_MAX_MS = 10 * 60_000;

const dir = tempDir("burrow-bench-backup-remote-");
const log = (s: string) => process.stderr.write(`${s}\n`);

let sqld: Sqld | null = null;
let server: ServerProcess | null = null;
try {
  sqld = await startSqld({ namespaces: true });
  const store = { BURROW_STORE: sqld.url, BURROW_STORE_ADMIN_URL: sqld.adminUrl!, BURROW_STORE_NAMESPACE: "bench" };
  const env = nodeEnv(join(dir, "node"), store);
  const post = (path: string, body: unknown) => apiPost(server!.url, path, body);

  server = await startServerProcess(SOURCE, env, { serverDefaults: true });
  await createSchemas(server.url, { title: "seed", body: "seed", n: 0.5 });
  // Fill o_big on the server directly (20,000 rows a statement).
  const header = Buffer.from("bench-development").toString("base64").replace(/=+$/, "");
  const dev = createClient({ url: sqld.url, fetch: (r: Request) => (r.headers.set("x-namespace-bin", header), fetch(r)) });
  const t0 = performance.now();
  for (let done = 0; done < ROWS; ) {
    const n = Math.min(20_000, ROWS - done);
    await dev.execute(fillBigSql(n, 500, true));
    done += n;
  }
  dev.close();
  log(`filled o_big with ${ROWS} rows in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

  const auth = await adminHeaders(server.url);

  const during = (name: string, action: () => Promise<string>) =>
    duringAction((i, due) => post("/tick", { seq: i, due: Math.round(due) }), { rate: RATE, maxMs: PHASE_MAX_MS, log }, name, action);

  const rows: (string | number)[][] = [];
  rows.push(await during("no backup (baseline)", async () => (await Bun.sleep(BASELINE_S * 1000), "")));
  let file = "";
  rows.push(
    await during("POST /_admin/api/backups", async () => {
      const r = await fetch(`${server!.url}/_admin/api/backups`, {
        method: "POST",
        headers: auth,
        body: "{}",
        signal: AbortSignal.timeout(PHASE_MAX_MS),
      });
      const b = (await r.json()) as { size: number; durationMs: number; file: string; error?: string };
      if (r.status !== 201) throw new Error(`backup failed: ${b.error}`);
      file = join(dir, "node", b.file);
      return `${(b.size / 1024 ** 2).toFixed(0)} MB in ${(b.durationMs / 1000).toFixed(1)} s (${Math.round(ROWS / (b.durationMs / 1000))} rows/s)`;
    }),
  );
  rows.push(
    await during("`burrow backup --store` (another process)", async () => {
      const out = join(dir, "cli.tar");
      const r = await runCli(["backup", "--dir", join(dir, "cli"), "--out", out], { ...store, BURROW_LOG_LEVEL: "warn" });
      if (r.code !== 0) throw new Error(`burrow backup failed: ${r.stderr}`);
      return r.stderr
        .trim()
        .split("\n")
        .at(-1)!
        .replace(/^backup: /, "");
    }),
  );
  // Deleted only now: removing a file this size blocks this process's event loop (the write loop) for a while.
  rmSync(join(dir, "cli.tar"), { force: true });
  await server.stop();
  server = null;

  const restores: (string | number)[][] = [];
  for (const [name, args, extra] of [
    [
      "`burrow restore --store` onto new namespaces",
      ["restore", file, "--dir", join(dir, "restored-node")],
      { ...store, BURROW_STORE_NAMESPACE: "restored" },
    ],
    ["`burrow restore` into a data directory", ["restore", file, "--dir", join(dir, "restored-dir")], {}],
  ] as const) {
    const t = performance.now();
    const r = await runCli([...args], { ...extra, BURROW_LOG_LEVEL: "warn" });
    if (r.code !== 0) throw new Error(`${name} failed: ${r.stderr}`);
    const s = (performance.now() - t) / 1000;
    restores.push([name, `${s.toFixed(1)} s`, `${Math.round(ROWS / s)} rows/s`]);
    log(`${name}: ${s.toFixed(1)} s`);
  }

  const md = [
    "### Backups on a libSQL server (scripts/bench/backup-remote.ts)",
    "",
    `${machine()}. One node from source on sqld ${sqld.url.replace(/:\d+$/, "")} (loopback), development holding ${ROWS} objects of ~1 KB ` +
      `(${(statSync(file).size / 1024 ** 2).toFixed(0)} MB backup file). Writes \`POST /tick\` sent open-loop at ${RATE}/s, each timed from when it was due; latencies in ms over the writes due while the action ran.`,
    "",
    table(["while", "took", "writes", "p50", "p99", "max", "failed", "result", "steal"], rows),
    "",
    table(["restore", "took", "rate"], restores),
    "",
    "The backup holds every writer off only while the three read transactions take their snapshots (one write transaction per database on sqld, as for the embedded store), then pages each table out in key order (2,000 rows a request) into local SQLite files on the backup worker, and packs them as an embedded backup is packed. " +
      "A restore onto the server runs one write transaction per namespace (multi-row INSERTs of up to 500 rows), committed together at the end. " +
      "Where the time goes: sqld producing the pages (100,000 rows of 1 KB read over one stream: 4.1 s waiting for sqld, 0.13 s parsing in Bun; ~23,000 rows/s); the local SQLite inserts add ~15%. " +
      "Reading a large table over two streams at once read 1.5x faster (24,300 rows/s) but raised the writes' p99 during the backup from 9 to 72 ms on this machine, where sqld shares the two cores with the node, so a backup reads each database over one stream. " +
      "A restore onto the server is bounded by sqld applying the INSERTs in one write transaction at a time (14,000 rows/s).",
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("backup-remote", md);
} finally {
  await server?.stop();
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
}
