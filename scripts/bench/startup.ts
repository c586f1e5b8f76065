// Binary size, cold start (process start to the first 200 from /_health, on a fresh and on an existing data
// directory) and memory: resident set size idle 3 s after start (anonymous and file-backed pages apart, from
// /proc), after 10 s of GET by key at 50 connections (and the peak), and idle again a minute later.
// Usage: bun run scripts/bench/startup.ts [--runs 7] [--build] [--write]

import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tempDir } from "../../tests/helpers/app.ts";
import { startServerProcess } from "../../tests/helpers/spawn.ts";
import { readFileSync } from "node:fs";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { startBenchServer } from "./server.ts";
import { runLoad } from "./load.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const runs = Math.min(50, Math.max(1, Number(values.runs)));
const exe = ensureBinary(values.build!);
const size = statSync(exe).size;

async function measure(fresh: boolean): Promise<number[]> {
  const out: number[] = [];
  const dir = tempDir("burrow-start-");
  for (let i = 0; i < runs; i++) {
    const data = fresh ? join(dir, `data${i}`) : join(dir, "data");
    const server = await startServerProcess([exe], { BURROW_DIR: data, BURROW_LOG_LEVEL: "warn" }, { serverDefaults: true });
    out.push(server.readyMs);
    await server.stop();
  }
  rmSync(dir, { recursive: true, force: true });
  return out.sort((a, b) => a - b);
}

/** VmRSS, RssAnon, RssFile and VmHWM of a process, MB (Linux). */
function memory(pid: number): Record<"rss" | "anon" | "file" | "peak", number> {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile"), peak: kb("VmHWM") };
}

async function memoryFigures() {
  const server = await startBenchServer(exe);
  try {
    await Bun.sleep(3000);
    const idle = memory(server.pid);
    await server.putSchema("bench", { fields: { title: { type: "string" }, n: { type: "integer" } } });
    const ids = await server.seed("bench", 10_000, (i) => ({ title: `object ${i}`, n: i }));
    const load = await runLoad({
      base: server.url,
      method: "GET",
      paths: ids.map((id) => `/bench/${id}`),
      headers: server.headers,
      connections: 50,
      seconds: 10,
    });
    const loaded = memory(server.pid);
    // The server gives back code pages after a quiet 30 s interval (src/os/code-pages.ts): idle again after two.
    await Bun.sleep(62_000);
    return { idle, loaded, after: memory(server.pid), rps: load.rps };
  } finally {
    await server.stop();
  }
}

const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
const fresh = await measure(true);
const existing = await measure(false);
const mem = await memoryFigures();
const mb = (v: number) => `${v.toFixed(1)} MB`;
const md = [
  "### Binary size, cold start and memory (scripts/bench/startup.ts)",
  "",
  `${machine()}; \`dist/burrow\` built with \`npm run build\`; time from spawn to the first 200 of /_health, ${runs} runs each; memory from /proc/<pid>/status (file-backed pages are the executable's, shared and reclaimable).`,
  "",
  table(
    ["measure", "median", "min", "max"],
    [
      ["binary size", `${(size / 1024 / 1024).toFixed(1)} MB`, "", ""],
      [
        "cold start, fresh data directory (creates 3 databases, keys, the user schema)",
        `${median(fresh).toFixed(0)} ms`,
        `${fresh[0]!.toFixed(0)} ms`,
        `${fresh.at(-1)!.toFixed(0)} ms`,
      ],
      [
        "cold start, existing data directory",
        `${median(existing).toFixed(0)} ms`,
        `${existing[0]!.toFixed(0)} ms`,
        `${existing.at(-1)!.toFixed(0)} ms`,
      ],
      ["RSS idle, 3 s after start (anonymous + file-backed)", `${mb(mem.idle.rss)} (${mb(mem.idle.anon)} + ${mb(mem.idle.file)})`, "", ""],
      [
        `RSS after 10 s of GET by key at 50 connections (${mem.rps.toFixed(0)} req/s)`,
        `${mb(mem.loaded.rss)} (${mb(mem.loaded.anon)} + ${mb(mem.loaded.file)})`,
        "",
        `peak ${mb(mem.loaded.peak)}`,
      ],
      ["RSS idle again, 62 s after that load", `${mb(mem.after.rss)} (${mb(mem.after.anon)} + ${mb(mem.after.file)})`, "", ""],
    ],
  ),
].join("\n");
console.log(md);
if (values.write) writeSection("startup", md);
