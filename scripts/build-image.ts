#!/usr/bin/env bun
// The offline path of the Dockerfile: package a binary built already (dist/burrow) into the scratch image, pulling
// nothing. Assembles dist/image/ (scripts/image-rootfs.ts) in a temporary build context holding only the Dockerfile,
// .dockerignore and those files, then runs `<engine> build --build-arg ROOTFS=prebuilt`.
// Usage: bun run scripts/build-image.ts [--binary dist/burrow] [--tag burrow] [--engine podman|docker] [-- engine build flags]
// The engine is podman when it is installed, docker otherwise.
// podman is given --format docker, so the image keeps its HEALTHCHECK (the OCI format has none).

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { assembleRootfs } from "./image-rootfs.ts";

const { values, positionals } = parseArgs({
  options: { binary: { type: "string", default: "dist/burrow" }, tag: { type: "string", default: "burrow" }, engine: { type: "string" } },
  allowPositionals: true,
});
const root = join(import.meta.dir, "..");
const engine = values.engine ?? (Bun.which("podman") ? "podman" : "docker");
const started = performance.now();

const context = mkdtempSync(join(tmpdir(), "burrow-image-"));
let code = 0;
try {
  for (const f of ["Dockerfile", ".dockerignore"]) copyFileSync(join(root, f), join(context, f));
  const libs = assembleRootfs(resolve(values.binary!), join(context, "dist/image"));
  console.log(`root filesystem: ${values.binary} and ${libs.join(", ")}`);
  const format = engine.endsWith("podman") || engine.endsWith("buildah") ? ["--format", "docker"] : [];
  const cmd = [engine, "build", ...format, "--build-arg", "ROOTFS=prebuilt", "-t", values.tag!, ...positionals, context];
  console.log(cmd.join(" "));
  const build = Bun.spawnSync(cmd, { stdout: "inherit", stderr: "inherit" });
  code = build.exitCode ?? 1;
} finally {
  rmSync(context, { recursive: true, force: true });
}
if (code !== 0) process.exit(code);
console.log(`built image ${values.tag} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
