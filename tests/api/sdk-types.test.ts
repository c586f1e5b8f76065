// GET /_sdk/types.d.ts: development's and a deployed production version's declarations, the key and version rules,
// 404 for an undeployed version, the weak ETag and 304; and the declarations typing a sample app
// (tests/fixtures/sdk-app/) with the client's declarations under tsc: a good app passes, a wrong field or value fails.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, makeTestApp, type TestApp, tempDir } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { ROOT } from "../helpers/spawn.ts";

let t: TestApp;
const todo = {
  fields: {
    title: { type: "string" },
    done: { type: "boolean" },
    priority: { type: "integer" },
    tags: { type: "array", items: "string" },
    place: { type: "geopoint" },
    note: { type: "string", visibility: "owner" },
  },
};

/** GET /_sdk/types.d.ts with a key (development's public key unless given) and extra headers. */
async function types(query = "", key: string | null = KEYS.devPublic, headers: Record<string, string> = {}) {
  const h = new Headers(headers);
  if (key !== null) h.set("x-service-api-key", key);
  const r = await t.app.handle(new Request(`http://localhost/_sdk/types.d.ts${query}`, { headers: h }));
  return { status: r.status, headers: r.headers, text: await r.text() };
}

beforeAll(async () => {
  t = await makeTestApp();
  expect((await t.admin("PUT", "/schemas/todo", todo)).status).toBeLessThan(300);
  expect((await upload(t, 'export const methods = [{ name: "hello_world", execute() { return { body: "hi" }; } }];')).status).toBe(200);
  expect((await t.admin("POST", "/deploy", {})).status).toBe(200);
  // Development moves on after the deploy: version 1 keeps the old shape.
  const next = { fields: { ...todo.fields, due: { type: "integer" } } };
  expect((await t.admin("PUT", "/schemas/todo", next)).status).toBeLessThan(300);
});
afterAll(() => t.close());

describe("GET /_sdk/types.d.ts", () => {
  test("development (the development key, version 0 or none): its schemas and methods, as TypeScript", async () => {
    const r = await types();
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/typescript; charset=utf-8");
    expect(r.text).toStartWith("// Burrow API types of development (version 0), generated ");
    expect(r.text).toContain("export interface Todo {");
    expect(r.text).toContain('  "due"?: number;\n');
    expect(r.text).toContain('  "todo_id": string;\n');
    expect(r.text).toContain('"todo": Todo;');
    expect(r.text).toContain('export type MethodName = "hello_world";');
    // The default user schema, without its password.
    expect(r.text).toContain("export interface User {");
    expect(r.text).not.toContain('"password"');
    const zero = await types("?version=0");
    expect([zero.status, zero.headers.get("etag")]).toEqual([200, r.headers.get("etag")]);
  });

  test("a deployed production version (the production key): its own schemas; the newest by default", async () => {
    const r = await types("?version=1", KEYS.prodPublic);
    expect(r.status).toBe(200);
    expect(r.text).toStartWith("// Burrow API types of production API version 1, generated ");
    expect(r.text).toContain('  "priority"?: number;\n');
    expect(r.text).not.toContain('"due"');
    expect(r.text).toContain('export type MethodName = "hello_world";');
    const newest = await types("", KEYS.prodPublic);
    expect([newest.status, newest.headers.get("etag")]).toEqual([200, r.headers.get("etag")]);
    expect(r.headers.get("etag")).not.toBe((await types()).headers.get("etag"));
  });

  test("an undeployed version is 404; the key and the version must agree; a bad version or key is refused", async () => {
    const cases: [string, string | null, number, string][] = [
      ["?version=7", KEYS.prodPublic, 404, "API version 7 is not deployed"],
      ["?version=1", KEYS.devPublic, 401, "the development API key cannot call API version 1; use the production key"],
      ["?version=0", KEYS.prodPublic, 401, "the production API key cannot call version 0 (development); use the development key"],
      ["?version=1.5", KEYS.devPublic, 400, 'invalid version "1.5"; expected version=0 (development) or version=N (production)'],
      ["", null, 401, "missing X-Service-API-Key header with the app's public key"],
      ["", "not-a-key", 401, "invalid API key"],
    ];
    for (const [query, key, status, error] of cases) {
      const r = await types(query, key);
      expect([query, key, r.status, JSON.parse(r.text).error]).toEqual([query, key, status, error]);
    }
  });

  test("a weak ETag over the declarations: If-None-Match answers 304 until a schema changes", async () => {
    const first = await types();
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"[\w-]{22}"$/);
    expect(first.headers.get("cache-control")).toBe("no-cache");
    // Generated anew (a new time in the header), the same declarations keep the ETag.
    const again = await types();
    expect(again.headers.get("etag")).toBe(etag);
    for (const tag of [etag, etag.slice(2), `"other", ${etag}`]) {
      const r = await types("", KEYS.devPublic, { "if-none-match": tag });
      expect([tag, r.status, r.text]).toEqual([tag, 304, ""]);
    }
    expect((await types("", KEYS.devPublic, { "if-none-match": '"other"' })).status).toBe(200);
    const grown = { fields: { ...todo.fields, due: { type: "integer" }, size: { type: "float" } } };
    expect((await t.admin("PUT", "/schemas/todo", grown)).status).toBeLessThan(300);
    const changed = await types("", KEYS.devPublic, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.text).toContain('  "size"?: number;\n');
    expect(changed.headers.get("etag")).not.toBe(etag);
  });
});

describe("the declarations type an app under tsc", () => {
  const FIXTURE = join(ROOT, "tests/fixtures/sdk-app");
  const CLIENT = join(ROOT, "static/sdk/burrow.d.ts");
  const TSC = join(ROOT, "node_modules/.bin/tsc");
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A copy of the fixture with the served declarations, the client's (or the stand-in) and `sample` as app.ts; tsc's result. */
  async function check(sample: string) {
    const dir = tempDir("burrow-sdk-app-");
    dirs.push(dir);
    cpSync(FIXTURE, dir, { recursive: true });
    const served = await types();
    expect(served.status).toBe(200);
    writeFileSync(join(dir, "burrow-types.d.ts"), served.text);
    cpSync(existsSync(CLIENT) ? CLIENT : join(FIXTURE, "burrow-stand-in.d.ts"), join(dir, "burrow.d.ts"));
    if (sample !== "app.ts") cpSync(join(FIXTURE, sample), join(dir, "app.ts"));
    const p = Bun.spawn([TSC, "--noEmit", "-p", dir], { stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => p.kill(), 60_000);
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    clearTimeout(timer);
    const output = out + err;
    // What each error points at in app.ts: the text from its line and column on (tsc names the type, not always the field).
    const source = readFileSync(join(dir, "app.ts"), "utf8").split("\n");
    const at = [...output.matchAll(/app\.ts\((\d+),(\d+)\): error/g)].map((m) => source[Number(m[1]) - 1]!.slice(Number(m[2]) - 1));
    return { code, output, at };
  }

  test('the sample app compiles: connect<Schemas>(), schema("todo").find({ where: { done, "priority[gt]" } })', async () => {
    const r = await check("app.ts");
    expect([r.output, r.at]).toEqual(["", []]);
    expect(r.code).toBe(0);
  }, 90_000);

  test("a field the schema does not have in `where` fails, naming the field", async () => {
    const r = await check("wrong-field.ts");
    expect(r.code).not.toBe(0);
    expect(r.output).toContain("'colour'");
    expect(r.at.length).toBe(1);
    expect(r.at[0]).toStartWith('colour: "red"');
  }, 90_000);

  test("a value of the wrong type in `where` fails, naming the field", async () => {
    const r = await check("wrong-type.ts");
    expect(r.code).not.toBe(0);
    // The client may allow null beside the field's type.
    expect(r.output).toMatch(/Type 'string' is not assignable to type 'boolean( \| null)? \| undefined'/);
    expect(r.at.length).toBe(1);
    expect(r.at[0]).toStartWith('done: "no"');
  }, 90_000);
});
