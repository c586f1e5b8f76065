// What an uploader cannot do with a file: make it run as a page on the API's origin (every answer under /_files/
// says nosniff and sandboxes the document; only safe types are offered inline), or plant a link with a forged
// Host that other clients are later given (links are stored as paths and made per answer). Also the separate
// files origin (--files-url) and the move of links stored by earlier versions.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { formatUpload } from "../../src/files/upload.ts";
import { KEYS, makeTestApp, tempDir, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp({ flags: { "--trusted-proxy": "10.0.0.0/8" }, peer: (req) => req.headers.get("x-test-peer") });
  await t.admin("PUT", "/schemas/doc", { fields: { title: { type: "string" }, file: { type: "binary" } } });
  await t.admin("PUT", "/schemas/folder", { fields: { docs: { type: "relationship", schema: "doc", many: true } } });
});
afterAll(() => t.close());

const SAFETY = { "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox" };
const API = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEYS.devPublic, "content-type": "application/json" };
/** A request as a client at `origin` sends it (the Host is the origin's), through app.handle. */
const at = (origin: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.app.handle(
    new Request(`${origin}${path}`, {
      method,
      headers: { ...API, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
const jsonOf = async (r: Response | Promise<Response>): Promise<any> => (await r).json();
const fileOf = async (url: string, init: RequestInit = {}) => t.app.handle(new Request(`http://localhost${new URL(url).pathname}`, init));
const stored = async (id: string) =>
  (await t.burrow.envDbs.development.execute({ sql: `SELECT file FROM o_doc WHERE doc_id = ?`, args: [id] })).rows[0]!.file as string;

/** Uploads that could run as a page (markup, scripts, unknown types) and those a browser only shows. */
const TYPES: [string, string, "inline" | "attachment"][] = [
  ["text/html", "page.html", "attachment"],
  ["application/xhtml+xml", "page.xhtml", "attachment"],
  ["image/svg+xml", "logo.svg", "attachment"],
  ["application/xml", "data.xml", "attachment"],
  ["text/xml", "data.xml", "attachment"],
  ["text/javascript", "app.js", "attachment"],
  ["application/javascript", "app.js", "attachment"],
  ["application/x-shockwave-flash", "movie.swf", "attachment"],
  ["application/octet-stream", "blob.bin", "attachment"],
  ["text/css", "style.css", "attachment"],
  ["text/plain; charset=utf-8", "notes.txt", "inline"],
  ["image/png", "photo.png", "inline"],
  ["image/jpeg", "photo.jpg", "inline"],
  ["image/webp", "photo.webp", "inline"],
  ["audio/mpeg", "song.mp3", "inline"],
  ["video/mp4", "clip.mp4", "inline"],
  ["application/pdf", "paper.pdf", "inline"],
];

describe("files never run as pages on the API origin", () => {
  for (const [type, name, disposition] of TYPES) {
    test(`${type} is served ${disposition}, with nosniff and a sandboxing policy`, async () => {
      const script = new TextEncoder().encode(`<script>parent.document.title = "owned"</script>`);
      const r = await t.request("POST", "/doc", { body: { title: name, file: formatUpload(type, name, script) } });
      expect(r.status).toBe(201);
      const res = await fileOf(r.body.file);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-disposition")!.split(";")[0]).toBe(disposition);
      for (const [h, v] of Object.entries(SAFETY)) expect(res.headers.get(h)).toBe(v);
    });
  }

  test("every answer under /_files/ carries the headers: ranges, 304, HEAD, 416, missing files, malformed paths", async () => {
    const r = await t.request("POST", "/doc", { body: { title: "x", file: formatUpload("text/html", "x.html", new Uint8Array(100)) } });
    const etag = (await fileOf(r.body.file)).headers.get("etag")!;
    const answers = [
      await fileOf(r.body.file, { headers: { range: "bytes=0-9" } }),
      await fileOf(r.body.file, { headers: { "if-none-match": etag } }),
      await fileOf(r.body.file, { method: "HEAD" }),
      await fileOf(r.body.file, { headers: { range: "bytes=500-600" } }),
      await t.app.handle(new Request("http://localhost/_files/development/00000000000000000000000000000000/x.html")),
      await t.app.handle(new Request("http://localhost/_files/development/not-an-id/x.html")),
    ];
    expect(answers.map((a) => a.status)).toEqual([206, 304, 200, 416, 404, 404]);
    for (const a of answers) for (const [h, v] of Object.entries(SAFETY)) expect([a.status, h, a.headers.get(h)]).toEqual([a.status, h, v]);
  });
});

describe("stored file links never carry a request's Host", () => {
  test("a forged Host reaches only the forger's own answer; everyone else gets their own base", async () => {
    const created = await at("http://evil.example", "POST", "/doc", {
      doc_id: "forged",
      title: "bait",
      file: formatUpload("image/png", "cat.png", new Uint8Array(10)),
    });
    expect(created.status).toBe(201);
    const link = (await jsonOf(created)).file as string;
    expect(link.startsWith("http://evil.example/_files/development/")).toBe(true);
    expect(await stored("forged")).toMatch(/^\/_files\/development\/[0-9a-f]{32}\/cat\.png$/);
    const read = await jsonOf(at("http://api.example.org", "GET", "/doc/forged"));
    expect(read.file).toBe(`http://api.example.org${await stored("forged")}`);
    const list = await jsonOf(at("http://localhost:8080", "GET", "/doc?doc_id=forged"));
    expect(list[0].file).toBe(`http://localhost:8080${await stored("forged")}`);
    expect((await at("http://localhost", "POST", "/folder", { folder_id: "f1", docs: ["forged"] })).status).toBe(201);
    const expanded = await jsonOf(at("http://[::1]:9000", "GET", "/folder/f1", undefined, { "x-service-expand": "1" }));
    expect(expanded.docs[0].file).toBe(`http://[::1]:9000${await stored("forged")}`);
  });

  test("behind a trusted proxy the forwarded origin makes the link; an untrusted peer's forwarded headers count for nothing", async () => {
    const fwd = { "x-forwarded-proto": "https", "x-forwarded-host": "api.example.com" };
    const trusted = await jsonOf(at("http://localhost", "GET", "/doc/forged", undefined, { ...fwd, "x-test-peer": "10.0.0.7" }));
    expect(trusted.file).toBe(`https://api.example.com${await stored("forged")}`);
    const untrusted = await jsonOf(at("http://localhost", "GET", "/doc/forged", undefined, { ...fwd, "x-test-peer": "203.0.113.9" }));
    expect(untrusted.file).toBe(`http://localhost${await stored("forged")}`);
  });

  test("the link a client was given, sent back on an update with any base, leaves the file as it is", async () => {
    const path = await stored("forged");
    const r = await at("http://somewhere.example:1234", "PUT", "/doc/forged", { title: "renamed", file: `https://cdn.example.net${path}` });
    expect(r.status).toBe(200);
    expect(await stored("forged")).toBe(path);
    const other = await at("http://localhost", "PUT", "/doc/forged", {
      file: "https://cdn.example.net/_files/development/00000000000000000000000000000000/cat.png",
    });
    expect(other.status).toBe(400);
  });
});

describe("--public-url and --files-url", () => {
  test("--public-url makes every link, whatever Host a request names", async () => {
    const p = await makeTestApp({ flags: { "--public-url": "https://api.example.com/v" } });
    try {
      await p.admin("PUT", "/schemas/doc", { fields: { file: { type: "binary" } } });
      const made = await p.app.handle(
        new Request("http://evil.example/doc", {
          method: "POST",
          headers: API,
          body: JSON.stringify({ doc_id: "d", file: formatUpload("image/png", "a.png", new Uint8Array(3)) }),
        }),
      );
      expect((await jsonOf(made)).file).toMatch(/^https:\/\/api\.example\.com\/v\/_files\/development\/[0-9a-f]{32}\/a\.png$/);
      expect((await p.request("GET", "/doc/d")).body.file).toMatch(/^https:\/\/api\.example\.com\/v\/_files\//);
    } finally {
      await p.close();
    }
  });

  test("--files-url: links on the files origin, which serves files and nothing else; files asked of the API origin are redirected", async () => {
    const f = await makeTestApp({ flags: { "--files-url": "https://files.example.com" } });
    try {
      await f.admin("PUT", "/schemas/doc", { fields: { file: { type: "binary" } } });
      const r = await f.request("POST", "/doc", {
        body: { doc_id: "d", file: formatUpload("text/html", "a.html", new TextEncoder().encode("<b>hi</b>")) },
      });
      const link = r.body.file as string;
      expect(link).toMatch(/^https:\/\/files\.example\.com\/_files\/development\/[0-9a-f]{32}\/a\.html$/);
      const path = new URL(link).pathname;
      // Behind the TLS proxy in front of the files origin, requests reach Burrow as http:// with the files Host.
      const onFiles = await f.app.handle(new Request(`http://files.example.com${path}`));
      expect(onFiles.status).toBe(200);
      expect(await onFiles.text()).toBe("<b>hi</b>");
      for (const other of ["/doc/d", "/_admin/", "/_status/", "/_admin/api/keys", "/"]) {
        const refused = await f.app.handle(new Request(`http://files.example.com${other}`, { headers: API }));
        expect([other, refused.status]).toEqual([other, 404]);
        expect((await jsonOf(refused)).error).toContain("stored files only");
      }
      const moved = await f.app.handle(new Request(`http://localhost${path}?x=1`));
      expect(moved.status).toBe(308);
      expect(moved.headers.get("location")).toBe(`https://files.example.com${path}?x=1`);
      // The console shows image previews from the files origin, and still runs only its own script.
      const policy = (await f.app.handle(new Request("http://localhost/_admin/"))).headers.get("content-security-policy")!;
      expect(policy).toContain("img-src 'self' data: blob: https://files.example.com;");
      expect(/script-src [^;]*/.exec(policy)![0]).not.toContain("files.example.com");
    } finally {
      await f.close();
    }
  });

  test("--files-url must be an origin of its own", async () => {
    await expect(makeTestApp({ flags: { "--files-url": "https://files.example.com/sub" } })).rejects.toThrow(/--files-url/);
    await expect(
      makeTestApp({ flags: { "--files-url": "https://api.example.com", "--public-url": "https://api.example.com" } }),
    ).rejects.toThrow(/another host/);
  });
});

describe("links stored by earlier versions", () => {
  test("absolute URLs in binary fields become paths at start, the files stay, and answers use each request's base", async () => {
    const dir = tempDir();
    const a = await makeTestApp({ dir });
    await a.admin("PUT", "/schemas/doc", { fields: { file: { type: "binary" } } });
    const made = (
      await a.request("POST", "/doc", { body: { doc_id: "old", file: formatUpload("image/png", "old.png", new Uint8Array(7)) } })
    ).body.file as string;
    const path = new URL(made).pathname;
    const db = a.burrow.envDbs.development;
    // As an earlier version stored it: the uploader's origin (here a forged one) in the field and the file row.
    const absolute = `http://evil.example${path}`;
    await db.batch(
      [
        { sql: `UPDATE _burrow_files SET url = ?`, args: [absolute] },
        { sql: `UPDATE o_doc SET file = ?`, args: [absolute] },
      ],
      "write",
    );
    await a.close();
    const b = await makeTestApp({ dir });
    try {
      const dbb = b.burrow.envDbs.development;
      expect((await dbb.execute(`SELECT file FROM o_doc`)).rows[0]!.file).toBe(path);
      expect((await dbb.execute(`SELECT url FROM _burrow_files`)).rows[0]!.url).toBe(path);
      expect(Number((await dbb.execute(`SELECT count(*) AS n FROM _burrow_trash`)).rows[0]!.n)).toBe(0);
      expect((await b.request("GET", "/doc/old")).body.file).toBe(`http://localhost${path}`);
      expect((await b.app.handle(new Request(`http://localhost${path}`))).status).toBe(200);
    } finally {
      await b.close();
    }
  });
});

describe("imported links", () => {
  test("a URL of another store stays as it is, for every viewer", async () => {
    const url = "https://files.parse.example/abc/photo.png";
    expect((await t.request("POST", "/doc", { body: { doc_id: "imported", title: "i" } })).status).toBe(201);
    // As `burrow import` stores a binary field: the URL given.
    await t.burrow.envDbs.development.execute({ sql: `UPDATE o_doc SET file = ? WHERE doc_id = 'imported'`, args: [url] });
    expect((await jsonOf(at("http://elsewhere.example", "GET", "/doc/imported"))).file).toBe(url);
  });
});
