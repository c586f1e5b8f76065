// The one executable: build it once, start it on a free port with a temp data dir, and do a full
// create/read/update/delete round trip over real HTTP. Also the modules loaded on first use (mail, APNs with a
// .p12, Web Push: src/on-first-use.ts) work from the binary's bundle, and the API reference's page and renderer
// come from the binary's own files.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { buildBinary, ROOT, runCli, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";
import { smtpSettings, startSmtp } from "../helpers/smtp.ts";
import { TEST_P12_PASSWORD, TEST_TOPIC, makeApnsTestPki, startApnsFake } from "../helpers/apns-fake.ts";
import { startWebPushFake } from "../helpers/web-push-fake.ts";
import { generateVapidKeys } from "../../src/push/providers/web-push.ts";

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
/** The server's resident file-backed pages (the executable's, mostly), kB. */
const rssFile = () => Number(/RssFile:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, "utf8"))![1]);
let fileBackedAtStart = 0;

beforeAll(async () => {
  buildBinary(exe);
  server = await startServerProcess([exe], env);
  fileBackedAtStart = rssFile();
}, 120_000);

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

const headers = {
  accept: "application/vnd.service+json; version=0",
  "x-service-api-key": "e2e-dev-public",
  "content-type": "application/json",
};

test("the banner shows the URL, both public keys, the admin console and the admin API", () => {
  expect(server.banner).toContain(server.url);
  expect(server.banner).toContain("e2e-dev-public");
  expect(server.banner).toContain("e2e-prod-public");
  expect(server.banner).toContain(`${server.url}/_admin/api`);
  expect(server.banner).toContain(`admin console    ${server.url}/_admin/`);
  // From the binary, the commands it names are the binary's own.
  expect(server.banner).toContain("  private keys     burrow keys");
  expect(server.banner).not.toContain("npm run");
});

test("health answers", async () => {
  const r = await fetch(`${server.url}/_health`);
  expect(r.status).toBe(200);
  expect(((await r.json()) as any).status).toBe("ok");
});

test.skipIf(process.platform !== "linux")(
  "the code pages only start-up touched are given back about 2 s after start (src/os/code-pages.ts)",
  async () => {
    // At start most of the executable's code is resident (JavaScriptCore's compilers, module loading, route set-up).
    expect(fileBackedAtStart).toBeGreaterThan(30_000);
    const deadline = Date.now() + 8000;
    while (rssFile() > fileBackedAtStart - 15_000 && Date.now() < deadline) await Bun.sleep(100);
    expect(rssFile()).toBeLessThan(fileBackedAtStart - 15_000);
    // What runs afterwards faults its pages back in: the tests below run against this server.
    const r = await fetch(`${server.url}/_health`);
    expect(r.status).toBe(200);
  },
  15_000,
);

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

test("the API reference comes from the binary: its page under a nonce policy, the pinned renderer compressed and cached", async () => {
  const bare = await fetch(`${server.url}/_admin/docs`, { redirect: "manual" });
  expect([bare.status, bare.headers.get("location")]).toEqual([308, "/_admin/docs/"]);
  const page = await fetch(`${server.url}/_admin/docs/`);
  expect(page.status).toBe(200);
  const nonce = /script-src 'nonce-([^']+)'/.exec(page.headers.get("content-security-policy") ?? "")?.[1];
  expect(nonce).toBeString();
  const html = await page.text();
  expect(html).toContain('<openapi-explorer spec-url="/_admin/api/openapi.json">');
  const script = /<script nonce="([^"]+)"[^>]* src="(\/_admin\/docs\/[^"]+\.js)"/.exec(html);
  expect(script?.[1]).toBe(nonce!);
  const pinned: string = (await Bun.file(join(ROOT, "package.json")).json()).dependencies["openapi-explorer"];
  const js = await fetch(`${server.url}${script![2]}`, { headers: { "accept-encoding": "br" } });
  expect([js.status, js.headers.get("content-encoding"), js.headers.get("cache-control")]).toEqual([
    200,
    "br",
    "public, max-age=31536000, immutable",
  ]);
  expect(await js.text()).toContain(`OpenAPI Explorer ${pinned}`);
  expect((await fetch(`${server.url}/_admin/api/openapi.json`)).status).toBe(200);
});

test("admin login works against the binary", async () => {
  const r = await fetch(`${server.url}/_admin/api/login`, {
    method: "POST",
    body: JSON.stringify({ email: "ops@example.com", password: "e2e-password" }),
  });
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

test("`burrow health` exits 0 when /_health answers 200 and 1 when nothing listens", async () => {
  const ok = await runCli(["health", "--url", server.url], {}, exe);
  expect([ok.code, ok.stdout.trim()]).toEqual([0, `ok ${server.url}/_health`]);
  // Without --url it asks the address of --http / BURROW_HTTP, 0.0.0.0 meaning this machine.
  const port = new URL(server.url).port;
  expect((await runCli(["health"], { BURROW_HTTP: `0.0.0.0:${port}` }, exe)).code).toBe(0);
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const free = closed.port;
  closed.stop(true);
  const down = await runCli(["health", "--url", `http://127.0.0.1:${free}`], {}, exe);
  expect(down.code).toBe(1);
  expect(down.stderr.trim().split("\n")).toHaveLength(1);
  expect(down.stderr).toContain(`http://127.0.0.1:${free}/_health did not answer`);
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
  const created = await fetch(`${server.url}/user`, {
    method: "POST",
    headers,
    body: JSON.stringify({ username: "e2e-user", password: "e2e-user-password" }),
  });
  expect(created.status).toBe(201);
  const login = await fetch(`${server.url}/user/accessToken`, {
    method: "POST",
    headers,
    body: JSON.stringify({ username: "e2e-user", password: "e2e-user-password" }),
  });
  expect(login.status).toBe(200);
  const token = (await login.json()) as { access_token: string; mac_key: string };
  const url = new URL(server.url);
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = macSignature(
    token.mac_key,
    normalizedString({ ts, nonce: "e2e-nonce", method: "GET", uri: "/user/loggedInUser", host: url.hostname, port: Number(url.port) }),
  );
  const signed = { ...headers, authorization: `MAC id="${token.access_token}",ts="${ts}",nonce="e2e-nonce",mac="${mac}"` };
  const me = await fetch(`${server.url}/user/loggedInUser`, { headers: signed });
  expect(me.status).toBe(200);
  expect(((await me.json()) as any).username).toBe("e2e-user");
  const replay = await fetch(`${server.url}/user/loggedInUser`, { headers: signed });
  expect(replay.status).toBe(401);
  const preflight = await fetch(`${server.url}/user`, {
    method: "OPTIONS",
    headers: { origin: "http://app.example", "access-control-request-method": "GET" },
  });
  for (const r of [created, login, me, replay, preflight]) expect(r.headers.get("date")).toMatch(httpDate);
});

test("custom code end to end: code deploy next to the running server, methods over HTTP, a memory bomb capped", async () => {
  const example = join(ROOT, "examples/custom-code");
  // --force: an earlier test inferred a "todo" schema of its own here.
  const applied = await runCli(["schema", "apply", "--force", join(example, "schemas")], env, exe);
  expect([applied.code, applied.stdout]).toEqual([0, expect.stringContaining("todo")]);
  const deployed = await runCli(["code", "deploy", example], env, exe);
  expect(deployed.code).toBe(0);
  expect(deployed.stdout).toContain("/hello_world");
  // The server sees the change within its refresh interval (1 s).
  let hello: Response | null = null;
  for (let i = 0; i < 40 && hello?.status !== 200; i++) {
    if (i) await Bun.sleep(100);
    hello = await fetch(`${server.url}/hello_world?name=Bin`, { headers });
  }
  expect(await hello!.json()).toEqual({ msg: "Hello, Bin" });
  const add = await fetch(`${server.url}/todo_add`, {
    method: "POST",
    headers,
    body: JSON.stringify({ title: "from the binary", priority: 3 }),
  });
  expect(add.status).toBe(201);
  const open = (await (await fetch(`${server.url}/todo_open`, { headers })).json()) as { total: number; todos: { title: string }[] };
  expect([open.total, open.todos[0]!.title]).toEqual([1, "from the binary"]);

  // 200 MB of typed arrays against the 64 MB cap: a clear 500, and the process grows by less than the cap.
  const login = (await (
    await fetch(`${server.url}/_admin/api/login`, {
      method: "POST",
      body: JSON.stringify({ email: env.BURROW_ADMIN_EMAIL, password: env.BURROW_ADMIN_PASSWORD }),
    })
  ).json()) as { token: string };
  const bomb = `export const methods = [{ name: "bomb", execute() { const a = []; for (let i = 0; i < 200; i++) a.push(new Uint8Array(1024 * 1024).fill(1)); return { body: a.length }; } }];`;
  expect(
    (await fetch(`${server.url}/_admin/api/code`, { method: "PUT", headers: { authorization: `Bearer ${login.token}` }, body: bomb }))
      .status,
  ).toBe(200);
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, "utf8"))![1]) / 1024;
  const before = rss();
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${server.url}/bomb`, { headers });
    expect([r.status, ((await r.json()) as { error: string }).error]).toEqual([
      500,
      "custom code method bomb failed: the method ran out of memory",
    ]);
  }
  expect(rss() - before).toBeLessThan(64 + 16);
}, 60_000);

test("modules loaded on first use work from the binary: SMTP mail, APNs with a .p12 over HTTP/2, Web Push", async () => {
  const login = (await (
    await fetch(`${server.url}/_admin/api/login`, {
      method: "POST",
      body: JSON.stringify({ email: env.BURROW_ADMIN_EMAIL, password: env.BURROW_ADMIN_PASSWORD }),
    })
  ).json()) as { token: string };
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/_admin/api${path}`, {
      method,
      headers: { authorization: `Bearer ${login.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const smtp = await startSmtp();
  const pki = makeApnsTestPki();
  const apns = await startApnsFake(pki);
  try {
    // nodemailer
    expect((await admin("PUT", "/settings/development", { smtp: smtpSettings(smtp.port) })).status).toBe(200);
    expect((await admin("POST", "/mail/test", { env: "development", to: "ops@example.com" })).status).toBe(200);
    expect(smtp.messages.map((m) => m.to)).toEqual([["ops@example.com"]]);
    // node-forge (.p12), node:http2 and node:tls for APNs; web-push signs and encrypts for the Web Push fake.
    const vapid = generateVapidKeys();
    const apnsSettings = { url: apns.url, ca: apns.ca, topic: TEST_TOPIC, p12: pki.p12Base64, p12Password: TEST_P12_PASSWORD };
    const web = { allowPrivateEndpoints: true, vapidPublicKey: vapid.publicKey, vapidPrivateKey: vapid.privateKey };
    expect((await admin("PUT", "/settings/development", { push: { apns: apnsSettings, web } })).status).toBe(200);
    const webFake = startWebPushFake(vapid.publicKey);
    try {
      const sub = webFake.subscribe();
      const iosToken = "0c".repeat(32);
      expect(
        (await fetch(`${server.url}/_push/tokens/ios/${iosToken}`, { method: "POST", headers, body: JSON.stringify({ user: "bin-ann" }) }))
          .status,
      ).toBe(200);
      expect(
        (
          await fetch(`${server.url}/_push/tokens/web/${encodeURIComponent(sub.token)}`, {
            method: "POST",
            headers,
            body: JSON.stringify({ user: "bin-ann" }),
          })
        ).status,
      ).toBe(200);
      const sent = await fetch(`${server.url}/_push/notifications`, {
        method: "POST",
        headers,
        body: JSON.stringify({ payload: { message: "from the binary" }, users: ["bin-ann"] }),
      });
      expect(await sent.json()).toEqual({ queued: 2 });
      const deadline = Date.now() + 15_000;
      while ((apns.deliveries.length < 1 || webFake.deliveries.length < 1) && Date.now() < deadline) await Bun.sleep(20);
      expect(apns.deliveries.map((d) => [d.token, d.auth])).toEqual([[iosToken, "certificate"]]);
      expect(webFake.deliveries.map((d) => [d.id, d.payload])).toEqual([[sub.id, { message: "from the binary" }]]);
      expect(webFake.rejections).toEqual([]);
    } finally {
      webFake.stop();
    }
  } finally {
    await smtp.stop();
    await apns.close();
  }
}, 60_000);
