// Build dist/burrow: one executable holding the server, the CLI, the admin console and every asset
// (bun build --compile). The console and the status page are bundled first (Bun's HTML bundler,
// src/console/console-build.ts) into temporary console/ and status/ folders that --asset embeds; the server finds
// them in Bun.embeddedFiles.
// Usage: bun run scripts/build.ts [--target bun-linux-arm64] [--outfile path]

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { SITES, type Site, buildSite } from "../src/console/console-build.ts";

const { values } = parseArgs({ options: { target: { type: "string" }, outfile: { type: "string" } } });
const root = new URL("..", import.meta.url).pathname;
const outfile = values.outfile ?? "dist/burrow";
const started = performance.now();

const staging = mkdtempSync(join(tmpdir(), "burrow-pages-"));
let consoleBytes = 0;
const assets: string[] = [];
for (const site of Object.keys(SITES) as Site[]) {
  const dir = join(staging, site);
  mkdirSync(dir);
  for (const f of await buildSite(site)) {
    writeFileSync(join(dir, f.name), f.body);
    consoleBytes += f.body.length;
  }
  assets.push(`--asset=${relative(root, dir)}`);
}

// Worker threads are separate entrypoints in a compiled binary (Bun embeds them next to the main bundle).
const args = ["build", "--compile", "--minify", "--bytecode", "--format=esm", "src/main.ts", "src/auth/hasher-worker.ts", "src/push/delivery-thread.ts", "src/code/code-thread.ts", ...assets, "--outfile", outfile];
if (values.target) args.push(`--target=${values.target}`);

const proc = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: "inherit", stderr: "inherit" });
rmSync(staging, { recursive: true, force: true });
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
const size = Bun.file(join(root, outfile)).size || Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MB, console and status page ${(consoleBytes / 1024).toFixed(0)} KiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
