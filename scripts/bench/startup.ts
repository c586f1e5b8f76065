// Binary size and cold start: process start to the first 200 from /_health, on a fresh and on an existing
// data directory. Usage: bun run scripts/bench/startup.ts [--runs 7] [--build] [--write]

import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tempDir } from "../../tests/helpers/app.ts";
import { startServerProcess } from "../../tests/helpers/spawn.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" }, build: { type: "boolean", default: false }, write: { type: "boolean", default: false } } });
const runs = Math.min(50, Math.max(1, Number(values.runs)));
const exe = ensureBinary(values.build!);
const size = statSync(exe).size;

async function measure(fresh: boolean): Promise<number[]> {
  const out: number[] = [];
  const dir = tempDir("burrow-start-");
  for (let i = 0; i < runs; i++) {
    const data = fresh ? join(dir, `data${i}`) : join(dir, "data");
    const server = await startServerProcess([exe], { BURROW_DIR: data, BURROW_LOG_LEVEL: "warn" });
    out.push(server.readyMs);
    await server.stop();
  }
  rmSync(dir, { recursive: true, force: true });
  return out.sort((a, b) => a - b);
}

const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
const fresh = await measure(true);
const existing = await measure(false);
const md = [
  "### Binary size and cold start (scripts/bench/startup.ts)",
  "",
  `${machine()}; \`dist/burrow\` built with \`npm run build\`; time from spawn to the first 200 of /_health, ${runs} runs each.`,
  "",
  table(
    ["measure", "median", "min", "max"],
    [
      ["binary size", `${(size / 1024 / 1024).toFixed(1)} MB`, "", ""],
      ["cold start, fresh data directory (creates 3 databases, keys, the user schema)", `${median(fresh).toFixed(0)} ms`, `${fresh[0]!.toFixed(0)} ms`, `${fresh.at(-1)!.toFixed(0)} ms`],
      ["cold start, existing data directory", `${median(existing).toFixed(0)} ms`, `${existing[0]!.toFixed(0)} ms`, `${existing.at(-1)!.toFixed(0)} ms`],
    ],
  ),
].join("\n");
console.log(md);
if (values.write) writeSection("startup", md);
