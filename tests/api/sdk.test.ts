// The client library's route: /_sdk/burrow.js is one ES module with a strong ETag (304 on revalidation), a short
// public cache, br or gzip as accepted and CORS open to every origin; /_sdk/burrow.d.ts its declarations.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

test("GET /_sdk/burrow.js is a module with a strong ETag; If-None-Match answers 304", async () => {
  const r = await t.request("GET", "/_sdk/burrow.js", { key: null, version: null });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/javascript;charset=utf-8");
  expect(r.headers.get("cache-control")).toBe("public, max-age=300");
  expect(r.headers.get("access-control-allow-origin")).toBe("*");
  const etag = r.headers.get("etag")!;
  expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  expect(r.text).toContain("export{");
  expect(r.text).toContain("connect");
  const again = await t.request("GET", "/_sdk/burrow.js", { key: null, version: null, headers: { "if-none-match": etag } });
  expect([again.status, again.text, again.headers.get("etag")]).toEqual([304, "", etag]);
  const other = await t.request("GET", "/_sdk/burrow.js", { key: null, version: null, headers: { "if-none-match": '"other"' } });
  expect(other.status).toBe(200);
});

test("a page of another origin may import it; the edge's per-environment CORS does not narrow it", async () => {
  expect((await t.admin("PUT", "/settings/development", { cors: { origins: ["https://app.example.com"] } })).status).toBe(200);
  const r = await t.request("GET", "/_sdk/burrow.js", { key: null, version: null, headers: { origin: "https://elsewhere.example" } });
  expect([r.status, r.headers.get("access-control-allow-origin")]).toEqual([200, "*"]);
});

test("the body goes br or gzip as accepted", async () => {
  for (const enc of ["br", "gzip"]) {
    const r = await t.app.handle(new Request("http://localhost/_sdk/burrow.js", { headers: { "accept-encoding": enc } }));
    expect([r.status, r.headers.get("content-encoding")]).toEqual([200, enc]);
  }
});

test("GET /_sdk/burrow.d.ts declares connect over a SchemaMap; other names are 404", async () => {
  const r = await t.request("GET", "/_sdk/burrow.d.ts", { key: null, version: null });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("application/typescript;charset=utf-8");
  expect(r.text).toContain("export function connect<S extends SchemaMap = AnySchemas>(options: ConnectOptions): Burrow<S>;");
  expect((await t.request("GET", "/_sdk/nothing.js", { key: null, version: null })).status).toBe(404);
});
