// Over a real socket (the app listening on loopback as `burrow serve` listens): refusals made where JS runs are
// JSON {"error"} with a fitting status; what Bun answers natively before any JS is pinned here (it has no hook);
// HEAD answers the Content-Length the GET would have, in-process and over the socket.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { formatUpload } from "../../src/files/upload.ts";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { listen, type Listening, type RawResponse } from "../helpers/listen.ts";

const LIMIT = 64 * 1024;
let t: TestApp;
let s: Listening;
let fileUrl: string;
beforeAll(async () => {
  t = await makeTestApp({ flags: { "--body-limit": "64kb" } });
  await t.admin("PUT", "/schemas/note", {
    fields: { text: { type: "string" }, tags: { type: "array", items: "string" }, file: { type: "binary" } },
  });
  await t.request("POST", "/note", { body: { note_id: "n1", text: "héllo ✓", tags: ["a"] } });
  const up = await t.request("POST", "/note", { body: { note_id: "n2", file: formatUpload("text/plain", "a.txt", new Uint8Array(1234)) } });
  fileUrl = new URL(up.body.file).pathname;
  s = listen(t);
});
afterAll(async () => {
  s.stop();
  await t.close();
});

const API = `Accept: application/vnd.service+json; version=0\r\nX-Service-API-Key: ${KEYS.devPublic}`;
const API_HEADERS = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEYS.devPublic };

function expectJsonError(r: RawResponse, status: number): string {
  expect(r.status).toBe(status);
  expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
  const error = JSON.parse(r.body).error;
  expect(typeof error).toBe("string");
  return error;
}

describe("refusals where JS runs are JSON", () => {
  test("a body past any size (beyond the limit plus Bun's old margin) is the JSON 413; the connection closes", async () => {
    const r = await s.raw(`POST /note HTTP/1.1\r\n${API}\r\nContent-Type: application/json\r\nContent-Length: 3000000000`, '{"text":"');
    expect(expectJsonError(r, 413)).toBe(`request body is larger than the limit of ${LIMIT} bytes`);
    expect(r.headers.connection).toBe("close");
  });

  test("a streamed body past the limit is the JSON 413", async () => {
    const chunk = "x".repeat(0x10000);
    const r = await s.raw(
      `POST /note HTTP/1.1\r\n${API}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`,
      `10000\r\n${chunk}\r\n10000\r\n${chunk}\r\n0\r\n\r\n`,
    );
    expectJsonError(r, 413);
  });

  test("a malformed percent-encoding in the path is 400 (Bun's router hands U+FFFD, not an error)", async () => {
    for (const line of ["GET /%", "GET /%zz/x", "GET /note/%", "GET /note/%E2%82", "DELETE /note/n1/tags/%zz", "PUT /note/n1/%zz"]) {
      const r = await s.raw(`${line} HTTP/1.1\r\n${API}\r\nContent-Length: 0`);
      expect([line, expectJsonError(r, 400)]).toEqual([line, "malformed percent-encoding in the URL path"]);
    }
    // A well-formed escape of U+FFFD itself is an ordinary key.
    expect(expectJsonError(await s.raw(`GET /note/%EF%BF%BD HTTP/1.1\r\n${API}`), 404)).toBe("object instance does not exist");
  });

  test("methods without a route: 405 with Allow at a served path, 404 elsewhere", async () => {
    for (const method of ["PROPFIND", "TRACE", "PATCH", "MKCOL", "CONNECT"]) {
      const r = await s.raw(`${method} /note HTTP/1.1\r\n${API}`);
      expect(expectJsonError(r, 405)).toBe(`${method} is not allowed here`);
      expect(r.headers.allow).toBe("GET, POST, DELETE, HEAD");
    }
    expect(expectJsonError(await s.raw(`PROPFIND /_nothing/here/at/all HTTP/1.1\r\n${API}`), 404)).toBe("not found");
  });

  test("the docs page is served at its static path, not claimed by /:schema/:id", async () => {
    const r = await fetch(`${s.url}/_admin/docs`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/html");
  });
});

describe("what Bun answers natively, before any JS runs (no hook exists: pinned so an upgrade shows)", () => {
  test("request line and headers past 16 KiB: a bodiless 431 with Connection: close", async () => {
    for (const head of [
      `GET /note HTTP/1.1\r\n${API}\r\nX-Big: ${"a".repeat(20_000)}`,
      `GET /note HTTP/1.1\r\n${API}\r\nX-Big: ${"a".repeat(100_000)}`,
      `GET /note?x=${"a".repeat(20_000)} HTTP/1.1\r\n${API}`,
    ]) {
      const r = await s.raw(head);
      expect([r.status, r.headers, r.body]).toEqual([431, { connection: "close" }, ""]);
    }
  });

  test("a method token Bun does not know closes the connection unanswered; an unparseable request line is a bodiless 400", async () => {
    for (const method of ["BREW", "get"])
      expect(await s.raw(`${method} /note HTTP/1.1\r\n${API}`)).toEqual({ status: 0, headers: {}, lines: [], body: "" });
    expect(await s.raw(`GET note HTTP/1.1\r\n${API}`)).toEqual({
      status: 400,
      headers: { connection: "close" },
      lines: ["Connection: close"],
      body: "",
    });
  });
});

describe("HEAD answers the Content-Length the GET would have", () => {
  const paths = () => [
    "/note/n1",
    "/note",
    "/note/missing",
    "/_health",
    "/_admin/api/openapi.json",
    "/_admin/docs",
    "/_nothing",
    "/_nothing/x",
    "/note/n1/tags",
    "/nothing/at/all/here",
    fileUrl,
  ];

  async function compare(get: Response, head: Response, what: string) {
    const bytes = (await get.arrayBuffer()).byteLength;
    expect([what, head.status, head.headers.get("content-length"), (await head.arrayBuffer()).byteLength]).toEqual([
      what,
      get.status,
      String(bytes),
      0,
    ]);
    expect([what, head.headers.get("content-type")]).toEqual([what, get.headers.get("content-type")]);
  }

  test("over the socket", async () => {
    for (const path of paths()) {
      const get = await fetch(`${s.url}${path}`, { headers: API_HEADERS });
      await compare(get, await fetch(`${s.url}${path}`, { method: "HEAD", headers: API_HEADERS }), path);
    }
    const range = { ...API_HEADERS, range: "objects=0-0" };
    await compare(
      await fetch(`${s.url}/note`, { headers: range }),
      await fetch(`${s.url}/note`, { method: "HEAD", headers: range }),
      "count",
    );
  });

  test("a file whose bytes are gone: HEAD has the length of the GET's JSON 404", async () => {
    const up = await t.request("POST", "/note", { body: { file: formatUpload("text/plain", "gone.txt", new Uint8Array(10)) } });
    const path = new URL(up.body.file).pathname;
    rmSync(join(t.dir, "files", ...path.split("/").slice(2)));
    const get = await fetch(`${s.url}${path}`);
    expect(get.status).toBe(404);
    await compare(get, await fetch(`${s.url}${path}`, { method: "HEAD" }), path);
  });

  test("in-process (app.handle)", async () => {
    // Not the file URL: Elysia's implicit HEAD on a parametric route measures the GET handler's body, and the
    // store's HEAD answer has none (it sets Content-Length without reading the file). Bun's router, above, does not.
    for (const path of paths().filter((p) => p !== fileUrl)) {
      const get = await t.app.handle(new Request(`http://localhost${path}`, { headers: API_HEADERS }));
      await compare(get, await t.app.handle(new Request(`http://localhost${path}`, { method: "HEAD", headers: API_HEADERS })), path);
    }
  });
});
