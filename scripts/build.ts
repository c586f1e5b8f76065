// Build dist/burrow: one executable holding the server, the CLI, the admin console and every asset
// (bun build --compile). The console is bundled first (Bun's HTML bundler, src/console/console-build.ts) into a
// temporary console/ folder that --asset embeds; the server finds it in Bun.embeddedFiles.
// Usage: bun run scripts/build.ts [--target bun-linux-arm64] [--outfile path]

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { buildConsole } from "../src/console/console-build.ts";

const { values } = parseArgs({ options: { target: { type: "string" }, outfile: { type: "string" } } });
const root = new URL("..", import.meta.url).pathname;
const outfile = values.outfile ?? "dist/burrow";
const started = performance.now();

const staging = mkdtempSync(join(tmpdir(), "burrow-console-"));
const consoleDir = join(staging, "console");
mkdirSync(consoleDir);
let consoleBytes = 0;
for (const f of await buildConsole()) {
  writeFileSync(join(consoleDir, f.name), f.body);
  consoleBytes += f.body.length;
}

// Worker threads are separate entrypoints in a compiled binary (Bun embeds them next to the main bundle).
const args = ["build", "--compile", "--minify", "--bytecode", "--format=esm", "src/main.ts", "src/auth/hasher-worker.ts", "src/push/delivery-thread.ts", "src/code/code-thread.ts", "src/backup/backup-worker.ts", `--asset=${relative(root, consoleDir)}`, "--outfile", outfile];
if (values.target) args.push(`--target=${values.target}`);

const proc = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: "inherit", stderr: "inherit" });
rmSync(staging, { recursive: true, force: true });
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
const size = Bun.file(join(root, outfile)).size || Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MB, console ${(consoleBytes / 1024).toFixed(0)} KiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
