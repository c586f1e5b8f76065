// The client library served by the built binary (/_sdk/burrow.js), used as apps use it: imported by a page of the
// server's origin in Chromium, and fetched into a file that Bun, Node and Deno import. Each runs the same flow with MAC
// and with bearer tokens: sign-up, login, CRUD, find with totals, counters, arrays and relationships, a file from
// a Blob, a custom code method, a live subscription, refresh (before expiry and on a 401), errors and logout.
// The gzipped module stays within 12 KB.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Browser, chromium } from "playwright-core";
import { generateVapidKeys } from "../../src/push/providers/web-push.ts";
import { tempDir } from "../helpers/app.ts";
import { CHROMIUM_ARGS, chromiumPath } from "../helpers/chromium.ts";
import { buildBinary, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";
import { startWebPushFake } from "../helpers/web-push-fake.ts";

const dir = tempDir("burrow-sdk-e2e-");
const exe = join(dir, "burrow");
const ADMIN = { email: "owner@example.com", password: "owner password 1" };
const KEY = "dev-public-key-sdk";
const CODE = `export const methods = [
  { name: "hello_world", params: ["name"], execute(r) { return { body: { hello: r.params.name, user: r.loggedInUser } }; } },
];`;

let server: ServerProcess;
let browser: Browser;
let adminToken = "";
const pageErrors: string[] = [];

/** The flow every runtime runs: `sdk` is the imported module, `o` {url, key, tokenType, run}. Answers what it saw. */
const FLOW = `async (sdk, o) => {
  const { connect, BurrowError } = sdk;
  const out = {};
  const saved = new Map();
  const storage = { get: (k) => saved.get(k), set: (k, v) => void saved.set(k, v), remove: (k) => void saved.delete(k) };
  const b = connect({ url: o.url, publicKey: o.key, version: 0, tokenType: o.tokenType, storage });
  const username = "u" + o.run;
  out.signup = (await b.users.signup({ username, password: "pw " + o.run })).username;
  try { await b.users.login({ username, password: "wrong" }); } catch (e) { out.badLogin = [e instanceof BurrowError, e.status, e.body.error]; }
  out.login = (await b.users.login({ username, password: "pw " + o.run })).username;
  out.tokenType = JSON.parse([...saved.values()][0]).token_type;
  out.current = (await b.users.current()).username;

  const todo = b.schema("todo");
  const t = await todo.create({ title: "a", priority: 3, done: false, run: o.run, tags: ["x"], likes: 0 });
  await todo.create({ title: "b", priority: 5, done: false, run: o.run });
  await todo.create({ title: "c", priority: 1, done: false, run: o.run });
  out.owner = t.sm_owner;
  out.get = await todo.get(t.todo_id, { select: ["title"] });
  out.update = (await todo.update(t.todo_id, { title: "a2" })).title;
  const page = await todo.find({ where: { run: o.run, done: false, "priority[gt]": 2 }, orderBy: "title:desc", select: ["title"], range: [0, 0], count: true });
  out.find = { titles: page.items.map((i) => i.title), total: page.total, keys: Object.keys(page.items[0]).sort() };
  const past = await todo.find({ where: { run: o.run }, range: [10, 19], count: true });
  out.past = [past.items.length, past.total];
  out.inList = (await todo.find({ where: { run: o.run, "priority[in]": [1, 5] } })).total;
  out.increment = (await todo.increment(t.todo_id, { likes: 2 })).likes;
  out.append = (await todo.append(t.todo_id, "tags", ["y", "z"])).tags;
  await todo.pull(t.todo_id, "tags", ["x"]);
  out.pulled = (await todo.get(t.todo_id)).tags;
  await todo.save({ todo_id: t.todo_id, lines: [{ line_id: "l0-" + o.run, text: "zero" }] }, { relations: "lines=line" });
  out.related = await todo.createRelated(t.todo_id, "lines", { text: "one" });
  out.expanded = (await todo.get(t.todo_id, { expand: 1 })).lines.map((l) => l.text);

  const bytes = new Uint8Array([137, 80, 78, 71, 0, 1, 2, 255]);
  const withPhoto = await todo.update(t.todo_id, { photo: new Blob([bytes], { type: "image/png" }) });
  const file = await fetch(withPhoto.photo);
  out.photo = [file.status, file.headers.get("content-type"), [...new Uint8Array(await file.arrayBuffer())]];

  out.call = await b.call("hello_world", { name: "Ann" }, { method: "GET" });

  const events = [];
  const off = todo.subscribe({ where: { run: o.run, done: true }, events: ["create"] }, (e) => events.push(e));
  await off.ready;
  await todo.create({ title: "live", done: true, run: o.run });
  for (let i = 0; i < 200 && !events.length; i++) await new Promise((r) => setTimeout(r, 50));
  await off();
  out.live = events.map((e) => [e.type, e.object.title]);

  // Refresh: before expiry (a stored set past its time), and once on a 401 (an access token the server does not know).
  const key = [...saved.keys()][0];
  const first = JSON.parse(saved.get(key));
  saved.set(key, JSON.stringify({ ...first, expires_at: 0 }));
  const b2 = connect({ url: o.url, publicKey: o.key, version: 0, tokenType: o.tokenType, storage });
  out.refreshed = [(await b2.users.current()).username, JSON.parse(saved.get(key)).access_token !== first.access_token];
  const second = JSON.parse(saved.get(key));
  saved.set(key, JSON.stringify({ ...second, access_token: "A".repeat(48) }));
  const b3 = connect({ url: o.url, publicKey: o.key, version: 0, tokenType: o.tokenType, storage });
  out.retried = [(await b3.users.current()).username, JSON.parse(saved.get(key)).access_token !== second.access_token];

  await todo.remove(t.todo_id);
  try { await b3.schema("todo").get(t.todo_id); } catch (e) { out.gone = [e.status, e.message]; }
  await b3.users.logout();
  out.stored = saved.size;
  try { await b3.users.current(); } catch (e) { out.afterLogout = e.status; }
  try { await connect({ url: "http://127.0.0.1:1", publicKey: o.key }).schema("todo").find(); } catch (e) { out.network = e.name; }
  return out;
}`;

function expectFlow(out: any, run: string, tokenType: string) {
  expect(out.signup).toBe(`u${run}`);
  expect(out.badLogin).toEqual([true, 401, "access_denied"]);
  expect([out.login, out.current, out.tokenType]).toEqual([`u${run}`, `u${run}`, tokenType]);
  expect(out.owner).toBe(`user/u${run}`);
  expect(out.get).toEqual({ todo_id: expect.any(String), title: "a" });
  expect(out.update).toBe("a2");
  expect(out.find).toEqual({ titles: ["b"], total: 2, keys: ["title", "todo_id"] });
  expect(out.past).toEqual([0, 3]);
  expect(out.inList).toBe(2);
  expect(out.increment).toBe(2);
  expect(out.append).toEqual(["x", "y", "z"]);
  expect(out.pulled).toEqual(["y", "z"]);
  expect(out.related).toEqual({ succeeded: [expect.any(String)], failed: [] });
  expect(out.expanded).toEqual(["zero", "one"]);
  expect(out.photo).toEqual([200, "image/png", [137, 80, 78, 71, 0, 1, 2, 255]]);
  expect(out.call).toEqual({ hello: "Ann", user: `u${run}` });
  expect(out.live).toEqual([["create", "live"]]);
  expect(out.refreshed).toEqual([`u${run}`, true]);
  expect(out.retried).toEqual([`u${run}`, true]);
  expect(out.gone).toEqual([404, "object instance does not exist"]);
  expect([out.stored, out.afterLogout, out.network]).toEqual([0, 401, "NetworkError"]);
}

beforeAll(async () => {
  buildBinary(exe);
  server = await startServerProcess([exe], {
    BURROW_DIR: join(dir, "data"),
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_DEV_PUBLIC_KEY: KEY,
    BURROW_LOG_LEVEL: "warn",
  });
  const { token } = (await (
    await fetch(`${server.url}/_admin/api/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ADMIN),
    })
  ).json()) as { token: string };
  adminToken = token;
  const up = await fetch(`${server.url}/_admin/api/code`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/javascript" },
    body: CODE,
  });
  expect(up.status).toBe(200);
  browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
  expect(pageErrors).toEqual([]);
});

test("the module is within 12 KB gzipped and its declarations are served beside it", async () => {
  const js = new Uint8Array(
    await (await fetch(`${server.url}/_sdk/burrow.js`, { headers: { "accept-encoding": "identity" } })).arrayBuffer(),
  );
  expect(gzipSync(js, { level: 9 }).length).toBeLessThanOrEqual(12 * 1024);
  const dts = await fetch(`${server.url}/_sdk/burrow.d.ts`);
  expect([dts.status, (await dts.text()).includes("export function connect<")]).toEqual([200, true]);
});

test("in Chromium, a page importing /_sdk/burrow.js runs the flow with MAC and with bearer tokens", async () => {
  const page = await browser.newPage();
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.setDefaultTimeout(30_000);
  await page.goto(`${server.url}/_health`);
  for (const tokenType of ["mac", "bearer"]) {
    const run = `chromium${tokenType}`;
    const o = { url: server.url, key: KEY, tokenType, run };
    const out = await page.evaluate(`(async () => (${FLOW})(await import("/_sdk/burrow.js"), ${JSON.stringify(o)}))()`);
    expectFlow(out, run, tokenType);
  }
  await page.close();
}, 90_000);

/**
 * Web Push from a page: the client subscribes a real service worker registration (the served module itself, registered
 * as a module worker) and registers the subscription for the signed-in user; a push sent to that user reaches the
 * subscription's push service encrypted for its keys. Chromium's own push service is Google's and out of reach, so the
 * registration's PushManager answers a subscription of the loopback push service (its keys made by the test), and
 * records what the client asked of it.
 */
const WEB_PUSH = `async (sdk, o) => {
  const reg = await navigator.serviceWorker.register("/_sdk/burrow.js", { type: "module" });
  for (let i = 0; i < 200 && !reg.active; i++) await new Promise((r) => setTimeout(r, 25));
  const pm = reg.pushManager;
  const asked = [];
  let current = null;
  pm.getSubscription = async () => current;
  pm.subscribe = async (options) => {
    asked.push(options);
    current = { endpoint: o.sub.endpoint, expirationTime: null, toJSON: () => o.sub };
    return current;
  };
  const b = sdk.connect({ url: o.url, publicKey: o.key, version: 0 });
  await b.users.signup({ username: o.user, password: "web push pw" });
  await b.users.login({ username: o.user, password: "web push pw" });
  const first = await b.push.subscribeWebPush(reg, { vapidPublicKey: o.vapid });
  const again = await b.push.subscribeWebPush(reg, { vapidPublicKey: o.vapid });
  const out = { active: reg.active?.state, scope: reg.scope, asked, reused: first === again, endpoint: first.endpoint };
  await reg.unregister();
  return out;
}`;

test("in Chromium, push.subscribeWebPush subscribes a service worker registration; a push to the user reaches it", async () => {
  const vapid = generateVapidKeys();
  const web = { allowPrivateEndpoints: true, vapidPublicKey: vapid.publicKey, vapidPrivateKey: vapid.privateKey };
  const settings = await fetch(`${server.url}/_admin/api/settings/development`, {
    method: "PUT",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ push: { web } }),
  });
  expect(settings.status).toBe(200);
  const fake = startWebPushFake(vapid.publicKey);
  const context = await browser.newContext();
  try {
    await context.grantPermissions(["notifications"], { origin: server.url });
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.goto(`${server.url}/_health`);
    const sub = fake.subscribe();
    const o = { url: server.url, key: KEY, vapid: vapid.publicKey, user: "webpushuser", sub: JSON.parse(sub.token) };
    const out = await page.evaluate(`(async () => (${WEB_PUSH})(await import("/_sdk/burrow.js"), ${JSON.stringify(o)}))()`);
    expect(out).toEqual({
      active: "activated",
      scope: `${server.url}/_sdk/`,
      asked: [{ userVisibleOnly: true, applicationServerKey: vapid.publicKey }],
      reused: true,
      endpoint: sub.endpoint,
    });
    const sent = await fetch(`${server.url}/_push/notifications`, {
      method: "POST",
      headers: { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ payload: { message: "to the page's user" }, users: ["webpushuser"] }),
    });
    expect(await sent.json()).toEqual({ queued: 1 });
    for (let i = 0; i < 300 && fake.deliveries.length === 0; i++) await Bun.sleep(25);
    expect(fake.deliveries.map((d) => [d.id, d.payload])).toEqual([[sub.id, { message: "to the page's user" }]]);
    expect(fake.rejections).toEqual([]);
  } finally {
    await context.close();
    fake.stop();
  }
}, 60_000);

/** The module fetched from the server into a file, imported by a script that runs the flow and prints what it saw. */
async function runtimeFlow(cmd: string[], name: string, tokenType: string, from = "./burrow.mjs"): Promise<any> {
  const folder = join(dir, `${name}-${tokenType}`);
  rmSync(folder, { recursive: true, force: true });
  Bun.spawnSync(["mkdir", "-p", folder]);
  writeFileSync(join(folder, "burrow.mjs"), await (await fetch(`${server.url}/_sdk/burrow.js`)).text());
  const o = { url: server.url, key: KEY, tokenType, run: `${name}${tokenType}` };
  writeFileSync(
    join(folder, "run.mjs"),
    `import * as sdk from ${JSON.stringify(from)};\nconst out = await (${FLOW})(sdk, ${JSON.stringify(o)});\nconsole.log(JSON.stringify(out));\n`,
  );
  const p = Bun.spawn([...cmd, join(folder, "run.mjs")], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), 60_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${name} exited ${code}: ${stderr}`);
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

test("in Bun, the module fetched from the server runs the flow with MAC and with bearer tokens", async () => {
  for (const tokenType of ["mac", "bearer"])
    expectFlow(await runtimeFlow([process.execPath], "bun", tokenType), `bun${tokenType}`, tokenType);
}, 90_000);

test("in Node, the module fetched from the server runs the flow with MAC and with bearer tokens", async () => {
  expect(Number(/^v(\d+)/.exec(Bun.spawnSync(["node", "--version"]).stdout.toString())?.[1])).toBeGreaterThanOrEqual(20);
  for (const tokenType of ["mac", "bearer"]) expectFlow(await runtimeFlow(["node"], "node", tokenType), `node${tokenType}`, tokenType);
}, 90_000);

test("in Deno, the module (fetched, then imported from its URL) runs the flow with MAC and with bearer tokens", async () => {
  // Deno from its npm build (scripts/install-deno.mjs, into .cache/deno); network access to the server only.
  const deno = execFileSync("node", [join(import.meta.dir, "../../scripts/install-deno.mjs")], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  const cmd = [deno, "run", "--quiet", `--allow-net=${new URL(server.url).host},127.0.0.1:1`];
  // MAC from the fetched file; bearer imported straight from the server's URL, as the README shows for Deno.
  expectFlow(await runtimeFlow(cmd, "deno", "mac"), "denomac", "mac");
  const fromServer = [...cmd, `--allow-import=${new URL(server.url).host}`];
  expectFlow(await runtimeFlow(fromServer, "deno", "bearer", `${server.url}/_sdk/burrow.js`), "denobearer", "bearer");
}, 120_000);
