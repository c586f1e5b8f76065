// The admin API's data browser, push and code-call routes (docs/api/admin.md#data-browser): objects of any schema in either environment
// read and written as the server, queries in the public API's syntax, totals only when asked, production through
// a deployed version, role limits, and the ugly inputs.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, makeTestApp, type TestApp, type TestResponse } from "../helpers/app.ts";

let t: TestApp;
let viewer: string;
let owner: string;

beforeAll(async () => {
  t = await makeTestApp();
  const put = await t.admin("PUT", "/schemas/item", {
    fields: {
      title: { type: "string" },
      n: { type: "integer" },
      done: { type: "boolean" },
      tags: { type: "array", items: "string" },
      at: { type: "geopoint" },
      secret_note: { type: "string" },
    },
    permissions: { create: "none", read: "none", update: "none", delete: "none" },
    indexes: [["n"]],
  });
  expect(put.status).toBe(201);
  owner = (await t.request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null })).body.token;
  expect((await as(owner, "POST", "/admins", { email: "v@example.com", password: "viewer pass 1", role: "viewer" })).status).toBe(201);
  viewer = (
    await t.request("POST", "/_admin/api/login", { body: { email: "v@example.com", password: "viewer pass 1" }, key: null, version: null })
  ).body.token;
});
afterAll(() => t.close());

function as(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
  return t.request(method, `/_admin/api${path}`, {
    body,
    key: null,
    version: null,
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
}
const adm = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => as(owner, method, path, body, headers);

describe("data browser", () => {
  test("creates, reads, updates and deletes where every permission is none (the server itself)", async () => {
    const c = await adm("POST", "/data/development/item", {
      item_id: "a1",
      title: "first",
      n: 1,
      done: false,
      tags: ["x"],
      at: { lat: 52.5, lon: 13.4 },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ item_id: "a1", title: "first", n: 1, at: { lat: 52.5, lon: 13.4 } });
    expect((await adm("GET", "/data/development/item/a1")).body.title).toBe("first");
    const u = await adm("PUT", "/data/development/item/a1", { title: "changed", done: true });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ title: "changed", done: true, n: 1 });
    expect((await adm("DELETE", "/data/development/item/a1")).status).toBe(200);
    expect((await adm("GET", "/data/development/item/a1")).status).toBe(404);
    // The public API still refuses (permissions are none).
    expect((await t.request("GET", "/item/a1")).status).not.toBe(200);
  });

  test("lists with the public query syntax; Range pages are counted only with _count=true", async () => {
    for (let i = 0; i < 30; i++)
      expect(
        (
          await adm("POST", "/data/development/item", {
            item_id: `k${String(i).padStart(2, "0")}`,
            title: `t${i}`,
            n: i,
            done: i % 2 === 0,
          })
        ).status,
      ).toBe(201);
    const page = await adm("GET", "/data/development/item?done=true", undefined, { range: "objects=0-4", "x-service-orderby": "n:desc" });
    expect(page.status).toBe(206);
    expect(page.headers.get("content-range")).toBe("objects 0-4/*");
    expect(page.body.map((o: { n: number }) => o.n)).toEqual([28, 26, 24, 22, 20]);
    const counted = await adm("GET", "/data/development/item?done=true&_count=true", undefined, {
      range: "objects=5-9",
      "x-service-orderby": "n:desc",
    });
    expect(counted.headers.get("content-range")).toBe("objects 5-9/15");
    const filtered = await adm("GET", "/data/development/item?n[gte]=25&n[lt]=28", undefined, { "x-service-select": "n" });
    expect(filtered.status).toBe(200);
    expect(filtered.body.map((o: { n: number }) => o.n).sort()).toEqual([25, 26, 27]);
    expect(Object.keys(filtered.body[0]).sort()).toEqual(["item_id", "n"]);
    const beyond = await adm("GET", "/data/development/item", undefined, { range: "objects=100-120" });
    expect(beyond.body).toEqual([]);
  });

  test("bad input: unknown environment, schema or field, bad operators, _count, _version and bodies", async () => {
    expect((await adm("GET", "/data/staging/item")).status).toBe(404);
    const unknown = await adm("GET", "/data/development/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toContain('"nope"');
    expect((await adm("GET", "/data/development/item?nofield=1")).status).toBe(400);
    expect((await adm("GET", "/data/development/item?n[zz]=1")).status).toBe(400);
    expect((await adm("GET", "/data/development/item?_count=yes")).status).toBe(400);
    expect((await adm("GET", "/data/production/item?_version=x")).status).toBe(400);
    expect((await adm("GET", "/data/development/item?%27%3Bdrop=1")).status).toBe(400);
    expect((await adm("POST", "/data/development/item", [{ title: "batch" }])).status).toBe(400);
    expect((await adm("POST", "/data/development/item", { n: "not a number" })).status).toBe(400);
    expect((await adm("POST", "/data/development/item", { undeclared: 1 })).status).toBe(400);
    const proto = await t.request("POST", "/_admin/api/data/development/item", {
      raw: '{"__proto__": {"x": 1}, "title": "p"}',
      key: null,
      version: null,
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
    });
    expect([201, 400]).toContain(proto.status);
    const malformed = await t.request("POST", "/_admin/api/data/development/item", {
      raw: "{",
      key: null,
      version: null,
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect((await adm("PUT", "/data/development/item/missing", { title: "x" })).status).toBe(404);
  });

  test("production: 404 before a deploy, then the newest version's schemas or a chosen one", async () => {
    const before = await adm("GET", "/data/production/item");
    expect(before.status).toBe(404);
    expect(before.body.error).toContain("no deployed version");
    expect((await adm("POST", "/deploy", {})).status).toBe(200);
    expect((await adm("POST", "/data/production/item", { item_id: "p1", title: "in production" })).status).toBe(201);
    expect((await adm("GET", "/data/production/item/p1")).body.title).toBe("in production");
    expect((await adm("GET", "/data/production/item?_version=1")).status).toBe(200);
    expect((await adm("GET", "/data/production/item?_version=9")).status).toBe(404);
    // Development is untouched.
    expect((await adm("GET", "/data/development/item/p1")).status).toBe(404);
  });

  test("roles: a viewer reads but cannot write; no token is 401", async () => {
    expect((await as(viewer, "GET", "/data/development/item")).status).toBe(200);
    expect((await as(viewer, "POST", "/data/development/item", { title: "v" })).status).toBe(403);
    expect((await as(viewer, "PUT", "/data/development/item/k01", { title: "v" })).status).toBe(403);
    expect((await as(viewer, "DELETE", "/data/development/item/k01")).status).toBe(403);
    expect((await t.request("GET", "/_admin/api/data/development/item", { key: null, version: null })).status).toBe(401);
  });
});

describe("settings spec", () => {
  test("describes every section with leaf types and hides secret defaults", async () => {
    const r = await adm("GET", "/settings-spec");
    expect(r.status).toBe(200);
    expect(r.body.smtp.port).toMatchObject({ type: "integer", min: 1, max: 65535, default: { development: 587, production: 587 } });
    expect(r.body.smtp.password).toMatchObject({ type: "string", secret: true, default: { development: null, production: null } });
    expect(r.body.files.store.oneOf).toEqual(["local", "s3"]);
    expect(Object.keys(r.body)).toEqual(expect.arrayContaining(["cors", "rateLimits", "push", "social", "code", "files"]));
  });
});

describe("push from the console", () => {
  test("sends to users and reports the queue; bad bodies are 400; viewers cannot send", async () => {
    const sent = await adm("POST", "/push/send?env=development", { payload: { data: { m: "hi" } }, users: ["nobody"] });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ queued: 0 });
    expect((await adm("POST", "/push/send?env=development", { users: ["x"] })).status).toBe(400);
    expect((await adm("POST", "/push/send?env=development", { payload: {}, extra: 1 })).status).toBe(400);
    expect((await adm("POST", "/push/send?env=elsewhere", { payload: {} })).status).toBe(404);
    expect((await as(viewer, "POST", "/push/send?env=development", { payload: {} })).status).toBe(403);
    const expired = await as(viewer, "GET", "/push/expired?env=development");
    expect(expired.status).toBe(200);
    expect(expired.body).toEqual([]);
  });
});

describe("custom code test calls", () => {
  test("calls a method with params and body and shows status, body and time", async () => {
    const source = `export const methods = [
      { name: "echo", params: ["who"], execute(req) { return { body: { who: req.params.who ?? null, body: req.body, verb: req.verb } }; } },
    ];`;
    const up = await t.request("PUT", "/_admin/api/code", {
      raw: source,
      key: null,
      version: null,
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/javascript" },
    });
    expect(up.status).toBe(200);
    const r = await adm("POST", "/code/call", {
      env: "development",
      method: "echo",
      verb: "POST",
      params: { who: "ann" },
      body: '{"a":1}',
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe(200);
    expect(JSON.parse(r.body.body)).toMatchObject({ who: "ann", verb: "POST" });
    expect(typeof r.body.ms).toBe("number");
    expect((await adm("POST", "/code/call", { env: "development", method: "nothere" })).status).toBe(404);
    expect((await adm("POST", "/code/call", { env: "development", method: "echo", verb: "PATCH" })).status).toBe(400);
    expect((await adm("POST", "/code/call", { env: "development", method: "echo", params: { n: 1 } })).status).toBe(400);
    expect((await adm("POST", "/code/call", { env: "development", method: "Bad Name" })).status).toBe(400);
    expect((await as(viewer, "POST", "/code/call", { env: "development", method: "echo" })).status).toBe(403);
  });
});
