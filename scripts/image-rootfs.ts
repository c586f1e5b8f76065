// Assemble the root filesystem of the scratch container image (Dockerfile) from a built binary: the binary at
// /usr/local/bin/burrow, the shared libraries `ldd` names (glibc: libc, libm, libpthread, libdl, the loader) plus
// libgcc_s (glibc loads it at thread cancellation), /etc/passwd and /etc/group with the non-root user burrow
// (10001), nsswitch.conf, /tmp (1777), an empty data directory, and the CA bundle (Bun has Mozilla's roots built in; the
// bundle serves NODE_USE_SYSTEM_CA=1). Runs on the build machine, or in the Dockerfile's build stage.
// Usage: bun run scripts/image-rootfs.ts <binary> <out-dir>   (writes <out-dir>/rootfs and <out-dir>/data)

import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const UID = 10001;

/** The absolute paths of the shared objects `ldd` reports for a dynamically linked executable. */
export function sharedLibraries(binary: string): string[] {
  const ldd = Bun.spawnSync(["ldd", binary], { stdout: "pipe", stderr: "pipe" });
  if (ldd.exitCode !== 0) throw new Error(`ldd ${binary} failed: ${ldd.stderr}`);
  const libs: string[] = [];
  for (const line of ldd.stdout.toString().split("\n")) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  return libs;
}

/** Writes <image>/rootfs (the filesystem) and <image>/data (empty: the Dockerfile copies it to /data owned by
 * burrow, since a COPY keeps no owner and a directory made by the first COPY would stay root's). */
export function assembleRootfs(binary: string, image: string): string[] {
  rmSync(image, { recursive: true, force: true });
  mkdirSync(join(image, "data"), { recursive: true });
  const out = join(image, "rootfs");
  const put = (path: string, from: string) => {
    mkdirSync(dirname(join(out, path)), { recursive: true });
    copyFileSync(from, join(out, path)); // follows symlinks: the library's real bytes under the name the loader asks for
  };
  put("usr/local/bin/burrow", binary);
  chmodSync(join(out, "usr/local/bin/burrow"), 0o755);
  const libs = sharedLibraries(binary);
  const gcc = libs.find((l) => l.includes("/libc.so."))?.replace(/libc\.so\.6$/, "libgcc_s.so.1");
  if (gcc && existsSync(gcc)) libs.push(gcc);
  for (const lib of libs) put(lib, lib);
  const etc = join(out, "etc");
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, "passwd"), `root:x:0:0:root:/root:/sbin/nologin\nburrow:x:${UID}:${UID}:burrow:/data:/sbin/nologin\n`);
  writeFileSync(join(etc, "group"), `root:x:0:\nburrow:x:${UID}:\n`);
  writeFileSync(join(etc, "nsswitch.conf"), "passwd: files\ngroup: files\nhosts: files dns\n");
  if (existsSync("/etc/ssl/certs/ca-certificates.crt")) put("etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/ca-certificates.crt");
  mkdirSync(join(out, "tmp"));
  chmodSync(join(out, "tmp"), 0o1777);
  return libs;
}

if (import.meta.main) {
  const [binary, out] = process.argv.slice(2);
  if (!binary || !out) {
    console.error("usage: bun run scripts/image-rootfs.ts <binary> <out-dir>");
    process.exit(2);
  }
  const libs = assembleRootfs(binary, out);
  console.log(`${out}: ${binary} and ${libs.join(", ")}`);
}
