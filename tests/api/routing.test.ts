// Routing through the Elysia app: static paths before parameters, percent-decoding, 404 for unknown paths,
// 405 with Allow for a known path and another method, trailing slashes, HEAD, and the reserved "_" prefix.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/todo", { fields: { title: { type: "string" } } });
  expect((await t.request("POST", "/todo", { body: { todo_id: "a b/c", title: "slash" } })).status).toBe(201);
});
afterAll(() => t.close());

test("static routes win over parameters", async () => {
  expect((await t.request("GET", "/_health", { key: null, version: null })).body.status).toBe("ok");
  expect((await t.admin("GET", "/keys")).body.development.publicKey).toBeString();
  expect((await t.admin("GET", "/schemas/todo")).body.name).toBe("todo");
});

test("parameters are percent-decoded; a malformed encoding is a 400", async () => {
  const r = await t.request("GET", "/todo/a%20b%2Fc");
  expect([r.status, r.body.title]).toEqual([200, "slash"]);
  const bad = await t.request("GET", "/todo/%zz");
  expect(bad.status).toBe(400);
  expect(bad.body.error).toContain("malformed percent-encoding");
});

test("every kind of route refuses a malformed escape the same way: data, user endpoints, push, admin", async () => {
  const cases: [string, string, Parameters<TestApp["request"]>[2]?][] = [
    ["GET", "/todo/%E0%A4%A"],
    ["GET", "/t%zzdo"],
    ["PUT", "/todo/%zz", { body: { title: "x" } }],
    ["DELETE", "/todo/x/tags/a,%zz"],
    ["GET", "/us%zzer/login?username=a&password=b"],
    ["POST", "/_push/tokens/ios/%zz", { body: {} }],
    ["DELETE", "/_push/tokens/ios/%zz"],
  ];
  for (const [method, path, opts] of cases) {
    const r = await t.request(method, path, opts);
    expect([method, path, r.status, r.body?.error]).toEqual([method, path, 400, "malformed percent-encoding in the URL path"]);
  }
  // Admin routes: after the token check (no token is 401 whatever the path), then the same 400.
  expect((await t.request("GET", "/_admin/api/schemas/%zz", { key: null, version: null })).status).toBe(401);
  const admin = await t.admin("GET", "/schemas/%zz");
  expect([admin.status, admin.body.error]).toEqual([400, "malformed percent-encoding in the URL path"]);
});

test("unknown paths are 404 {error}; paths starting with _ are never schemas", async () => {
  for (const path of ["/a/b/c/d/e", "/", "//x", "/_anything", "/_anything/x"]) {
    const r = await t.request("GET", path);
    expect([path, r.status, typeof r.body?.error]).toEqual([path, 404, "string"]);
  }
});

test("a known path with another method is 405 with the allowed methods", async () => {
  const patch = await t.request("PATCH", "/todo/x");
  expect(patch.status).toBe(405);
  expect(patch.headers.get("allow")?.split(", ").sort()).toEqual(
    ["DELETE", "GET", "HEAD", "POST", "PUT"].filter((m) => m !== "POST").sort(),
  );
  const health = await t.request("DELETE", "/_health", { key: null, version: null });
  expect([health.status, health.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
});

test("one trailing slash is ignored", async () => {
  const r = await t.request("GET", "/todo/");
  expect(r.status).toBe(200);
  expect(r.body.map((o: { title: string }) => o.title)).toEqual(["slash"]);
});

test("HEAD answers the GET's status and headers without a body", async () => {
  const r = await t.request("HEAD", "/todo/a%20b%2Fc");
  expect([r.status, r.text]).toEqual([200, ""]);
  expect(r.headers.get("content-type")).toContain("application/json");
  expect((await t.request("HEAD", "/todo/missing")).status).toBe(404);
});
