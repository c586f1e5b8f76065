// Custom code through HTTP: uploads (JavaScript, TypeScript, compile errors with lines, name rules and clashes),
// calling methods with every verb as the JS SDK sends them, identity (MAC, OAuth 1.0), response kinds, deploys
// pinning code to versions, and the limits (time, memory, stack, response size).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;

const BASIC = `
export const methods = [
  { name: "echo", params: ["a", "b"], execute(r) { return { body: { verb: r.verb, params: r.params, body: r.body, url: r.url, user: r.loggedInUser, v: r.apiVersion, env: r.environment, m: r.methodName, ua: r.headers["x-test"] ?? null, auth: r.headers.authorization ?? null } }; } },
  { name: "camelcase", execute() { return { body: "lower" }; } },
  { name: "text", execute() { return { status: 202, headers: { "X-Custom": "yes", "Cache-Control": "no-store" }, body: "plain words" }; } },
  { name: "bytes", execute() { return { body: new Uint8Array([0, 1, 2, 255]) }; } },
  { name: "typed", execute() { return { headers: { "content-type": "image/gif" }, body: new Uint8Array([71, 73, 70]) }; } },
  { name: "status_only", execute() { return { status: 204 }; } },
  { name: "bad_header", execute() { return { headers: { "x-bad": "a\\r\\nset-cookie: x=1" }, body: {} }; } },
  { name: "thrower", execute() { throw new TypeError("nope"); } },
  { name: "version", execute() { return { body: { code: "v-dev" } }; } },
];`;

beforeAll(async () => {
  t = await makeTestApp();
  expect((await upload(t, BASIC)).status).toBe(200);
});
afterAll(() => t.close());

describe("uploads", () => {
  test("answers the methods; GET /_admin/api/code shows the source", async () => {
    const r = await upload(t, BASIC);
    expect(r.status).toBe(200);
    expect(r.body.language).toBe("js");
    expect(r.body.methods.map((m: { name: string }) => m.name)).toContain("echo");
    expect(r.body.methods[0]).toEqual({ name: "echo", params: ["a", "b"] });
    const code = await t.admin("GET", "/code");
    expect(code.body.source).toBe(BASIC);
  });

  test("TypeScript is transpiled (also without saying so)", async () => {
    const ts = `interface Out { n: number }\nexport const methods = [{ name: "ts_one", execute(): { body: Out } { const n: number = 1; return { body: { n } }; } }];`;
    const r = await upload(t, ts);
    expect([r.status, r.body.language, r.body.methods]).toEqual([200, "ts", [{ name: "ts_one", params: [] }]]);
    expect((await t.request("GET", "/ts_one")).body).toEqual({ n: 1 });
    expect((await upload(t, ts, "?lang=js")).status).toBe(400);
    expect((await upload(t, BASIC)).status).toBe(200);
  });

  test("syntax and load errors are 400 with the line; the stored code is unchanged", async () => {
    const js = await upload(t, "export const methods = [];\n\nlet = = 1;\n");
    expect([js.status, js.body.line]).toEqual([400, 3]);
    expect(js.body.error).toContain("SyntaxError");
    const ts = await upload(t, "export const methods = [];\nconst x: number = ;\n", "?lang=ts");
    expect([ts.status, ts.body.line]).toEqual([400, 2]);
    const thrown = await upload(t, "export const methods = [];\nfunction f() {\n  throw new Error('load failed');\n}\nf();\n");
    expect([thrown.status, thrown.body.error, thrown.body.line]).toEqual([400, "load failed", 3]);
    expect((await t.admin("GET", "/code")).body.source).toBe(BASIC);
  });

  test("bad module shapes, names and imports are refused with the reason", async () => {
    const cases: [string, string][] = [
      ["export const nothing = 1;", "the bundle must export `methods`"],
      [`export const methods = [{ name: "Has-Dash", execute() {} }];`, "must match ^[a-z][a-z0-9_]{0,63}$"],
      [`export const methods = [{ name: "has space", execute() {} }];`, "must match"],
      [`export const methods = [{ name: "_x", execute() {} }];`, "must match"],
      [`export const methods = [{ name: "a", execute() {} }, { name: "a", execute() {} }];`, "defined twice"],
      [`export const methods = [{ name: "a" }];`, "no execute function"],
      [`export const methods = [{ name: "a", params: [1], execute() {} }];`, "params must be an array of names"],
      [`import x from "./other.js";\nexport const methods = [x];`, "a bundle is one module without imports"],
      ["", "the bundle is empty"],
    ];
    for (const [src, msg] of cases) {
      const r = await upload(t, src);
      expect([src, r.status]).toEqual([src, 400]);
      expect(r.body.error).toContain(msg);
    }
  });

  test("a method may not take a schema's name, nor a schema a method's", async () => {
    const clash = await upload(t, `export const methods = [{ name: "user", execute() {} }];`);
    expect([clash.status, clash.body.error]).toEqual([
      400,
      'method "user" has the name of a schema; a method and a schema cannot share a name',
    ]);
    const schema = await t.admin("PUT", "/schemas/echo", { fields: { a: { type: "string" } } });
    expect([schema.status, schema.body.error]).toEqual([
      400,
      '"echo" is the name of a custom code method; a schema cannot have the same name',
    ]);
    // Inference cannot create it either: a write to /echo is the method's.
    const rel = await t.request("POST", "/note_cc", { body: { title: "x" }, headers: { "x-service-relations": "" } });
    expect(rel.status).toBe(201);
  });

  test("oversized uploads are 413", async () => {
    const r = await upload(t, "x".repeat(4 * 1024 * 1024 + 1));
    expect(r.status).toBe(413);
  });
});

describe("calls", () => {
  test("GET passes only the declared URL parameters; method names are case-insensitive", async () => {
    const r = await t.request("GET", "/echo?a=1&b=two&c=3", { headers: { "x-test": "hdr" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.body).toEqual({
      verb: "GET",
      params: { a: "1", b: "two" },
      body: "",
      url: "/echo?a=1&b=two&c=3",
      user: null,
      v: 0,
      env: "development",
      m: "echo",
      ua: "hdr",
      auth: null,
    });
    for (const p of ["/CAMELCASE", "/camelCase", "/camelcase"]) expect((await t.request("GET", p)).text).toBe("lower");
  });

  test("POST and PUT pass the raw body (JSON or text, as the JS SDK sends it); forms are 400", async () => {
    const post = await t.request("POST", "/echo", { body: { a: 1, nested: { b: [1, 2] } } });
    expect([post.status, post.body.verb, post.body.body]).toEqual([200, "POST", '{"a":1,"nested":{"b":[1,2]}}']);
    const put = await t.request("PUT", "/echo", { raw: "not json at all", headers: { "content-type": "text/plain" } });
    expect([put.status, put.body.verb, put.body.body]).toEqual([200, "PUT", "not json at all"]);
    const form = await t.request("POST", "/echo", { raw: "a=1&b=2", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect([form.status, form.body.error]).toEqual([
      400,
      "custom code methods do not take form-encoded bodies; send JSON or a plain string",
    ]);
    const del = await t.request("DELETE", "/echo?a=x");
    expect([del.body.verb, del.body.params]).toEqual(["DELETE", { a: "x" }]);
  });

  test("bodies of any size and script cross whole: a 3 MB JSON body, multi-byte text, NUL characters", async () => {
    const big = { items: Array.from({ length: 80_000 }, (_, i) => ({ i, s: `é ü 中文 😀 ${i}` })) };
    const r = await t.request("POST", "/echo", { body: big });
    expect(r.status).toBe(200);
    expect(Buffer.byteLength(r.body.body)).toBeGreaterThan(3_000_000);
    expect(JSON.parse(r.body.body)).toEqual(big);
    const text = "zero\u0000byte é 😀";
    const put = await t.request("PUT", "/echo", { raw: text, headers: { "content-type": "text/plain" } });
    expect(put.body.body).toBe(text);
  });

  test("method override: POST as PUT, GET as DELETE", async () => {
    const put = await t.request("POST", "/echo", { raw: "b", headers: { "x-http-method-override": "PUT" } });
    expect([put.body.verb, put.body.body]).toEqual(["PUT", "b"]);
    const del = await t.request("GET", "/echo?b=1", { headers: { "x-http-method-override": "DELETE" } });
    expect([del.body.verb, del.body.params]).toEqual(["DELETE", { b: "1" }]);
  });

  test("PUT on a schema is still 405; unknown names are still 404", async () => {
    const r = await t.request("PUT", "/user", { body: {} });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, POST, DELETE, HEAD");
    expect((await t.request("GET", "/no_such_thing_here")).status).toBe(404);
  });

  test("the MAC-signed caller is loggedInUser; OAuth 1.0 and unsigned calls have none; credentials are not passed", async () => {
    await t.request("POST", "/user", { body: { username: "cc_ann", password: "cc-ann-password" } });
    const creds = (await t.request("POST", "/user/accessToken", { body: { username: "cc_ann", password: "cc-ann-password" } })).body;
    const signed = await t.request("GET", "/echo?a=1", { headers: { authorization: macAuth(creds, "GET", "/echo?a=1") } });
    expect([signed.status, signed.body.user, signed.body.auth]).toEqual([200, "cc_ann", null]);
    const badMac = await t.request("GET", "/echo", { headers: { authorization: macAuth({ ...creds, mac_key: "wrong" }, "GET", "/echo") } });
    expect(badMac.status).toBe(401);
    const oauth = await t.request("POST", "/echo", {
      raw: "x",
      key: null,
      headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, "POST", "http://localhost/echo") },
    });
    expect([oauth.status, oauth.body.user]).toEqual([200, null]);
    const badOauth = await t.request("POST", "/echo", {
      raw: "x",
      key: null,
      headers: { authorization: oauthAuth(KEYS.devPublic, "wrong", "POST", "http://localhost/echo") },
    });
    expect(badOauth.status).toBe(401);
    expect((await t.request("GET", "/echo", { key: null })).status).toBe(401);
  });

  test("text and bytes bodies, status and custom headers; invalid headers are a 500", async () => {
    const text = await t.request("GET", "/text");
    expect([
      text.status,
      text.text,
      text.headers.get("content-type"),
      text.headers.get("x-custom"),
      text.headers.get("cache-control"),
    ]).toEqual([202, "plain words", "text/plain; charset=utf-8", "yes", "no-store"]);
    const bytes = await t.app.handle(new Request("http://localhost/bytes", { headers: { "x-service-api-key": KEYS.devPublic } }));
    expect([bytes.headers.get("content-type"), [...new Uint8Array(await bytes.arrayBuffer())]]).toEqual([
      "application/octet-stream",
      [0, 1, 2, 255],
    ]);
    const typed = await t.app.handle(new Request("http://localhost/typed", { headers: { "x-service-api-key": KEYS.devPublic } }));
    expect([typed.headers.get("content-type"), (await typed.arrayBuffer()).byteLength]).toEqual(["image/gif", 3]);
    expect((await t.request("GET", "/status_only")).status).toBe(204);
    const bad = await t.request("GET", "/bad_header");
    expect([bad.status, bad.body.error]).toEqual([500, 'custom code method bad_header returned an invalid header "x-bad"']);
  });

  test("a method that throws is a 500 naming it; the failure is in the code log", async () => {
    const r = await t.request("GET", "/thrower");
    expect([r.status, r.body.error]).toEqual([500, "custom code method thrower failed: TypeError: nope"]);
    const logs = await t.admin("GET", "/logs?source=code&level=error");
    expect(logs.body[0]).toMatchObject({
      level: "error",
      message: "custom code method thrower failed: TypeError: nope",
      env: "development",
      source: "code",
    });
  });
});

describe("deploys pin code to versions", () => {
  test("version 1 keeps running its code after version 2 is deployed; development runs the newest upload", async () => {
    const v = (tag: string) => BASIC.replace('"v-dev"', JSON.stringify(tag));
    expect((await upload(t, v("v-one"))).status).toBe(200);
    const d1 = await t.admin("POST", "/deploy", {});
    expect(d1.status).toBe(200);
    expect((await upload(t, v("v-two"))).status).toBe(200);
    const d2 = await t.admin("POST", "/deploy", {});
    expect(d2.body.version).toBe(d1.body.version + 1);
    expect((await upload(t, v("v-three"))).status).toBe(200);
    const call = (version: number) => t.request("GET", "/version", { version });
    expect((await call(d1.body.version)).body).toEqual({ code: "v-one" });
    expect((await call(d2.body.version)).body).toEqual({ code: "v-two" });
    expect((await call(0)).body).toEqual({ code: "v-three" });
    expect((await t.request("GET", "/version", { version: null, key: KEYS.prodPublic })).body).toEqual({ code: "v-two" });
    expect((await t.admin("GET", `/code?version=${d1.body.version}`)).body.source).toContain("v-one");
    const history = await t.admin("GET", "/deploys");
    expect(history.body[0].methods).toContain("version");
    // Removing development's code leaves production alone.
    expect((await t.admin("DELETE", "/code")).status).toBe(200);
    expect((await call(0)).status).toBe(404);
    expect((await call(d2.body.version)).body).toEqual({ code: "v-two" });
    expect((await upload(t, BASIC)).status).toBe(200);
  });

  test("deploy refuses a schema and a method with the same name", async () => {
    await t.burrow.system.execute(
      `UPDATE code_bundles SET methods = json_insert(methods, '$.methods[#]', json('{"name":"user","params":[]}')) WHERE env = 'development'`,
    );
    await t.burrow.reload();
    const r = await t.admin("POST", "/deploy", {});
    expect([r.status, r.body.error]).toEqual([409, '"user" is both a schema and a custom code method; rename one before deploying']);
    expect((await upload(t, BASIC)).status).toBe(200);
  });
});

describe("limits", () => {
  const LIMITS = `
export const methods = [
  { name: "spin", execute() { for (;;) {} } },
  { name: "spin_later", async execute(r, s) { await s.cache.get("k"); for (;;) {} } },
  { name: "strings", execute() { const a = []; for (let i = 0; i < 200; i++) a.push("x".repeat(1024 * 1024) + i); return { body: a.length }; } },
  { name: "typed_arrays", execute() { const a = []; for (let i = 0; i < 200; i++) a.push(new Uint8Array(1024 * 1024)); return { body: a.length }; } },
  { name: "recurse", execute() { const f = (n) => f(n + 1) + 1; return { body: f(0) }; } },
  { name: "huge", execute() { return { body: "y".repeat(30 * 1024 * 1024) }; } },
  { name: "fine", execute() { return { body: { ok: true } }; } },
];`;
  beforeAll(async () => {
    expect((await t.admin("PUT", "/settings/development", { code: { timeoutMs: 500, memoryMb: 40 } })).status).toBe(200);
    expect((await upload(t, LIMITS)).status).toBe(200);
  });
  afterAll(async () => {
    await t.admin("PUT", "/settings/development", { code: { timeoutMs: null, memoryMb: null } });
    await upload(t, BASIC);
  });

  test("an endless loop stops at the time limit (+ 50 ms), before and after an await", async () => {
    for (const m of ["spin", "spin_later"]) {
      const t0 = performance.now();
      const r = await t.request("GET", `/${m}`);
      const took = performance.now() - t0;
      expect([m, r.status, r.body.error]).toEqual([m, 500, `custom code method ${m} failed: the method ran longer than 500 ms`]);
      expect(took).toBeLessThan(500 + 150);
    }
    expect((await t.request("GET", "/fine")).body).toEqual({ ok: true });
  });

  test("200 MB of strings or typed arrays fails with a clear 500; the next call works", async () => {
    // Time enough to allocate up to the cap (a thread running busy code this long drops to idle priority).
    expect((await t.admin("PUT", "/settings/development", { code: { timeoutMs: 10_000 } })).status).toBe(200);
    for (const m of ["strings", "typed_arrays"]) {
      const r = await t.request("GET", `/${m}`);
      expect([m, r.status, r.body.error]).toEqual([m, 500, `custom code method ${m} failed: the method ran out of memory`]);
    }
    expect((await t.request("GET", "/fine")).body).toEqual({ ok: true });
  });

  test("deep recursion is a stack error; a huge response is refused", async () => {
    const r = await t.request("GET", "/recurse");
    expect([r.status, r.body.error]).toEqual([
      500,
      "custom code method recurse failed: the method's call stack overflowed (too deep recursion)",
    ]);
    const huge = await t.request("GET", "/huge");
    expect(huge.status).toBe(500);
    expect(huge.body.error).toBe("custom code method huge answered more than 20 MB");
  });
});
