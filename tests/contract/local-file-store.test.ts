// Runs the FileStore contract against the local-disk store in a temp dir, plus what only it does: byte ranges,
// caching headers, the 404 body and the atomic write (no temp file survives, even when the rename fails).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LocalFileStore } from "../../src/files/local-store.ts";
import type { FileMeta } from "../../src/files/store.ts";
import { newKey, request, runFileStoreContract } from "./file-store.contract.ts";

function tempRoot(): string {
  return mkdtempSync(join(tmpdir(), "burrow-files-"));
}

runFileStoreContract("LocalFileStore", async () => {
  const root = tempRoot();
  return { store: new LocalFileStore(root), cleanup: async () => rmSync(root, { recursive: true, force: true }) };
});

describe("LocalFileStore only", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  /** A store holding one 100-byte file whose byte i is i. */
  const withFile = async () => {
    const root = tempRoot();
    roots.push(root);
    const store = new LocalFileStore(root);
    const key = newKey("numbers.bin");
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    const meta = await store.put(key, bytes, { contentType: "application/octet-stream", filename: "numbers.bin" });
    return { root, store, key, meta };
  };
  const body = async (res: Response) => Array.from(new Uint8Array(await res.arrayBuffer()));
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  test("files live at <root>/<key>", async () => {
    const { root, key } = await withFile();
    expect(Array.from(readFileSync(join(root, key)))).toEqual(range(0, 99));
  });

  test("a filename segment of exactly 255 UTF-8 bytes is stored; 256 bytes is an invalid key", async () => {
    const { store } = await withFile();
    const longest = newKey(`${"é".repeat(127)}a`);
    await store.put(longest, new Uint8Array([1]), { contentType: "text/plain", filename: "long" });
    expect(await store.exists(longest)).toBe(true);
    await expect(store.put(newKey("é".repeat(128)), new Uint8Array([1]), { contentType: "text/plain", filename: "long" })).rejects.toThrow(
      /invalid file key/,
    );
  });

  test("single byte ranges answer 206 with Content-Range and only those bytes", async () => {
    const { store, key, meta } = await withFile();
    const cases: [string, number, number][] = [
      ["bytes=0-9", 0, 9],
      ["bytes=10-", 10, 99],
      ["bytes=-5", 95, 99],
      ["bytes=90-500", 90, 99],
      ["bytes=-500", 0, 99],
    ];
    for (const [header, from, to] of cases) {
      const res = await store.serve(key, meta, request("GET", { Range: header }));
      expect(res.status, header).toBe(206);
      expect(res.headers.get("content-range"), header).toBe(`bytes ${from}-${to}/100`);
      expect(res.headers.get("content-length"), header).toBe(String(to - from + 1));
      expect(await body(res), header).toEqual(range(from, to));
    }
    const head = await store.serve(key, meta, request("HEAD", { Range: "bytes=0-9" }));
    expect(head.status).toBe(206);
    expect(head.headers.get("content-range")).toBe("bytes 0-9/100");
    expect(head.body).toBeNull();
  });

  test("an unsatisfiable range answers 416 with Content-Range bytes */size", async () => {
    const { store, key, meta } = await withFile();
    for (const header of ["bytes=100-", "bytes=150-200", "bytes=-0"]) {
      const res = await store.serve(key, meta, request("GET", { Range: header }));
      expect(res.status, header).toBe(416);
      expect(res.headers.get("content-range"), header).toBe("bytes */100");
    }
  });

  test("several ranges, a malformed Range or a stale If-Range get the whole file with 200", async () => {
    const { store, key, meta } = await withFile();
    const cases: Record<string, string>[] = [
      { Range: "bytes=0-1,5-6" },
      { Range: "bytes=abc" },
      { Range: "bytes=5-2" },
      { Range: "bytes=-" },
      { Range: "items=0-9" },
      { Range: "bytes=0-9", "If-Range": `"${"0".repeat(64)}"` },
    ];
    for (const headers of cases) {
      const res = await store.serve(key, meta, request("GET", headers));
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.headers.get("content-range")).toBeNull();
      expect(await body(res)).toEqual(range(0, 99));
    }
    const fresh = await store.serve(key, meta, request("GET", { Range: "bytes=0-9", "If-Range": meta.etag }));
    expect(fresh.status).toBe(206);
  });

  test("a whole-file answer carries the caching and safety headers", async () => {
    const { store, key, meta } = await withFile();
    const res = await store.serve(key, meta, request("GET"));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("etag")).toBe(meta.etag);
    expect(res.headers.get("last-modified")).toBe(new Date(meta.created).toUTCString());
    expect(Math.abs(Date.parse(res.headers.get("last-modified")!) - meta.created)).toBeLessThan(1000);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-length")).toBe("100");
    // Not a type a browser shows in place: offered as a download.
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="numbers.bin"`);

    const notModified = await store.serve(key, meta, request("GET", { "If-None-Match": meta.etag }));
    expect(notModified.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });

  test("a missing file answers 404 JSON, and HEAD of it has no body", async () => {
    const { store, meta } = await withFile();
    const missing = newKey("missing.bin");
    const res = await store.serve(missing, meta, request("GET"));
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({ error: "file not found" });

    const head = await store.serve(missing, meta, request("HEAD"));
    expect(head.status).toBe(404);
    expect(head.body).toBeNull();
  });

  test("no temp file is left next to the file after puts", async () => {
    const { root, store, key } = await withFile();
    await store.put(key, new Uint8Array([1]), { contentType: "text/plain", filename: "numbers.bin" });
    expect(readdirSync(dirname(join(root, key)))).toEqual(["numbers.bin"]);
    expect(readdirSync(root, { recursive: true }).sort()).toEqual([dirname(key).split("/")[0]!, dirname(key), key].sort());
  });

  test("a put whose rename fails throws and leaves no temp file behind", async () => {
    const root = tempRoot();
    roots.push(root);
    const store = new LocalFileStore(root);
    const key = newKey("taken");
    mkdirSync(join(root, key), { recursive: true });

    await expect(store.put(key, new Uint8Array([1, 2, 3]), { contentType: "text/plain", filename: "taken" })).rejects.toThrow();
    expect(readdirSync(dirname(join(root, key)))).toEqual(["taken"]);
    expect(readdirSync(join(root, key))).toEqual([]);
    expect(await store.exists(key)).toBe(false);
  });

  test("serve reports the size on disk, not the size in the metadata", async () => {
    const { store, key, meta } = await withFile();
    const wrong: FileMeta = { ...meta, size: 5 };
    const res = await store.serve(key, wrong, request("GET"));
    expect(res.headers.get("content-length")).toBe("100");
    expect((await body(res)).length).toBe(100);
  });
});
