// The OpenAPI 3.1 document: valid by a well-kept parser, covering every route the app serves, served without
// credentials with a readable reference beside it; `t` schema failures keep the {"error": ...} shape and 400.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { compileErrors, validate } from "@readme/openapi-parser";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let doc: { openapi: string; info: { version: string }; paths: Record<string, Record<string, { tags?: string[]; summary?: string; security?: unknown[] }>> };
beforeAll(async () => {
  t = await makeTestApp();
  const r = await t.app.handle(new Request("http://localhost/_admin/api/openapi.json"));
  expect(r.status).toBe(200);
  doc = (await r.json()) as typeof doc;
});
afterAll(() => t.close());

test("the document is valid OpenAPI 3.1", async () => {
  expect(doc.openapi).toStartWith("3.1.");
  expect(doc.info.version).toBe(t.services.version);
  const result = await validate(structuredClone(doc) as never);
  if (!result.valid) throw new Error(compileErrors(result));
  expect(result.valid).toBe(true);
});

test("every route the app serves is in it, with a tag and a summary", () => {
  const served = t.app.routes.filter((r) => !["/_admin/docs", "/_admin/api/openapi.json"].includes(r.path) && !["HEAD", "OPTIONS"].includes(r.method));
  expect(served.length).toBeGreaterThan(20);
  const missing = served.filter((r) => !doc.paths[r.path.replace(/:([^/]+)/g, "{$1}")]?.[r.method.toLowerCase()]).map((r) => `${r.method} ${r.path}`);
  expect(missing).toEqual([]);
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      expect([path, method, op.tags?.length ?? 0]).toEqual([path, method, 1]);
      expect([path, method, typeof op.summary]).toEqual([path, method, "string"]);
    }
  // Admin routes name their bearer token, except login; datastore routes name the API key.
  expect(doc.paths["/_admin/api/login"]!.post!.security).toBeUndefined();
  expect(doc.paths["/_admin/api/keys"]!.get!.security).toEqual([{ adminBearer: [] }]);
  expect(doc.paths["/{schema}/{id}"]!.get!.security).toContainEqual({ apiKey: [] });
});

test("the readable reference is served beside it", async () => {
  const r = await t.app.handle(new Request("http://localhost/_admin/docs"));
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/html");
  expect(await r.text()).toContain("/_admin/api/openapi.json");
});

test("schema validation failures are 400 with one precise {error} line", async () => {
  const version = await t.admin("POST", "/deploy", { version: "3" });
  expect(version.status).toBe(400);
  expect(version.body).toEqual({ error: 'body.version: expected an integer from 1 to 1000000, got "3"' });
  const unknown = await t.admin("POST", "/deploy", { colour: 1 });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error).toBe("body.colour: unknown member; allowed: version, force, dryRun");
  const query = await t.admin("GET", "/schemas?version=x");
  expect(query.status).toBe(400);
  expect(query.body.error).toStartWith("query.version: expected a string matching");
  const settings = await t.admin("PUT", "/settings/development", [1]);
  expect(settings.status).toBe(400);
  expect(settings.body.error).toStartWith("body: expected a JSON object");
});
