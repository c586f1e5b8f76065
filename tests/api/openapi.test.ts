// The OpenAPI 3.1 document: valid by a well-kept parser, covering every route the app serves, served without
// credentials with a readable reference beside it (a page of the server's own, with the pinned renderer, reading
// the document from its JSON route; in the browser: tests/e2e/docs.test.ts); `t` schema failures keep the
// {"error": ...} shape and 400.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { compileErrors, validate } from "@readme/openapi-parser";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { listen } from "../helpers/listen.ts";
import { ROOT } from "../helpers/spawn.ts";

let t: TestApp;
let doc: {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { tags?: string[]; summary?: string; security?: unknown[] }>>;
};
beforeAll(async () => {
  t = await makeTestApp();
  const r = await t.app.handle(new Request("http://localhost/_admin/api/openapi.json"));
  expect(r.status).toBe(200);
  doc = (await r.json()) as typeof doc;
});
afterAll(() => t.close());

test("the document is valid OpenAPI 3.1", async () => {
  expect(doc.openapi).toStartWith("3.1.");
  expect(doc.info.version).toBe(t.burrow.version);
  const result = await validate(structuredClone(doc) as never);
  if (!result.valid) throw new Error(compileErrors(result));
  expect(result.valid).toBe(true);
});

test("every route the app serves is in it, with a tag and a summary", () => {
  const served = t.app.routes.filter((r) => r.path !== "/_admin/api/openapi.json" && !["HEAD", "OPTIONS"].includes(r.method));
  expect(served.length).toBeGreaterThan(20);
  const missing = served
    .filter((r) => !doc.paths[r.path.replace(/:([^/]+)/g, "{$1}")]?.[r.method.toLowerCase()])
    .map((r) => `${r.method} ${r.path}`);
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

test("the readable reference is a page of the server's own: the pinned renderer from this origin, the document from its JSON route", async () => {
  const bare = await t.app.handle(new Request("http://localhost/_admin/docs"));
  expect([bare.status, bare.headers.get("location")]).toEqual([308, "/_admin/docs/"]);
  const r = await t.app.handle(new Request("http://localhost/_admin/docs/"));
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/html");
  const html = await r.text();
  expect(html).toContain('<openapi-explorer spec-url="/_admin/api/openapi.json">');
  // The document is not in the markup: the page fetches it.
  expect(html).not.toContain(doc.paths["/{schema}"]!.get!.summary!);
  // Everything the page loads is its own, under /_admin/docs/; nothing from a CDN.
  const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
  expect(refs.filter((u) => u !== "data:,").every((u) => u.startsWith("/_admin/docs/"))).toBe(true);
  expect(html).not.toMatch(/https?:\/\//);
  // The script is the renderer at the version package.json pins, served like the console's chunks.
  const pinned: string = (await Bun.file(`${ROOT}/package.json`).json()).dependencies["openapi-explorer"];
  expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  const script = refs.find((u) => u.endsWith(".js"))!;
  const js = await t.app.handle(new Request(`http://localhost${script}`, { headers: { "accept-encoding": "br" } }));
  expect(js.status).toBe(200);
  expect(js.headers.get("content-type")).toContain("javascript");
  expect(js.headers.get("content-encoding")).toBe("br");
  expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(js.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  const plain = await (await t.app.handle(new Request(`http://localhost${script}`))).text();
  expect(plain).toContain(`OpenAPI Explorer ${pinned}`);
  expect(plain).toContain('customElements.define("openapi-explorer"');
  // Neither needs a token; an unknown file is a JSON 404.
  const missing = await t.app.handle(new Request("http://localhost/_admin/docs/nope.js"));
  expect([missing.status, ((await missing.json()) as { error: string }).error]).toEqual([404, 'no API reference file "nope.js"']);
});

test("on a listening server (Bun's native router, where /:schema/:id could claim /_admin/docs) the page and its files are served", async () => {
  const s = listen(t);
  try {
    const bare = await fetch(`${s.url}/_admin/docs`, { redirect: "manual" });
    expect([bare.status, bare.headers.get("location")]).toEqual([308, "/_admin/docs/"]);
    const page = await fetch(`${s.url}/_admin/docs`);
    expect([page.status, page.url]).toEqual([200, `${s.url}/_admin/docs/`]);
    const html = await page.text();
    expect(html).toContain("<openapi-explorer");
    for (const ref of [...html.matchAll(/(?:src|href)="(\/_admin\/docs\/[^"]+)"/g)].map((m) => m[1]!)) {
      const file = await fetch(`${s.url}${ref}`);
      expect([ref, file.status]).toEqual([ref, 200]);
    }
    expect((await fetch(`${s.url}/_admin/api/openapi.json`)).status).toBe(200);
  } finally {
    s.stop();
  }
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
