// Smoke test of the cross-compiled arm64 binary (scripts/build.ts --arm64) under qemu-user-static: it is an
// aarch64 executable, prints its version, starts, answers /_health and does a create/read/update/delete round trip
// over HTTP, and stops cleanly on SIGTERM. qemu-user-static and libc6-arm64-cross come from scripts/install-qemu.mjs.
// Runs on linux-x64 only (the emulator and the sysroot are Debian's x64 packages); elsewhere it says why it skips.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT, startServerProcess, type ServerProcess } from "../helpers/spawn.ts";

const supported = process.platform === "linux" && process.arch === "x64";
if (!supported)
  console.log(`arm64 smoke test skipped: it needs linux-x64 for qemu-user-static (this is ${process.platform}-${process.arch})`);
const smoke = supported ? test : test.skip;

const QEMU = "/usr/bin/qemu-aarch64-static";
const SYSROOT = "/usr/aarch64-linux-gnu";
const dir = tempDir("burrow-arm64-");
const exe = join(dir, "burrow-linux-arm64");
const emulated = [QEMU, "-L", SYSROOT, exe];
const env = { BURROW_DIR: join(dir, "data"), BURROW_DEV_PUBLIC_KEY: "arm64-dev-public", BURROW_PROD_PUBLIC_KEY: "arm64-prod-public" };
const headers = {
  accept: "application/vnd.service+json; version=0",
  "x-service-api-key": "arm64-dev-public",
  "content-type": "application/json",
};
let server: ServerProcess | undefined;
let startedAt = 0;

beforeAll(async () => {
  if (!supported) return;
  const install = Bun.spawnSync(["node", join(ROOT, "scripts/install-qemu.mjs")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (install.exitCode !== 0) throw new Error(`installing qemu-user-static failed (scripts/install-qemu.mjs): ${install.stderr}`);
  const build = Bun.spawnSync([process.execPath, "run", "scripts/build.ts", "--arm64", "--outfile", exe], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (build.exitCode !== 0) throw new Error(`arm64 build failed: ${build.stderr}`);
  server = await startServerProcess(emulated, env);
  startedAt = Date.now();
  console.log(
    `arm64 binary: ${(Bun.file(exe).size / 1024 / 1024).toFixed(1)} MB, healthy ${(server.readyMs / 1000).toFixed(1)} s after exec under qemu-aarch64-static`,
  );
}, 90_000);

afterAll(() => {
  server?.proc.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

smoke(
  "it is an aarch64 ELF executable and prints its version under emulation",
  async () => {
    const header = readFileSync(exe).subarray(0, 20);
    expect([header.subarray(0, 4).toString("latin1"), header[4], header.readUInt16LE(18)]).toEqual(["\x7fELF", 2, 0xb7]); // 64-bit, EM_AARCH64
    const proc = Bun.spawn([...emulated, "--version"], { stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect([code, out.trim()]).toEqual([0, `burrow ${(await Bun.file(join(ROOT, "package.json")).json()).version}`]);
  },
  30_000,
);

smoke(
  "it answers /_health, also to its own `health` command",
  async () => {
    const r = await fetch(`${server!.url}/_health`);
    expect([r.status, ((await r.json()) as { status: string }).status]).toEqual([200, "ok"]);
    const proc = Bun.spawn([...emulated, "health", "--url", server!.url], { stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(0);
  },
  30_000,
);

smoke(
  "create, read, update, delete over HTTP",
  async () => {
    // After start-up's code pages were given back (2 s after listening, src/os/code-pages.ts), so the round trip
    // also shows that releasing them under the emulator leaves a working server.
    await Bun.sleep(Math.max(0, startedAt + 3000 - Date.now()));
    const c = await fetch(`${server!.url}/note`, { method: "POST", headers, body: JSON.stringify({ title: "from arm64", n: 1 }) });
    expect(c.status).toBe(201);
    const created = (await c.json()) as { note_id: string };
    expect(created.note_id).toMatch(/^[0-9a-f]{32}$/);
    expect(await (await fetch(`${server!.url}/note/${created.note_id}`, { headers })).json()).toEqual(created);
    const u = await fetch(`${server!.url}/note/${created.note_id}`, { method: "PUT", headers, body: JSON.stringify({ n: 2 }) });
    expect(((await u.json()) as { n: number }).n).toBe(2);
    const d = await fetch(`${server!.url}/note/${created.note_id}`, { method: "DELETE", headers });
    expect(d.status).toBe(200);
    expect((await fetch(`${server!.url}/note/${created.note_id}`, { headers })).status).toBe(404);
  },
  30_000,
);

smoke(
  "SIGTERM stops it cleanly (exit code 0)",
  async () => {
    const code = await Promise.race([server!.stop(), Bun.sleep(20_000).then(() => "timeout")]);
    expect(code).toBe(0);
    server = undefined;
  },
  30_000,
);
