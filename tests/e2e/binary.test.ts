// The one executable: build it once, start it on a free port with a temp data dir, and do a full
// create/read/update/delete round trip over real HTTP.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT, runCli, startServerProcess, type ServerProcess } from "../helpers/spawn.ts";

const dir = tempDir("burrow-e2e-");
const exe = join(dir, "burrow");
const env = {
  BURROW_DIR: join(dir, "data"),
  BURROW_DEV_PUBLIC_KEY: "e2e-dev-public",
  BURROW_PROD_PUBLIC_KEY: "e2e-prod-public",
  BURROW_ADMIN_EMAIL: "ops@example.com",
  BURROW_ADMIN_PASSWORD: "e2e-password",
};
let server: ServerProcess;

beforeAll(async () => {
  const build = Bun.spawnSync([process.execPath, "run", "scripts/build.ts", "--outfile", exe], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr}`);
  server = await startServerProcess([exe], env);
}, 120_000);

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

const headers = { accept: "application/vnd.service+json; version=0", "x-service-api-key": "e2e-dev-public", "content-type": "application/json" };

test("the banner shows the URL, both public keys and the admin API", () => {
  expect(server.banner).toContain(server.url);
  expect(server.banner).toContain("e2e-dev-public");
  expect(server.banner).toContain("e2e-prod-public");
  expect(server.banner).toContain(`${server.url}/_admin/api`);
  // From the binary, the commands it names are the binary's own.
  expect(server.banner).toContain("  private keys     burrow keys");
  expect(server.banner).not.toContain("npm run");
});

test("health answers", async () => {
  const r = await fetch(`${server.url}/_health`);
  expect(r.status).toBe(200);
  expect(((await r.json()) as any).status).toBe("ok");
});

test("create, read, update, delete over HTTP", async () => {
  const c = await fetch(`${server.url}/todo`, { method: "POST", headers, body: JSON.stringify({ title: "ship it", n: 1 }) });
  expect(c.status).toBe(201);
  const created = (await c.json()) as any;
  expect(created.todo_id).toMatch(/^[0-9a-f]{32}$/);

  const g = await fetch(`${server.url}/todo/${created.todo_id}`, { headers });
  expect((await g.json()) as any).toEqual(created);

  const u = await fetch(`${server.url}/todo/${created.todo_id}`, { method: "PUT", headers, body: JSON.stringify({ n: 2 }) });
  expect(((await u.json()) as any).n).toBe(2);

  const d = await fetch(`${server.url}/todo/${created.todo_id}`, { method: "DELETE", headers });
  expect(d.status).toBe(200);
  expect((await d.json()) as any).toEqual({});
  expect((await fetch(`${server.url}/todo/${created.todo_id}`, { headers })).status).toBe(404);
});

test("admin login works against the binary", async () => {
  const r = await fetch(`${server.url}/_admin/api/login`, { method: "POST", body: JSON.stringify({ email: "ops@example.com", password: "e2e-password" }) });
  expect(r.status).toBe(200);
  const { token } = (await r.json()) as any;
  const s = await fetch(`${server.url}/_admin/api/status`, { headers: { authorization: `Bearer ${token}` } });
  expect(((await s.json()) as any).environments.development.objects.todo).toBe(0);
});

test("the binary prints its version; each request is one line of the log on stderr", async () => {
  const v = await runCli(["--version"], {}, exe);
  expect([v.code, v.stdout.trim()]).toEqual([0, `burrow ${(await Bun.file(join(ROOT, "package.json")).json()).version}`]);
  await fetch(`${server.url}/_health?probe=secret-value`);
  await Bun.sleep(100);
  const log = server.output().stderr;
  expect(log).toMatch(/INFO GET \/_health\?probe 200 \d+\.\dms -\n/);
  expect(log).not.toContain("secret-value");
});

test("the binary's CLI answers --help and refuses bad config with exit code 2", async () => {
  const help = await runCli(["--help"], {}, exe);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("schema apply");
  const bad = await runCli(["serve", "--http", "nowhere"], {}, exe);
  expect(bad.code).toBe(2);
  expect(bad.stderr.trim().split("\n")).toHaveLength(1);
});

test("over real HTTP: a MAC-signed request works once, a replay is refused, and every answer carries Date", async () => {
  const { macSignature, normalizedString } = await import("../../src/auth/mac.ts");
  const httpDate = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
  const created = await fetch(`${server.url}/user`, { method: "POST", headers, body: JSON.stringify({ username: "e2e-user", password: "e2e-user-password" }) });
  expect(created.status).toBe(201);
  const login = await fetch(`${server.url}/user/accessToken`, { method: "POST", headers, body: JSON.stringify({ username: "e2e-user", password: "e2e-user-password" }) });
  expect(login.status).toBe(200);
  const token = (await login.json()) as { access_token: string; mac_key: string };
  const url = new URL(server.url);
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = macSignature(token.mac_key, normalizedString({ ts, nonce: "e2e-nonce", method: "GET", uri: "/user/loggedInUser", host: url.hostname, port: Number(url.port) }));
  const signed = { ...headers, authorization: `MAC id="${token.access_token}",ts="${ts}",nonce="e2e-nonce",mac="${mac}"` };
  const me = await fetch(`${server.url}/user/loggedInUser`, { headers: signed });
  expect(me.status).toBe(200);
  expect(((await me.json()) as any).username).toBe("e2e-user");
  const replay = await fetch(`${server.url}/user/loggedInUser`, { headers: signed });
  expect(replay.status).toBe(401);
  const preflight = await fetch(`${server.url}/user`, { method: "OPTIONS", headers: { origin: "http://app.example", "access-control-request-method": "GET" } });
  for (const r of [created, login, me, replay, preflight]) expect(r.headers.get("date")).toMatch(httpDate);
});
