// Online backup of a ~1 GB development.db while the server takes a steady stream of writes: write latency without a
// backup, during POST /_admin/api/backups, during `burrow backup` from another process, and (for comparison)
// during a plain VACUUM INTO of development.db from another process, which is what the backup does not use.
// Writes are sent open-loop at a fixed rate (one every 1000/rate ms, each timed from when it was due, so a stall
// shows in the latency of every write that was due during it). Bounded in count and time.
// Usage: bun run scripts/bench/backup.ts [--gb 1] [--rate 200] [--baseline 10] [--runs 3] [--write] [--keep]

import { Database } from "bun:sqlite";
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tempDir } from "../../tests/helpers/app.ts";
import { runCli, startServerProcess, type ServerProcess } from "../../tests/helpers/spawn.ts";
import { duringAction } from "./write-loop.ts";
import { machine, table, writeSection } from "./env.ts";
import { SOURCE, adminHeaders, apiPost, createSchemas, fillBigSql, nodeEnv } from "./backup-node.ts";

const { values } = parseArgs({
  options: {
    gb: { type: "string", default: "1" },
    rate: { type: "string", default: "200" },
    baseline: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
    write: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const GB = Math.min(8, Math.max(0.01, Number(values.gb)));
const RATE = Math.min(2000, Math.max(10, Number(values.rate)));
const BASELINE_S = Math.min(120, Math.max(2, Number(values.baseline)));
const RUNS = Math.min(10, Math.max(1, Number(values.runs)));
/** No phase runs longer than this; a backup that takes longer fails the run. */
const PHASE_MAX_MS = 10 * 60_000;

const dir = tempDir("burrow-bench-backup-");
const data = join(dir, "data");
const env = nodeEnv(data);
const log = (s: string) => process.stderr.write(`${s}\n`);

/** Creates the schemas through a server, then fills o_big directly with SQLite to ~GB gigabytes (4 KB text rows). */
async function build(): Promise<void> {
  const s = await startServerProcess(SOURCE, env, { serverDefaults: true });
  await createSchemas(s.url, { title: "seed", body: "seed" });
  await s.stop();
  const db = new Database(join(data, "development.db"));
  db.run("PRAGMA journal_mode=WAL");
  db.run("PRAGMA synchronous=OFF");
  const rows = Math.round((GB * 1024 ** 3) / 4200);
  const t0 = performance.now();
  for (let done = 0; done < rows; ) {
    const n = Math.min(20_000, rows - done);
    db.run(fillBigSql(n, 2000, false));
    done += n;
    log(`building: ${done} / ${rows} rows`);
  }
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  // Flush the gigabyte to disk now: left dirty in the page cache, the server's first checkpoint fsync would pay for it.
  const fd = openSync(join(data, "development.db"), "r+");
  fsyncSync(fd);
  closeSync(fd);
  log(
    `built development.db: ${(statSync(join(data, "development.db")).size / 1024 ** 3).toFixed(2)} GiB in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
}

/**
 * Files an action made, deleted once its row is measured: deleting a 1 GB file blocks this process's event loop
 * for ~180 ms (ext4 freeing its extents), which the write loop would count as a server stall.
 */
const afterRow: string[] = [];

function during(server: ServerProcess, name: string, action: () => Promise<string>): Promise<(string | number)[]> {
  const send = (i: number, due: number) => apiPost(server.url, "/tick", { seq: i, due: Math.round(due) });
  return duringAction(send, { rate: RATE, maxMs: PHASE_MAX_MS, log }, name, action, () => {
    for (const f of afterRow.splice(0)) rmSync(f, { force: true });
  });
}

let server: ServerProcess | null = null;
try {
  await build();
  server = await startServerProcess(SOURCE, env, { serverDefaults: true });
  const auth = await adminHeaders(server.url);
  const dbSize = statSync(join(data, "development.db")).size;
  const rows: (string | number)[][] = [];

  rows.push(
    await during(server, "no backup (baseline)", async () => {
      await Bun.sleep(BASELINE_S * 1000);
      return "";
    }),
  );
  let apiBackup = { size: 0, durationMs: 0 };
  for (let run = 1; run <= RUNS; run++)
    rows.push(
      await during(server, `POST /_admin/api/backups (${run} of ${RUNS})`, async () => {
        const r = await fetch(`${server!.url}/_admin/api/backups`, {
          method: "POST",
          headers: auth,
          body: "{}",
          signal: AbortSignal.timeout(PHASE_MAX_MS),
        });
        const b = (await r.json()) as { size: number; durationMs: number; error?: string };
        if (r.status !== 201) throw new Error(`backup failed: ${b.error}`);
        apiBackup = b;
        return `backup ${(b.size / 1024 ** 3).toFixed(2)} GiB in ${(b.durationMs / 1000).toFixed(1)} s`;
      }),
    );
  rows.push(
    await during(server, "`burrow version` (another process; control)", async () => {
      const r = await runCli(["version"]);
      if (r.code !== 0) throw new Error(`burrow version failed: ${r.stderr}`);
      return "starting a second Bun process, no backup";
    }),
  );
  rows.push(
    await during(server, "`burrow backup --out` (another process)", async () => {
      const out = join(dir, "cli.tar");
      const r = await runCli(["backup", "--dir", data, "--out", out], { BURROW_LOG_LEVEL: "warn" });
      if (r.code !== 0) throw new Error(`burrow backup failed: ${r.stderr}`);
      afterRow.push(out);
      return r.stderr
        .trim()
        .split("\n")
        .at(-1)!
        .replace(/^backup: /, "");
    }),
  );
  rows.push(
    await during(server, "VACUUM INTO (another process; not used)", async () => {
      const out = join(dir, "vacuum.db");
      const t0 = performance.now();
      const p = Bun.spawn(
        [
          process.execPath,
          "-e",
          `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(join(data, "development.db"))}); db.run("PRAGMA busy_timeout=5000"); db.run("VACUUM INTO '${out}'");`,
        ],
        { stdout: "ignore", stderr: "inherit" },
      );
      const code = await p.exited;
      if (code !== 0) throw new Error("VACUUM INTO failed");
      const size = existsSync(out) ? statSync(out).size : 0;
      afterRow.push(out);
      return `copy ${(size / 1024 ** 3).toFixed(2)} GiB in ${((performance.now() - t0) / 1000).toFixed(1)} s (development.db only)`;
    }),
  );

  let pressure = "";
  try {
    pressure = /some avg10=[\d.]+ avg60=([\d.]+)/.exec(readFileSync("/proc/pressure/cpu", "utf8"))?.[1] ?? "";
  } catch {}
  const md = [
    "### Online backup while writing (scripts/bench/backup.ts)",
    "",
    `${machine()}. The 2 cores are shared with another engineer's work running at the same time, so the figures are noisy; ` +
      `steal is the hypervisor's share of CPU time during each row${pressure ? `; CPU pressure (PSI, some tasks waiting for a CPU) was ${pressure}% over the last minute of the run` : ""}. Server from source (\`bun src/main.ts serve\`), development.db of ` +
      `${(dbSize / 1024 ** 3).toFixed(2)} GiB (${GB} GB of 4 KB rows); writes \`POST /tick\` sent open-loop at ${RATE}/s from the benchmark process, ` +
      `each timed from when it was due, so a stall counts in every write due during it. Latencies in ms, over the writes due while the action ran.`,
    "",
    table(["while", "took", "writes", "p50", "p99", "max", "failed", "result", "steal"], rows),
    "",
    `The backup file of the last API row: ${(apiBackup.size / 1024 ** 3).toFixed(2)} GiB in ${(apiBackup.durationMs / 1000).toFixed(1)} s (three databases and files/, uncompressed). ` +
      "Writers are held off only while the three read snapshots are pinned (the CLI row prints that time); the tar is written from the live files on a worker thread at nice 19 (in the server) or in the CLI process. " +
      "The rows run by another process include that process's start and exit (a Bun process of its own, see the control row). Files an action wrote are deleted after its row is measured: deleting a 1 GB file blocked the benchmark's own event loop for ~180 ms, which earlier runs counted as a stall of the server's writes.",
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("backup", md);
} finally {
  await server?.stop();
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
  else log(`kept ${dir}`);
}
