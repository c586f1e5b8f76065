// Build dist/burrow: one executable holding the server, the CLI, the admin console and every asset
// (bun build --compile). The server's pages (the console, the status page, the API reference with its pinned
// renderer) are bundled first (Bun's HTML bundler, src/console/console-build.ts) into temporary console/, status/
// and docs/ folders that --asset embeds; the server finds them in Bun.embeddedFiles, so nothing it serves comes
// from elsewhere. With --arm64 (or --all) it also cross-compiles dist/burrow-linux-arm64 from the pinned
// @oven/bun-linux-aarch64 runtime fetched by npm pack (scripts/bun-runtime.ts), so no download by Bun itself.
// Usage: bun run scripts/build.ts [--outfile path]          the x64 binary only (dist/burrow); tests use this
//        bun run scripts/build.ts --arm64 [--outfile path]  the arm64 binary only (dist/burrow-linux-arm64)
//        bun run scripts/build.ts --all                     both (npm run build)
//        bun run scripts/build.ts --target bun-<target> --outfile path   any other target, downloaded by Bun

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { SITES, type Site, buildSite } from "../src/console/console-build.ts";
import { buildSdk } from "../src/console/sdk-build.ts";
import { bunRuntime, pinnedBunVersion } from "./bun-runtime.ts";

const { values } = parseArgs({
  options: { target: { type: "string" }, outfile: { type: "string" }, arm64: { type: "boolean" }, all: { type: "boolean" } },
});
const root = new URL("..", import.meta.url).pathname;
const started = performance.now();
if (Bun.version !== (await pinnedBunVersion()))
  console.warn(`warning: building with Bun ${Bun.version}, package.json pins ${await pinnedBunVersion()}`);

interface Build {
  outfile: string;
  /** --target and --compile-executable-path, or nothing for the host's own runtime. */
  flags: () => Promise<string[]>;
}
const arm64: Build["flags"] = async () => ["--target=bun-linux-arm64", `--compile-executable-path=${await bunRuntime("linux-aarch64")}`];
const builds: Build[] = [];
if (values.all) {
  const base = values.outfile ?? "dist/burrow";
  builds.push({ outfile: base, flags: async () => [] }, { outfile: `${base}-linux-arm64`, flags: arm64 });
} else if (values.arm64) {
  builds.push({ outfile: values.outfile ?? "dist/burrow-linux-arm64", flags: arm64 });
} else {
  builds.push({ outfile: values.outfile ?? "dist/burrow", flags: async () => (values.target ? [`--target=${values.target}`] : []) });
}

const staging = mkdtempSync(join(tmpdir(), "burrow-pages-"));
let pageBytes = 0;
const assets: string[] = [];
for (const site of Object.keys(SITES) as Site[]) {
  const dir = join(staging, site);
  mkdirSync(dir);
  for (const f of await buildSite(site)) {
    writeFileSync(join(dir, f.name), f.body);
    pageBytes += f.body.length;
  }
  assets.push(`--asset=${relative(root, dir)}`);
}
// The client library (/_sdk/burrow.js and its declarations), embedded the same way.
mkdirSync(join(staging, "sdk"));
for (const f of await buildSdk()) writeFileSync(join(staging, "sdk", f.name), f.body);
assets.push(`--asset=${relative(root, join(staging, "sdk"))}`);

const lines: string[] = [];
try {
  for (const b of builds) {
    // Worker threads are separate entrypoints in a compiled binary (Bun embeds them next to the main bundle).
    const args = [
      "build",
      "--compile",
      "--minify",
      "--bytecode",
      "--format=esm",
      "src/main.ts",
      "src/auth/hasher-worker.ts",
      "src/push/delivery-thread.ts",
      "src/code/code-thread.ts",
      "src/backup/backup-worker.ts",
      ...assets,
      "--outfile",
      b.outfile,
      ...(await b.flags()),
    ];
    const t = performance.now();
    const proc = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
    const size = Bun.file(join(root, b.outfile)).size || Bun.file(b.outfile).size;
    lines.push(`built ${b.outfile} (${(size / 1024 / 1024).toFixed(1)} MB) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
for (const l of lines) console.log(l);
console.log(
  `pages (${Object.keys(SITES).join(", ")}) ${(pageBytes / 1024).toFixed(0)} KiB embedded; ${((performance.now() - started) / 1000).toFixed(1)} s in all`,
);
