// Build dist/burrow: one executable holding the server, the CLI and every asset (bun build --compile).
// Usage: bun run scripts/build.ts [--target bun-linux-arm64] [--outfile path]

import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { target: { type: "string" }, outfile: { type: "string" } } });
const outfile = values.outfile ?? "dist/burrow";
// Worker threads are separate entrypoints in a compiled binary (Bun embeds them next to the main bundle).
const args = ["build", "--compile", "--minify", "--bytecode", "--format=esm", "src/main.ts", "src/auth/hasher-worker.ts", "src/push/delivery-thread.ts", "src/code/code-thread.ts", "--outfile", outfile];
if (values.target) args.push(`--target=${values.target}`);

const started = performance.now();
const proc = Bun.spawnSync([process.execPath, ...args], { cwd: new URL("..", import.meta.url).pathname, stdout: "inherit", stderr: "inherit" });
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
const size = Bun.file(new URL(`../${outfile}`, import.meta.url)).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
