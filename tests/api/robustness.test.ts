// Hostile and malformed input: never a 500, never a stack trace, never prototype pollution.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp({ flags: { "--body-limit": "64kb" } });
  await t.admin("PUT", "/schemas/note", { fields: { text: { type: "string" }, n: { type: "integer" } } });
});
afterAll(() => t.close());

function expectJsonError(r: { status: number; body: any; text: string }, status: number) {
  expect(r.status).toBe(status);
  expect(typeof r.body?.error).toBe("string");
  expect(r.text).not.toContain("    at ");
}

describe("malformed bodies", () => {
  test("malformed JSON is 400", async () => {
    for (const raw of ["{", "{'a':1}", "[1,]", "nul", '{"a":1}}', "\u0000"]) {
      expectJsonError(await t.request("POST", "/note", { raw, headers: { "content-type": "application/json" } }), 400);
      expectJsonError(await t.request("PUT", "/note/x", { raw, headers: { "content-type": "application/json" } }), 400);
    }
  });

  test("bodies of the wrong shape are 400", async () => {
    for (const body of [1, "text", true, null]) expectJsonError(await t.request("POST", "/note", { body }), 400);
    for (const body of [[], [1], "s"]) expectJsonError(await t.request("PUT", "/note/x", { body }), 400);
    expectJsonError(await t.request("POST", "/note", { raw: "" }), 400);
  });

  test("a form body on a JSON endpoint is 400", async () => {
    expectJsonError(
      await t.request("POST", "/note", { raw: "text=hi", headers: { "content-type": "application/x-www-form-urlencoded" } }),
      400,
    );
  });

  test("JSON sent as text/plain or the vendor type is accepted", async () => {
    for (const ct of ["text/plain", "application/vnd.service+json; version=0", "application/json;charset=UTF8"]) {
      const r = await t.request("POST", "/note", { raw: '{"text":"ok"}', headers: { "content-type": ct } });
      expect([ct, r.status]).toEqual([ct, 201]);
    }
  });

  test("deeply nested JSON is refused without a crash", async () => {
    const deep = "[".repeat(20000) + "]".repeat(20000);
    const r = await t.request("POST", "/note", { raw: `{"text": ${deep}}`, headers: { "content-type": "application/json" } });
    expect([400, 413]).toContain(r.status);
  });
});

describe("limits", () => {
  test("a body over the limit is 413 (declared length)", async () => {
    const r = await t.request("POST", "/note", { body: { text: "x".repeat(70 * 1024) } });
    expectJsonError(r, 413);
  });

  test("a streamed body over the limit is 413 (no Content-Length)", async () => {
    const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 8) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await t.app.handle(
      new Request("http://localhost/note", {
        method: "POST",
        body: stream,
        headers: { "x-service-api-key": KEYS.devPublic, accept: "application/vnd.service+json; version=0" },
      }),
    );
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toContain("limit");
  });

  test("a batch over the batch limit is 400", async () => {
    const r = await t.request("POST", "/note", { body: Array.from({ length: 1001 }, () => ({})) });
    expectJsonError(r, 400);
  });
});

describe("injection and prototype keys", () => {
  test("__proto__ and constructor in bodies are refused, never merged", async () => {
    for (const raw of [
      '{"__proto__": {"polluted": 1}}',
      '{"text": "a", "__proto__": {"n": 5}}',
      '{"constructor": {"prototype": {"polluted": 1}}}',
    ]) {
      expectJsonError(await t.request("POST", "/note", { raw, headers: { "content-type": "application/json" } }), 400);
      expectJsonError(await t.request("PUT", "/note/x", { raw, headers: { "content-type": "application/json" } }), 400);
    }
    expect(({} as any).polluted).toBeUndefined();
    expect((Object.prototype as any).n).toBeUndefined();
  });

  test("SQL in field names, keys and schema names is data or a 400", async () => {
    const names = ['a"; DROP TABLE o_note; --', "text) VALUES (1); --", "n` = 1", "x'y"];
    for (const name of names) expectJsonError(await t.request("POST", "/note", { body: { [name]: 1 } }), 400);
    const id = "x'; DROP TABLE o_note; --";
    expect((await t.request("POST", "/note", { body: { note_id: id, text: "'; --" } })).status).toBe(201);
    expect((await t.request("GET", `/note/${encodeURIComponent(id)}`)).body.text).toBe("'; --");
    for (const path of ['/note"%3B%20DROP%20TABLE%20o_note', "/o_note", "/sqlite_master", "/_burrow_layout", "/note%00"]) {
      const r = await t.request("GET", path);
      expect([path, r.status]).toEqual([path, 404]);
    }
    expect((await t.request("GET", "/note")).status).toBe(200);
  });

  test("unknown routes are JSON 404s", async () => {
    for (const [m, p] of [
      ["GET", "/a/b/c/d/e"],
      ["GET", "/_nothing"],
      ["GET", "/_admin/api/nope"],
      ["GET", "/"],
    ]) {
      expectJsonError(await t.request(m!, p!), 404);
    }
    const patch = await t.request("PATCH", "/note/x");
    expectJsonError(patch, 405);
    expect(patch.headers.get("allow")).toContain("PUT");
    expectJsonError(await t.request("GET", "/note/%E0%A4%A"), 400);
  });
});

describe("fuzz", () => {
  test("thousands of random requests never yield a 500", async () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pick = <T>(a: T[]): T => a[rnd(a.length)]!;
    const atoms = [
      "",
      "a",
      "__proto__",
      "constructor",
      "NULL",
      "null",
      "%",
      "%zz",
      "'",
      '"',
      "\\",
      "{",
      "[",
      "..",
      "/",
      "é",
      "😀",
      "\u0000",
      "1e999",
      "-0",
      "9".repeat(30),
    ];
    const values = [null, true, 0, -1, 1.5, 1e308, 2 ** 63, "x", "", [], [1, "a"], {}, { lat: 1, lon: 2 }, { a: { b: 1 } }];
    const methods = ["GET", "POST", "PUT", "DELETE", "HEAD"];
    const headerAtoms = atoms.filter((a) => /^[\x20-\x7e]*$/.test(a));
    const statuses = new Map<number, number>();
    for (let i = 0; i < 2500; i++) {
      const segs = Array.from({ length: 1 + rnd(4) }, () => encodeURIComponent(pick([...atoms, "note", "user", "NOTE"])));
      const method = pick(methods);
      const body: Record<string, unknown> = {};
      for (let k = rnd(4); k > 0; k--) body[pick([...atoms, "text", "n", "note_id"])] = pick(values);
      const headers: Record<string, string> = {};
      if (rnd(4) === 0) headers["x-http-method-override"] = pick(["PUT", "DELETE", "HEAD", "GET", "x"]);
      if (rnd(4) === 0) headers["x-service-relations"] = `${pick(headerAtoms)}=${pick(headerAtoms)}`;
      const opts = {
        version: pick([0, 0, 0, null, 1, 7]),
        key: pick([undefined, undefined, null, "bogus", KEYS.prodPublic]),
        headers,
        ...(method === "POST" || method === "PUT"
          ? rnd(5) === 0
            ? { raw: pick(atoms) }
            : { body: rnd(6) === 0 ? [body, body] : body }
          : {}),
      };
      const r = await t.request(method, `/${segs.join("/")}${rnd(3) === 0 ? `?${pick(atoms)}=${pick(atoms)}` : ""}`, opts as any);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status >= 500) throw new Error(`500 for ${method} /${segs.join("/")}: ${r.text}`);
      const head = method === "HEAD" || (method === "GET" && headers["x-http-method-override"] === "HEAD");
      if (r.status >= 400 && !head && typeof r.body?.error !== "string")
        throw new Error(`no {error} for ${method} /${segs.join("/")} ${JSON.stringify(headers)}: ${r.status} ${r.text}`);
    }
    expect(statuses.get(500)).toBeUndefined();
  });
});
