// Contract for the FileStore interface. The same suite runs against the local-disk store and against the S3 store
// talking to a real S3-compatible server (s3rver), so both back binary fields alike.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import type { FileMeta, FileStore } from "../../src/files/store.ts";

export type FileStoreTarget = { store: FileStore; cleanup(): Promise<void> };

const BIG_TIMEOUT_MS = 30_000;
const INVALID_KEYS = [
  "../x",
  "a/../b",
  ".",
  "a/./b",
  "/abs",
  "a\\b",
  "a//b",
  "a/b/",
  "",
  "a/b/c/d", // 4 segments
  `${"a".repeat(130)}/${"b".repeat(130)}/${"c".repeat(138)}`, // 400 chars, each segment within the byte cap
  `${"a".repeat(100)}/${"b".repeat(100)}/${"c".repeat(99)}`, // 301 chars
  `e/x/${"é".repeat(128)}`, // one segment of 256 UTF-8 bytes
  "a/b\u0001c",
  "a/b\nc",
  "a/b\u007fc",
  "a/b\u202ec", // right-to-left override
  "a/b~c", // `~` marks the local store's temp files
];

export function runFileStoreContract(name: string, make: () => Promise<FileStoreTarget>): void {
  describe(name, () => {
    const open: FileStoreTarget[] = [];
    const connect = async () => {
      const target = await make();
      open.push(target);
      return target.store;
    };
    afterEach(async () => {
      for (const target of open.splice(0)) await target.cleanup();
    });

    test("put then read returns the same bytes, and exists turns true", async () => {
      const store = await connect();
      const key = newKey("hello.txt");
      expect(await store.exists(key)).toBe(false);
      expect(await store.read(key)).toBeNull();

      const bytes = new TextEncoder().encode("hello, burrow");
      await store.put(key, bytes, { contentType: "text/plain", filename: "hello.txt" });
      expect(await store.exists(key)).toBe(true);
      expect(hex(await store.read(key))).toBe(hex(bytes));
    });

    test("put returns the metadata: size, quoted SHA-256 etag, created now", async () => {
      const store = await connect();
      const bytes = randomBytes(1234);
      const before = Date.now();
      const meta = await store.put(newKey("data.bin"), bytes, { contentType: "application/octet-stream", filename: "data.bin" });
      const after = Date.now();

      expect(meta.size).toBe(1234);
      expect(meta.etag).toBe(`"${createHash("sha256").update(bytes).digest("hex")}"`);
      expect(meta.etag).toMatch(/^"[0-9a-f]{64}"$/);
      expect(meta.contentType).toBe("application/octet-stream");
      expect(meta.filename).toBe("data.bin");
      expect(meta.created).toBeGreaterThanOrEqual(before);
      expect(meta.created).toBeLessThanOrEqual(after);
    });

    test("put overwrites: the new bytes replace the old ones entirely", async () => {
      const store = await connect();
      const key = newKey("v.txt");
      const first = await store.put(key, new TextEncoder().encode("the first, longer version"), {
        contentType: "text/plain",
        filename: "v.txt",
      });
      const second = await store.put(key, new TextEncoder().encode("v2"), { contentType: "text/plain", filename: "v.txt" });

      expect(new TextDecoder().decode((await store.read(key))!)).toBe("v2");
      expect(second.size).toBe(2);
      expect(second.etag).not.toBe(first.etag);
    });

    test("delete removes the file and is idempotent", async () => {
      const store = await connect();
      const key = newKey("gone.txt");
      const other = newKey("kept.txt");
      await store.put(key, new Uint8Array([1, 2, 3]), { contentType: "text/plain", filename: "gone.txt" });
      await store.put(other, new Uint8Array([4, 5, 6]), { contentType: "text/plain", filename: "kept.txt" });

      await store.delete(key);
      expect(await store.read(key)).toBeNull();
      expect(await store.exists(key)).toBe(false);
      expect(await store.delete(key)).toBeUndefined();
      expect(await store.delete(newKey("never-stored.txt"))).toBeUndefined();
      expect(Array.from((await store.read(other))!)).toEqual([4, 5, 6]);
    });

    test("a key that is only a prefix of a stored key is not a file", async () => {
      const store = await connect();
      const key = newKey("inner.txt");
      const parent = key.slice(0, key.lastIndexOf("/"));
      await store.put(key, new Uint8Array([7]), { contentType: "text/plain", filename: "inner.txt" });

      expect(await store.exists(parent)).toBe(false);
      expect(await store.read(parent)).toBeNull();
      await store.delete(parent);
      expect(await store.exists(key)).toBe(true);
    });

    test("invalid keys are rejected by put, read, exists and delete", async () => {
      const store = await connect();
      const meta = { contentType: "text/plain", filename: "x" };
      for (const key of INVALID_KEYS) {
        await expect(store.put(key, new Uint8Array([1]), meta), key).rejects.toThrow(/invalid file key/);
        await expect(store.read(key), key).rejects.toThrow(/invalid file key/);
        await expect(store.exists(key), key).rejects.toThrow(/invalid file key/);
        await expect(store.delete(key), key).rejects.toThrow(/invalid file key/);
      }
    });

    test("valid keys at the edges of the rules are accepted", async () => {
      const store = await connect();
      const meta = { contentType: "text/plain", filename: "x" };
      const edgy = [
        "single",
        `${"a".repeat(100)}/${"b".repeat(100)}/${"c".repeat(98)}`, // exactly 300 chars
        `e/${hex32()}/.hidden name-1_2.tar.gz`,
        `e/${hex32()}/Ünïcödé 名前 😀.txt`,
        // 232 bytes in one segment: s3rver keeps objects as files named `<segment>._S3rver_metadata.json` and crashes
        // (unhandled ENAMETOOLONG) past 255 bytes, so the 255-byte boundary itself is checked on the local store only.
        `e/${hex32()}/${"é".repeat(116)}`,
      ];
      for (const key of edgy) {
        await store.put(key, new TextEncoder().encode(key), meta);
        expect(new TextDecoder().decode((await store.read(key))!)).toBe(key);
        await store.delete(key);
      }
    });

    test("a UTF-8 filename round-trips through the key, the bytes and Content-Disposition", async () => {
      const store = await connect();
      const filename = "résumé 😀.pdf";
      const key = newKey(filename);
      const bytes = new TextEncoder().encode("%PDF-1.7 fake");
      const meta = await store.put(key, bytes, { contentType: "application/pdf", filename });
      expect(meta.filename).toBe(filename);
      expect(hex(await store.read(key))).toBe(hex(bytes));

      const res = await fetchServed(store, key, meta);
      expect(res.status).toBe(200);
      const disposition = res.headers.get("content-disposition") ?? "";
      expect(disposition).toContain(`filename="r_sum_ _.pdf"`);
      const encoded = /filename\*=UTF-8''([^;\s]+)/.exec(disposition)?.[1];
      expect(encoded).toBeDefined();
      expect(decodeURIComponent(encoded!)).toBe(filename);
    });

    test("quotes and backslashes in the filename are escaped in Content-Disposition", async () => {
      const store = await connect();
      const key = newKey("quoted.txt");
      const meta = await store.put(key, new Uint8Array([1]), { contentType: "text/plain", filename: 'say "hi"\\.txt' });

      const res = await fetchServed(store, key, meta);
      expect(res.headers.get("content-disposition")).toBe('inline; filename="say \\"hi\\"\\\\.txt"');
    });

    test(
      "a 5 MB random buffer round-trips byte for byte",
      async () => {
        const store = await connect();
        const key = newKey("big.bin");
        const bytes = randomBytes(5 * 1024 * 1024);
        const meta = await store.put(key, bytes, { contentType: "application/octet-stream", filename: "big.bin" });
        expect(meta.size).toBe(bytes.length);

        const back = await store.read(key);
        expect(back?.length).toBe(bytes.length);
        expect(Buffer.from(back!).equals(bytes)).toBe(true);
        const served = new Uint8Array(await (await fetchServed(store, key, meta)).arrayBuffer());
        expect(Buffer.from(served).equals(bytes)).toBe(true);
      },
      BIG_TIMEOUT_MS,
    );

    test("serve GET answers the bytes with the Content-Type and a Content-Disposition naming the file", async () => {
      const store = await connect();
      const key = newKey("photo.png");
      const bytes = randomBytes(300);
      const meta = await store.put(key, bytes, { contentType: "image/png", filename: "photo.png" });

      const res = await fetchServed(store, key, meta);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      expect(res.headers.get("content-disposition")).toBe(`inline; filename="photo.png"`);
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    });

    test("serve HEAD has the headers but no body", async () => {
      const store = await connect();
      const key = newKey("head.txt");
      const meta = await store.put(key, randomBytes(77), { contentType: "text/plain", filename: "head.txt" });

      const direct = await store.serve(key, meta, request("HEAD"));
      expect(direct.body).toBeNull();
      const res = await fetchServed(store, key, meta, "HEAD");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBe("77");
      expect(res.headers.get("content-type")).toBe("text/plain");
      expect((await res.arrayBuffer()).byteLength).toBe(0);
    });

    test("If-None-Match with the etag answers 304 without a body; another etag does not", async () => {
      const store = await connect();
      const key = newKey("cached.txt");
      const meta = await store.put(key, randomBytes(50), { contentType: "text/plain", filename: "cached.txt" });

      for (const tag of [meta.etag, `W/${meta.etag}`, `"other", ${meta.etag}`, "*"]) {
        const res = await store.serve(key, meta, request("GET", { "If-None-Match": tag }));
        expect(res.status, tag).toBe(304);
        expect(res.headers.get("etag")).toBe(meta.etag);
        expect(res.body).toBeNull();
      }
      const stale = await store.serve(key, meta, request("GET", { "If-None-Match": `"${"0".repeat(64)}"` }));
      expect(stale.status).toBe(store.kind === "s3" ? 302 : 200);
    });
  });
}

/** A fresh key shaped like the real ones: `<env>/<32 lowercase hex>/<filename>`. */
export function newKey(filename: string): string {
  return `test/${hex32()}/${filename}`;
}

export function request(method: "GET" | "HEAD", headers: Record<string, string> = {}): Request {
  return new Request("http://burrow.test/_files/x", { method, headers });
}

/** Serves the file; the S3 store must answer a 302 to a presigned URL, which is then followed explicitly. */
async function fetchServed(store: FileStore, key: string, meta: FileMeta, method: "GET" | "HEAD" = "GET"): Promise<Response> {
  const res = await store.serve(key, meta, request(method));
  if (store.kind === "local") return res;
  expect(res.status).toBe(302);
  expect(res.headers.get("cache-control")).toBe("private, max-age=300");
  const location = res.headers.get("location");
  expect(location).toStartWith("http");
  return fetch(location!, { method, redirect: "manual" });
}

function hex32(): string {
  return randomBytes(16).toString("hex");
}

function hex(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : Buffer.from(bytes).toString("hex");
}
