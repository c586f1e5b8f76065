// Custom code services through real method calls: the example bundle (examples/custom-code, bundled as
// `burrow code deploy` bundles it) exercising data, push, log, cache, config and http, then each service's
// edges: cache limits and TTLs, config names, log levels and environments, push operations, and the http
// service's SSRF guard (loopback, IPv6 loopback, metadata address, a name resolving to loopback, a redirect, a
// keep-alive connection an unguarded caller opened to the same host and port).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bundleCode } from "../../src/cli/code-deploy.ts";
import { type Lookup, outboundRequest } from "../../src/net/outbound-request.ts";
import { isPrivateAddress, publicOnlyLookup } from "../../src/net/public-address.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth } from "../helpers/sign.ts";
import { upload } from "../helpers/code.ts";

const EXAMPLE = join(import.meta.dir, "../../examples/custom-code");
let t: TestApp;
let upstream: ReturnType<typeof Bun.serve>;
let redirector: ReturnType<typeof Bun.serve>;
const hits: string[] = [];

const PROBE = `
export const methods = [
  { name: "fetch_url", params: ["url"], async execute(r, s) {
      try { const res = await s.http.get(r.params.url, { timeoutMs: 2000 }); return { body: { status: res.status, body: res.body, truncated: res.truncated } }; }
      catch (e) { return { status: 502, body: { error: String(e.message) } }; } } },
  { name: "post_url", params: ["url"], async execute(r, s) { const res = await s.http.post(r.params.url, r.body, { headers: { "content-type": "text/plain", "x-k": "v" }, maxBytes: 5 }); return { body: res }; } },
  { name: "cache_op", async execute(r, s) { const [op, ...args] = JSON.parse(r.body); try { return { body: { v: await s.cache[op](...args) } }; } catch (e) { return { status: 400, body: { error: e.message } }; } } },
  { name: "config_get", params: ["k"], async execute(r, s) { return { body: { v: await s.config.get(r.params.k) } }; } },
  { name: "logs", async execute(r, s) { await s.log.debug("d-line"); await s.log.info("i-line", { n: 1 }); await s.log.warn("w-line"); s.log.error("e-line", [1, 2]); return { body: {} }; } },
  { name: "push_op", async execute(r, s) { const [op, ...args] = JSON.parse(r.body); try { return { body: { v: await s.push[op](...args) ?? null } }; } catch (e) { return { status: 400, body: { error: e.message } }; } } },
];`;

const IOS = "a".repeat(64);

beforeAll(async () => {
  // "redirector.test" resolves to 127.0.0.2, which this test's guard treats as public; everything else on
  // loopback stays private, so a redirect from it to 127.0.0.1 must be refused.
  const lookup = publicOnlyLookup(
    (host, cb) =>
      host === "redirector.test"
        ? cb(null, [{ address: "127.0.0.2", family: 4 }])
        : host === "localhost" || host === "idp.test"
          ? cb(null, [{ address: "127.0.0.1", family: 4 }])
          : cb(Object.assign(new Error("no such name"), { code: "ENOTFOUND" }), []),
    (bytes) => !(bytes.length === 4 && bytes[0] === 127 && bytes[3] === 2) && isPrivateAddress(bytes),
  );
  t = await makeTestApp({ open: { httpLookup: lookup } });
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      hits.push(`${req.method} ${url.pathname}${url.search} ${req.headers.get("authorization") ?? ""}`);
      if (url.pathname === "/forecast") return Response.json({ city: url.searchParams.get("city"), sky: "clear" });
      if (url.pathname === "/echo") return new Response(`${req.method}:${req.headers.get("x-k")}:${await req.text()}`);
      return new Response("secret");
    },
  });
  redirector = Bun.serve({
    hostname: "127.0.0.2",
    port: 0,
    fetch: () => new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${upstream.port}/secret` } }),
  });
  for (const f of ["todo.json"])
    expect((await t.admin("PUT", "/schemas/todo", JSON.parse(readFileSync(join(EXAMPLE, "schemas", f), "utf8")))).status).toBe(201);
});
afterAll(async () => {
  upstream.stop(true);
  redirector.stop(true);
  await t.close();
});

describe("the example bundle", () => {
  beforeAll(async () => {
    const r = await upload(t, await bundleCode(EXAMPLE));
    expect(r.status).toBe(200);
  });

  test("hooks: a todo needs a title (422), gets a priority, and its exports list the hooks and the nightly job", async () => {
    const r = await upload(t, await bundleCode(EXAMPLE));
    expect(r.body.hooks).toEqual({ todo: ["beforeCreate", "beforeUpdate", "afterCreate"] });
    expect(r.body.jobs).toEqual([{ name: "nightly_cleanup", schedule: "0 3 * * *", timeoutMs: 600000 }]);
    const empty = await t.request("POST", "/todo", { body: { title: "   " } });
    expect([empty.status, empty.body]).toEqual([422, { error: "a todo needs a title" }]);
    const made = await t.request("POST", "/todo", { body: { title: "  bread " } });
    expect([made.status, made.body.title, made.body.priority]).toEqual([201, "bread", 1]);
    const cleared = await t.request("PUT", `/todo/${made.body.todo_id}`, { body: { title: "" } });
    expect([cleared.status, cleared.body]).toEqual([422, { error: "a todo keeps a title" }]);
    expect((await t.request("DELETE", `/todo/${made.body.todo_id}`)).status).toBeLessThan(300);
  });

  test("data, cache and log: add, list (cached), close conditionally, find near, report, clear", async () => {
    await t.request("POST", "/user", { body: { username: "ex_ann", password: "ex-ann-password" } });
    const creds = (await t.request("POST", "/user/accessToken", { body: { username: "ex_ann", password: "ex-ann-password" } })).body;
    const add = (body: unknown, signed = false) =>
      t.request("POST", "/todo_add", { body, headers: signed ? { authorization: macAuth(creds, "POST", "/todo_add") } : {} });
    const a = await add({ title: "milk", priority: 2, lat: 52.52, lon: 13.405 }, true);
    expect([a.status, a.body.title, a.body.assignee, a.body.done]).toEqual([201, "milk", "ex_ann", false]);
    await add({ title: "bread", priority: 5, lat: 48.1, lon: 11.6 });
    await add({ title: "eggs", priority: 2 });
    expect((await add({ nope: 1 })).status).toBe(400);

    const first = await t.request("GET", "/todo_open");
    expect([first.headers.get("x-cache"), first.body.total, first.body.todos.map((x: { title: string }) => x.title)]).toEqual([
      "miss",
      3,
      ["bread", "eggs", "milk"],
    ]);
    expect(Object.keys(first.body.todos[0]).sort()).toEqual(["priority", "title", "todo_id"]);
    expect((await t.request("GET", "/todo_open")).headers.get("x-cache")).toBe("hit");

    const done = await t.request("PUT", "/todo_done", { body: { id: a.body.todo_id } });
    expect([done.status, done.body.done, done.body.done_count]).toEqual([200, true, 1]);
    const again = await t.request("PUT", "/todo_done", { body: { id: a.body.todo_id } });
    expect([again.status, again.body.error]).toEqual([409, "no open todo with that id"]);
    const stored = await t.request("GET", `/todo/${a.body.todo_id}`);
    expect([stored.body.done, stored.body.done_count]).toEqual([true, 1]);
    expect((await t.request("GET", "/todo_open")).body.total).toBe(2);

    const near = await t.request("GET", "/todo_near?lat=52.5&lon=13.4&km=1000");
    expect(near.body.map((x: { title: string }) => x.title)).toEqual(["milk", "bread"]);
    expect(near.body[0].location.distance).toBeGreaterThan(0);

    const report = await t.request("GET", "/report");
    expect([report.text, report.headers.get("content-type"), report.headers.get("content-disposition")]).toEqual([
      "open: 2\ndone: 1\n",
      "text/plain; charset=utf-8",
      'attachment; filename="report.txt"',
    ]);
    expect((await t.request("DELETE", "/todo_clear")).body).toEqual({ removed: 1 });
    expect((await t.request("GET", `/todo/${a.body.todo_id}`)).status).toBe(404);

    const logs = (await t.admin("GET", "/logs?source=code")).body;
    expect(
      logs.filter((l: { message: string }) => l.message === "todo added").map((l: { details: { by: string | null } }) => l.details.by),
    ).toEqual([null, null, "ex_ann"]);
    expect(logs.find((l: { message: string }) => l.message === "todo added")).toMatchObject({
      level: "info",
      env: "development",
      source: "code",
    });
    expect(logs.find((l: { message: string }) => l.message === "todo done")).toMatchObject({
      level: "debug",
      details: { id: a.body.todo_id },
    });
  });

  test("push: a signed-in user registers a device, a reminder is queued to it", async () => {
    await t.request("POST", "/user", { body: { username: "ex_bob", password: "ex-bob-password" } });
    const creds = (await t.request("POST", "/user/accessToken", { body: { username: "ex_bob", password: "ex-bob-password" } })).body;
    expect((await t.request("POST", "/device", { body: { type: "ios", token: IOS } })).status).toBe(401);
    const dev = await t.request("POST", "/device", {
      body: { type: "ios", token: IOS },
      headers: { authorization: macAuth(creds, "POST", "/device") },
    });
    expect(dev.body).toEqual({ tokens: [{ type: "ios", token: IOS }] });
    const remind = await t.request("POST", "/remind", { body: { user: "ex_bob", message: "buy milk" } });
    expect(remind.body).toEqual({ queued: 1 });
    const recent = await t.admin("GET", "/push/notifications?env=development&limit=1");
    expect(recent.body[0]).toMatchObject({ queued: 1 });
  });

  test("http and config: the weather method calls the URL from the settings with the key from the settings", async () => {
    expect((await t.request("GET", "/weather?city=Oslo")).status).toBe(503);
    const set = await t.admin("PUT", "/settings/development", {
      code: { config: { WEATHER_URL: `http://127.0.0.1:${upstream.port}/forecast`, WEATHER_KEY: "k-123" } },
    });
    expect(set.body.code.config).toEqual({ set: true, keys: ["WEATHER_KEY", "WEATHER_URL"] });
    const refused = await t.request("GET", "/weather?city=Oslo");
    expect(refused.status).toBe(502);
    expect(refused.body.error).toContain("is not allowed");
    await t.admin("PUT", "/settings/development", { code: { http: { allowPrivate: true } } });
    const ok = await t.request("GET", "/weather?city=Oslo");
    expect(ok.body).toEqual({ upstream: 200, forecast: { city: "Oslo", sky: "clear" } });
    expect(hits.at(-1)).toBe("GET /forecast?city=Oslo Bearer k-123");
    await t.admin("PUT", "/settings/development", { code: { http: { allowPrivate: null } } });
  });

  test("bytes and identity", async () => {
    const px = await t.app.handle(new Request("http://localhost/pixel", { headers: { "x-service-api-key": "dev-public-key-0001" } }));
    expect([px.headers.get("content-type"), (await px.arrayBuffer()).byteLength]).toEqual(["image/gif", 43]);
    expect((await t.request("GET", "/hello_world?name=Ann")).body).toEqual({ msg: "Hello, Ann" });
    expect((await t.request("GET", "/whoami")).body).toEqual({ user: null, apiVersion: 0, environment: "development", verb: "GET" });
  });
});

describe("services one by one", () => {
  beforeAll(async () => {
    expect((await upload(t, PROBE)).status).toBe(200);
  });
  const call = (m: string, body: unknown) => t.request("POST", `/${m}`, { body });

  test("http: loopback, IPv6 loopback, metadata, a name resolving to loopback and a redirect to loopback are refused", async () => {
    const port = upstream.port;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::1]:${port}/`,
      "http://169.254.169.254/latest/meta-data/",
      `http://localhost:${port}/`,
      `http://redirector.test:${redirector.port}/`,
      "http://10.0.0.1/",
      "file:///etc/passwd",
    ]) {
      const r = await t.request("GET", `/fetch_url?url=${encodeURIComponent(url)}`);
      expect([url, r.status]).toEqual([url, 502]);
      expect(r.body.error).toMatch(/not allowed|only http and https/);
    }
    expect(hits.filter((h) => h.includes("/secret"))).toEqual([]);
  });

  test("http: a connection kept open by an unguarded caller to a private name does not carry custom code's request", async () => {
    // A social provider call (unguarded: the administrator's base URL) to a name resolving to loopback...
    const url = `http://idp.test:${upstream.port}/admin`;
    const toLoopback: Lookup = (_host, options, cb) =>
      typeof options === "object" && options?.all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4);
    const provider = await outboundRequest(url, {
      method: "GET",
      headers: {},
      timeoutMs: 2000,
      maxBody: 1024,
      allowPrivate: true,
      unguardedLookup: toLoopback,
    });
    expect(provider.status).toBe(200);
    const seen = hits.length;
    // ...then custom code asks for the same host and port: its own connection, looked up and refused.
    const r = await t.request("GET", `/fetch_url?url=${encodeURIComponent(url)}`);
    expect(r.status).toBe(502);
    expect(r.body.error).toContain("idp.test resolves to a private address (127.0.0.1)");
    expect(hits.length).toBe(seen);
  });

  test("http: with allowPrivate, redirects are followed, bodies and headers sent, answers capped", async () => {
    await t.admin("PUT", "/settings/development", { code: { http: { allowPrivate: true } } });
    try {
      // The redirector answers 302 to the loopback upstream: followed now.
      const direct = await t.request("GET", `/fetch_url?url=${encodeURIComponent(`http://127.0.0.2:${redirector.port}/`)}`);
      expect(direct.body).toEqual({ status: 200, body: "secret", truncated: false });
      const post = await t.request("POST", `/post_url?url=${encodeURIComponent(`http://127.0.0.1:${upstream.port}/echo`)}`, {
        raw: "hello",
        headers: { "content-type": "text/plain" },
      });
      expect([post.body.status, post.body.body, post.body.truncated]).toEqual([200, "POST:", true]);
    } finally {
      await t.admin("PUT", "/settings/development", { code: { http: { allowPrivate: null } } });
    }
  });

  test("cache: get/set/delete, TTLs, limits", async () => {
    expect((await call("cache_op", ["get", "k1"])).body).toEqual({ v: null });
    expect((await call("cache_op", ["set", "k1", "v1", 60_000])).status).toBe(200);
    expect((await call("cache_op", ["get", "k1"])).body).toEqual({ v: "v1" });
    expect((await call("cache_op", ["set", "short", "x", 40])).status).toBe(200);
    await Bun.sleep(80);
    expect((await call("cache_op", ["get", "short"])).body).toEqual({ v: null });
    expect((await call("cache_op", ["delete", "k1"])).body).toEqual({ v: true });
    expect((await call("cache_op", ["delete", "k1"])).body).toEqual({ v: false });
    expect((await call("cache_op", ["set", "k".repeat(1025), "v"])).body.error).toBe("cache: keys are at most 1024 bytes");
    expect((await call("cache_op", ["set", "k", "v".repeat(16 * 1024 + 1)])).body.error).toBe("cache: values are at most 16384 bytes");
    expect((await call("cache_op", ["set", "k", { not: "a string" }])).body.error).toBe(
      "cache: values are strings (JSON.stringify objects)",
    );
    expect((await call("cache_op", ["set", "__proto__", "p", 1000])).status).toBe(200);
    expect((await call("cache_op", ["get", "__proto__"])).body).toEqual({ v: "p" });
  });

  test("config: names from the settings, missing ones null, never the object's own properties", async () => {
    await t.admin("PUT", "/settings/development", { code: { config: { API_KEY: "s3cret" } } });
    expect((await t.request("GET", "/config_get?k=API_KEY")).body).toEqual({ v: "s3cret" });
    expect((await t.request("GET", "/config_get?k=MISSING")).body).toEqual({ v: null });
    expect((await t.request("GET", "/config_get?k=__proto__")).body).toEqual({ v: null });
    expect((await t.request("GET", "/config_get?k=toString")).body).toEqual({ v: null });
    expect((await t.admin("GET", "/settings/development")).body.code.config).toEqual({ set: true, keys: ["API_KEY"] });
    expect((await t.admin("PUT", "/settings/development", { code: { config: { "bad name": "x" } } })).status).toBe(400);
    expect((await t.admin("PUT", "/settings/development", { code: { config: { N: 1 } } })).status).toBe(400);
  });

  test("log: every level kept per environment, filtered by level, paged", async () => {
    expect((await t.request("POST", "/logs", { raw: "" })).status).toBe(200);
    await Bun.sleep(10);
    const all = (await t.admin("GET", "/logs?source=code&limit=4")).body;
    expect(all.map((l: { message: string }) => l.message)).toEqual(["e-line", "w-line", "i-line", "d-line"]);
    expect(all[0].details).toEqual([1, 2]);
    expect(all[2].details).toEqual({ n: 1 });
    const warn = (await t.admin("GET", "/logs?source=code&level=warn&limit=2")).body;
    expect(warn.map((l: { level: string }) => l.level)).toEqual(["error", "warn"]);
    const page = (await t.admin("GET", `/logs?source=code&limit=1&before=${all[0].id}`)).body;
    expect(page[0].message).toBe("w-line");
    expect((await t.admin("GET", "/logs?source=code&env=production")).body).toEqual([]);
    expect((await t.admin("GET", "/logs?source=nope")).status).toBe(400);
    expect((await t.admin("GET", "/logs?source=code&level=loud")).status).toBe(400);
  });

  test("push: register, tokens of users, remove, expired, sends; bad tokens are refused", async () => {
    expect((await call("push_op", ["registerToken", "pp_user", { type: "ios", token: IOS }])).status).toBe(200);
    expect((await call("push_op", ["tokensOfUsers", ["pp_user", "nobody"]])).body).toEqual({
      v: { pp_user: [{ type: "ios", token: IOS }], nobody: [] },
    });
    expect((await call("push_op", ["sendToTokens", [{ type: "ios", token: IOS }], { message: "hi" }])).body).toEqual({ v: { queued: 1 } });
    expect((await call("push_op", ["sendToUsers", ["pp_user"], { message: "hi" }])).body).toEqual({ v: { queued: 1 } });
    expect((await call("push_op", ["broadcast", { message: "all" }])).body.v.queued).toBeGreaterThanOrEqual(1);
    expect((await call("push_op", ["expiredTokens", false])).body).toEqual({ v: [] });
    expect((await call("push_op", ["removeToken", { type: "ios", token: IOS }])).body).toEqual({ v: true });
    expect((await call("push_op", ["removeToken", { type: "ios", token: IOS }])).body).toEqual({ v: false });
    expect((await call("push_op", ["registerToken", null, { type: "fax", token: "x" }])).status).toBe(400);
    expect((await call("push_op", ["sendToUsers", "not-a-list", {}])).body.error).toContain("users must be an array");
  });
});
