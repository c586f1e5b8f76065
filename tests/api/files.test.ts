// Binary fields: uploads in their format (docs/api/datastore.md#binary-fields), files served at /_files with the
// right headers, replaced and deleted files removed from the store (also by cascade and by query), no orphans after
// failed writes, and the S3 store (against a local S3-compatible server).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { S3Client } from "bun";
import { formatUpload } from "../../src/files/upload.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { startS3 } from "../helpers/s3rver.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/doc", { fields: { title: { type: "string" }, file: { type: "binary" }, thumb: { type: "binary" } } });
  await t.admin("PUT", "/schemas/folder", { fields: { docs: { type: "relationship", schema: "doc", many: true } } });
});
afterAll(() => t.close());

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
const upload = (b: Uint8Array, name = "report.pdf", type = "application/pdf") => formatUpload(type, name, b);
/** Every file on disk under the data directory's file store. */
function storedFiles(): string[] {
  const root = join(t.dir, "files");
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
  } catch {
    return [];
  }
}
const path = (url: string) => new URL(url).pathname;
const getFile = (url: string, headers: Record<string, string> = {}) =>
  t.app.handle(new Request(`http://localhost${path(url)}`, { headers }));

describe("uploads and serving", () => {
  test("an upload becomes an absolute URL served with type, disposition, ETag, ranges and caching", async () => {
    const data = bytes(5000);
    const r = await t.request("POST", "/doc", { body: { doc_id: "d1", title: "Q3", file: upload(data, "résumé 2026.pdf") } });
    expect(r.status).toBe(201);
    expect(r.body.file).toMatch(/^http:\/\/localhost\/_files\/development\/[0-9a-f]{32}\/r%C3%A9sum%C3%A9%202026\.pdf$/);
    expect((await t.request("GET", "/doc/d1")).body.file).toBe(r.body.file);
    const res = await getFile(r.body.file);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-disposition")).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9%202026.pdf");
    expect(res.headers.get("cache-control")).toContain("immutable");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(data);
    const etag = res.headers.get("etag")!;
    expect((await getFile(r.body.file, { "if-none-match": etag })).status).toBe(304);
    const part = await getFile(r.body.file, { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 100-199/5000");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(100, 200));
    const head = await t.app.handle(new Request(`http://localhost${path(r.body.file)}`, { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect((await t.app.handle(new Request("http://localhost/_files/development/00000000000000000000000000000000/x.pdf"))).status).toBe(
      404,
    );
  });

  test("--public-url makes the links", async () => {
    const p = await makeTestApp({ flags: { "--public-url": "https://api.example.com/" } });
    try {
      const r = await p.request("POST", "/pic", { body: { img: upload(bytes(10), "a.png", "image/png") } });
      expect(r.status).toBe(201);
      expect(r.body.img).toStartWith("https://api.example.com/_files/development/");
      expect((await p.admin("GET", "/schemas/pic")).body.fields.img).toEqual({ type: "binary" });
    } finally {
      await p.close();
    }
  });

  test("malformed uploads are 400, oversized ones 413, and neither leaves a file", async () => {
    const before = storedFiles().length;
    const cases = [
      "Content-Type: application/pdf\nContent-Transfer-Encoding: base64\n\nAAAA",
      "Content-Type: application/pdf\nContent-Disposition: attachment; filename=a.pdf\nContent-Transfer-Encoding: base64\n\n!!!not base64",
      "Content-Type: application/pdf\nContent-Disposition: attachment; filename=a.pdf\n\nAAAA",
      "Content-Type: nonsense\nContent-Disposition: attachment; filename=a.pdf\nContent-Transfer-Encoding: base64\n\nAAAA",
      "Content-Type: application/pdf\nContent-Disposition: attachment; filename=a.pdf\nContent-Transfer-Encoding: base64\nAAAA",
    ];
    for (const file of cases) {
      const r = await t.request("POST", "/doc", { body: { file } });
      expect([file.slice(0, 60), r.status]).toEqual([file.slice(0, 60), 400]);
      expect(r.body.error).toContain("file: malformed binary upload");
    }
    expect((await t.request("POST", "/doc", { body: { file: "http://elsewhere/x.pdf" } })).status).toBe(400);
    await t.admin("PUT", "/settings/development", { files: { maxBytes: 1000 } });
    const big = await t.request("POST", "/doc", { body: { file: upload(bytes(1001)) } });
    expect(big.status).toBe(413);
    await t.admin("PUT", "/settings/development", { files: { maxBytes: null } });
    expect(storedFiles().length).toBe(before);
  });
});

describe("no orphan files", () => {
  test("replacing a file deletes the old one; null deletes it; the stored URL sent back changes nothing", async () => {
    const c = await t.request("POST", "/doc", { body: { doc_id: "d2", file: upload(bytes(100, 2), "one.txt", "text/plain") } });
    const first = c.body.file;
    const u = await t.request("PUT", "/doc/d2", { body: { file: upload(bytes(100, 3), "two.txt", "text/plain") } });
    expect(u.body.file).not.toBe(first);
    expect((await getFile(first)).status).toBe(404);
    expect((await getFile(u.body.file)).status).toBe(200);
    const same = await t.request("PUT", "/doc/d2", { body: { file: u.body.file, title: "kept" } });
    expect(same.status).toBe(200);
    expect(same.body.file).toBe(u.body.file);
    expect((await t.request("PUT", "/doc/d2", { body: { file: "http://localhost/_files/development/other" } })).status).toBe(400);
    const n = storedFiles().length;
    await t.request("PUT", "/doc/d2", { body: { file: null } });
    expect((await getFile(u.body.file)).status).toBe(404);
    expect(storedFiles().length).toBe(n - 1);
  });

  test("a failed write leaves no file: duplicate key, missing object, bad other field", async () => {
    await t.request("POST", "/doc", { body: { doc_id: "dup" } });
    const n = storedFiles().length;
    expect((await t.request("POST", "/doc", { body: { doc_id: "dup", file: upload(bytes(50)) } })).status).toBe(409);
    expect((await t.request("PUT", "/doc/missing", { body: { file: upload(bytes(50)) } })).status).toBe(404);
    expect((await t.request("POST", "/doc", { body: { file: upload(bytes(50)), thumb: 42 } })).status).toBe(400);
    const batch = await t.request("POST", "/doc", {
      body: [
        { doc_id: "dup", file: upload(bytes(50)) },
        { doc_id: "b-ok", file: upload(bytes(50)) },
      ],
    });
    expect(batch.body).toEqual({ succeeded: ["b-ok"], failed: ["dup"] });
    expect(storedFiles().length).toBe(n + 1);
  });

  test("deleting objects deletes their files: by key, by query, by cascade, with the schema", async () => {
    const make = async (id: string) =>
      (
        await t.request("POST", "/doc", {
          body: { doc_id: id, title: "gone", file: upload(bytes(20)), thumb: upload(bytes(10), "t.png", "image/png") },
        })
      ).body;
    const a = await make("del-a");
    await t.request("DELETE", "/doc/del-a");
    expect((await getFile(a.file)).status).toBe(404);
    expect((await getFile(a.thumb)).status).toBe(404);
    const b = await make("del-b");
    const onDisk = storedFiles().length;
    await t.request("DELETE", "/doc?title=gone");
    expect((await getFile(b.file)).status).toBe(404);
    expect(storedFiles().length).toBe(onDisk - 2);
    await t.request("POST", "/folder", { body: { folder_id: "f1" } });
    const created = await t.request("POST", "/folder/f1/docs", { body: [{ doc_id: "in-folder", file: upload(bytes(30)) }] });
    expect(created.body.succeeded).toEqual(["in-folder"]);
    const url = (await t.request("GET", "/doc/in-folder")).body.file;
    await t.request("DELETE", "/folder/f1/docs/in-folder", { headers: { "x-service-cascadedelete": "true" } });
    expect((await getFile(url)).status).toBe(404);
    const before = storedFiles().length;
    await t.admin("PUT", "/schemas/scratch", { fields: { f: { type: "binary" } } });
    await t.request("POST", "/scratch", { body: [{ f: upload(bytes(5)) }, { f: upload(bytes(6)) }] });
    expect(storedFiles().length).toBe(before + 2);
    await t.admin("DELETE", "/schemas/scratch");
    await t.burrow.files.drain("development", t.burrow.envDbs.development);
    expect(storedFiles().length).toBe(before);
    // Deleted uploads leave no empty directories behind.
    const dirs = readdirSync(join(t.dir, "files/development"), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(dirs.filter((d) => readdirSync(join(t.dir, "files/development", d.name)).length === 0)).toEqual([]);
  });
});

describe("S3 file store", () => {
  test("uploads go to S3 when the environment's settings say so; served by redirect; deleted with the object", async () => {
    const s3 = await startS3();
    try {
      const put = await t.admin("PUT", "/settings/development", {
        files: {
          store: "s3",
          s3: {
            endpoint: s3.endpoint,
            bucket: s3.bucket,
            region: "us-east-1",
            accessKeyId: s3.accessKeyId,
            secretAccessKey: s3.secretAccessKey,
            prefix: "burrow/",
          },
        },
      });
      expect(put.status).toBe(200);
      const data = bytes(3000, 9);
      const local = storedFiles().length;
      const r = await t.request("POST", "/doc", { body: { doc_id: "s3doc", file: upload(data, "cloud.bin", "application/octet-stream") } });
      expect(r.status).toBe(201);
      expect(storedFiles().length).toBe(local);
      const key = decodeURIComponent(path(r.body.file).slice("/_files/".length));
      const raw = new S3Client({
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: "us-east-1",
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      });
      expect(await raw.file(`burrow/${key}`).exists()).toBe(true);
      const res = await getFile(r.body.file);
      expect(res.status).toBe(302);
      const fetched = await fetch(res.headers.get("location")!);
      expect(new Uint8Array(await fetched.arrayBuffer())).toEqual(data);
      await t.request("DELETE", "/doc/s3doc");
      expect(await raw.file(`burrow/${key}`).exists()).toBe(false);
    } finally {
      await t.admin("PUT", "/settings/development", { files: { store: null, s3: null } });
      await s3.stop();
    }
  }, 60_000);
});
