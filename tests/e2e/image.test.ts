// The container image (Dockerfile), built the offline way (scripts/build-image.ts: a binary built here, FROM scratch,
// nothing pulled) with Debian's podman and run: only the binary, glibc and a few files inside, it runs as uid 10001,
// answers /_health and a create/read/update/delete round trip through the published port, its HEALTHCHECK (the
// binary's own `burrow health`) passes, SIGTERM (podman stop) exits 0, and the data survives a restart in the volume.
// Podman here is rootful with its own storage under a temp dir (--root/--runroot), runc (crun refuses this machine's
// hybrid cgroups) and --ulimit values at or below the current ones (no CAP_SYS_RESOURCE to raise them).
// The Dockerfile's other path (a node:20-bookworm builder stage) cannot run here, as no image can be pulled: the last
// test builds the binary and its root filesystem from exactly the files that stage copies (node_modules linked in place
// of its npm ci).
// Needs linux-x64 with apt-get (scripts/install-podman.mjs); elsewhere it says why it skips.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { buildBinary, ROOT } from "../helpers/spawn.ts";

const supported = process.platform === "linux" && process.arch === "x64";
if (!supported)
  console.log(
    `image test skipped: it builds and runs the image with Debian's podman on linux-x64 (this is ${process.platform}-${process.arch})`,
  );
const itest = supported ? test : test.skip;

const dir = tempDir("burrow-image-e2e-");
const exe = join(dir, "burrow");
const TAG = "localhost/burrow-e2e:test";
const NAME = "burrow-e2e";
const GLOBAL = ["--root", join(dir, "storage"), "--runroot", join(dir, "run"), "--runtime", "runc", "--cgroup-manager", "cgroupfs"];
const headers = {
  accept: "application/vnd.service+json; version=0",
  "x-service-api-key": "image-dev-public",
  "content-type": "application/json",
};
let url = "";

async function podman(args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["podman", ...GLOBAL, ...args], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

async function healthy(deadlineMs: number): Promise<boolean> {
  for (const end = Date.now() + deadlineMs; Date.now() < end; await Bun.sleep(100)) {
    try {
      if ((await fetch(`${url}/_health`)).status === 200) return true;
    } catch {}
  }
  return false;
}

beforeAll(async () => {
  if (!supported) return;
  const install = Bun.spawnSync(["node", join(ROOT, "scripts/install-podman.mjs")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (install.exitCode !== 0) throw new Error(`installing podman failed (scripts/install-podman.mjs): ${install.stderr}`);
  buildBinary(exe);
  const started = performance.now();
  const image = Bun.spawnSync(
    [process.execPath, "run", "scripts/build-image.ts", "--engine", "podman", "--binary", exe, "--tag", TAG, "--", ...GLOBAL],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  if (image.exitCode !== 0) throw new Error(`image build failed: ${image.stdout}\n${image.stderr}`);
  const port = (() => {
    const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const p = s.port;
    s.stop(true);
    return p;
  })();
  url = `http://127.0.0.1:${port}`;
  const ulimits = ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"];
  const run = await podman([
    "run",
    "-d",
    "--name",
    NAME,
    ...ulimits,
    "-p",
    `127.0.0.1:${port}:8080`,
    "-v",
    "burrow-e2e-data:/data",
    "-e",
    "BURROW_DEV_PUBLIC_KEY=image-dev-public",
    TAG,
  ]);
  if (run.code !== 0) throw new Error(`podman run failed: ${run.stderr}`);
  if (!(await healthy(20_000))) throw new Error(`the container never became healthy: ${(await podman(["logs", NAME])).stderr}`);
  console.log(`image built and container healthy in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}, 180_000);

afterAll(async () => {
  if (supported) {
    await podman(["rm", "-f", "-v", "-t", "0", NAME]);
    await podman(["volume", "rm", "-f", "burrow-e2e-data"]);
    await podman(["rmi", "-a", "-f"]);
  }
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

itest(
  "the image holds the binary, glibc and a few files only, runs as burrow and keeps its data in /data",
  async () => {
    const inspect = JSON.parse((await podman(["image", "inspect", TAG])).stdout)[0];
    const config = inspect.Config;
    expect(config.User).toBe("10001:10001");
    expect(Object.keys(config.ExposedPorts)).toEqual(["8080/tcp"]);
    expect(Object.keys(config.Volumes)).toEqual(["/data"]);
    expect(config.Env).toEqual(expect.arrayContaining(["BURROW_DIR=/data", "BURROW_HTTP=0.0.0.0:8080"]));
    expect(config.Entrypoint).toEqual(["/usr/local/bin/burrow"]);
    expect(config.Cmd).toEqual(["serve"]);
    expect(inspect.Healthcheck?.Test).toEqual(["CMD", "/usr/local/bin/burrow", "health"]);

    const tar = join(dir, "export.tar");
    expect((await podman(["export", "-o", tar, NAME], 120_000)).code).toBe(0);
    const list = Bun.spawnSync(["tar", "-tf", tar], { stdout: "pipe" });
    const names = list.stdout
      .toString()
      .split("\n")
      .map((n) => n.replace(/^\.?\//, ""));
    rmSync(tar);
    for (const f of [
      "usr/local/bin/burrow",
      "lib64/ld-linux-x86-64.so.2",
      "lib/x86_64-linux-gnu/libc.so.6",
      "lib/x86_64-linux-gnu/libm.so.6",
      "etc/passwd",
    ])
      expect(names).toContain(f);
    expect(names.filter((n) => /^(bin|sbin|usr\/bin)\//.test(n))).toEqual([]); // no shell, no coreutils

    const pid = (await podman(["inspect", NAME, "--format", "{{.State.Pid}}"])).stdout.trim();
    expect(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]).toBe("10001");
  },
  120_000,
);

itest("it answers /_health and a create/read/update/delete round trip through the published port", async () => {
  const h = await fetch(`${url}/_health`);
  expect([h.status, ((await h.json()) as { status: string }).status]).toEqual([200, "ok"]);
  const c = await fetch(`${url}/box`, { method: "POST", headers, body: JSON.stringify({ title: "in a container", n: 1 }) });
  expect(c.status).toBe(201);
  const created = (await c.json()) as { box_id: string };
  expect(await (await fetch(`${url}/box/${created.box_id}`, { headers })).json()).toEqual(created);
  const u = await fetch(`${url}/box/${created.box_id}`, { method: "PUT", headers, body: JSON.stringify({ n: 2 }) });
  expect(((await u.json()) as { n: number }).n).toBe(2);
  const d = await fetch(`${url}/box/${created.box_id}`, { method: "DELETE", headers });
  expect(d.status).toBe(200);
  expect((await fetch(`${url}/box/${created.box_id}`, { headers })).status).toBe(404);
});

itest("the HEALTHCHECK passes (the binary's own `burrow health`) and the CLI works through exec", async () => {
  const check = await podman(["healthcheck", "run", NAME]);
  expect(check.code).toBe(0);
  expect((await podman(["inspect", NAME, "--format", "{{.State.Health.Status}}"])).stdout.trim()).toBe("healthy");
  const version = await podman(["exec", NAME, "burrow", "--version"]);
  expect(version.stdout.trim()).toBe(`burrow ${(await Bun.file(join(ROOT, "package.json")).json()).version}`);
});

itest(
  "podman stop sends SIGTERM and it exits 0; after a restart the data is still in the volume",
  async () => {
    const c = await fetch(`${url}/box`, { method: "POST", headers, body: JSON.stringify({ title: "kept" }) });
    const { box_id } = (await c.json()) as { box_id: string };
    expect((await podman(["stop", "-t", "20", NAME])).code).toBe(0);
    expect((await podman(["inspect", NAME, "--format", "{{.State.ExitCode}}"])).stdout.trim()).toBe("0");
    expect((await podman(["logs", NAME])).stdout + (await podman(["logs", NAME])).stderr).toContain("Burrow stopped");
    expect((await podman(["start", NAME])).code).toBe(0);
    expect(await healthy(20_000)).toBe(true);
    expect(((await (await fetch(`${url}/box/${box_id}`, { headers })).json()) as { title: string }).title).toBe("kept");
  },
  60_000,
);

itest(
  "the builder stage's files (the Dockerfile's COPY lines, allowed by .dockerignore) are enough to build the image's files",
  async () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    const stage = dockerfile.slice(dockerfile.indexOf("AS build\n"), dockerfile.indexOf("\nFROM ", dockerfile.indexOf("AS build\n")));
    const sources = [...stage.matchAll(/^COPY (?!--)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(" "));
    expect(sources).toEqual(expect.arrayContaining(["package.json", "package-lock.json", "src", "static", "scripts"]));
    const allowed = readFileSync(join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("!"))
      .map((l) => l.slice(1).replace(/\/$/, ""));
    expect(sources.filter((f) => !allowed.includes(f))).toEqual([]);
    const stageDir = join(dir, "builder");
    mkdirSync(stageDir);
    for (const f of sources) cpSync(join(ROOT, f), join(stageDir, f), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(stageDir, "node_modules"));
    const build = Bun.spawnSync([process.execPath, "run", "scripts/build.ts"], { cwd: stageDir, stdout: "pipe", stderr: "pipe" });
    expect([build.exitCode, build.stderr.toString()]).toEqual([0, ""]);
    const rootfs = Bun.spawnSync([process.execPath, "run", "scripts/image-rootfs.ts", "dist/burrow", join(stageDir, "image")], {
      cwd: stageDir,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(rootfs.exitCode).toBe(0);
    expect(Bun.file(join(stageDir, "image/rootfs/usr/local/bin/burrow")).size).toBeGreaterThan(50_000_000);
    expect(Bun.file(join(stageDir, "image/rootfs/lib64/ld-linux-x86-64.so.2")).size).toBeGreaterThan(0);
  },
  90_000,
);
