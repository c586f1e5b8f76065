// Runs the FileStore contract against the S3 store on a real S3-compatible server (s3rver on a free loopback port),
// plus what only it does: the object prefix, stored headers, the presigned redirect, 304 without touching S3.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { S3Client } from "bun";
import { S3FileStore } from "../../src/files/s3-store.ts";
import { startS3 } from "../helpers/s3rver.ts";
import { newKey, request, runFileStoreContract } from "./file-store.contract.ts";

const PREFIX = "t/";
const REGION = "us-east-1";

let server: Awaited<ReturnType<typeof startS3>> | undefined;

beforeAll(async () => {
  server = await startS3();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

function connection() {
  if (!server) throw new Error("s3rver did not start");
  const { endpoint, bucket, accessKeyId, secretAccessKey } = server;
  return { endpoint, bucket, accessKeyId, secretAccessKey, region: REGION };
}

runFileStoreContract("S3FileStore → s3rver", async () => {
  return { store: new S3FileStore({ ...connection(), prefix: PREFIX }), cleanup: async () => {} };
});

describe("S3FileStore only", () => {
  test("objects are stored under the prefix, with their Content-Type and Content-Disposition", async () => {
    const store = new S3FileStore({ ...connection(), prefix: PREFIX });
    const raw = new S3Client(connection());
    const key = newKey("report.pdf");
    const bytes = new TextEncoder().encode("%PDF fake report");
    await store.put(key, bytes, { contentType: "application/pdf", filename: "report.pdf" });

    expect(await raw.exists(PREFIX + key)).toBe(true);
    expect(await raw.exists(key)).toBe(false);
    expect(await raw.file(PREFIX + key).text()).toBe("%PDF fake report");
    const stored = await fetch(raw.presign(PREFIX + key, { method: "HEAD" }), { method: "HEAD" });
    expect(stored.headers.get("content-type")).toBe("application/pdf");
    expect(stored.headers.get("content-disposition")).toBe(`inline; filename="report.pdf"`);

    await store.delete(key);
    expect(await raw.exists(PREFIX + key)).toBe(false);
  });

  test("serve redirects to a URL presigned for one hour under the prefix, for the request's method", async () => {
    const store = new S3FileStore({ ...connection(), prefix: PREFIX });
    const key = newKey("a.txt");
    const meta = await store.put(key, new Uint8Array([1]), { contentType: "text/plain", filename: "a.txt" });

    for (const method of ["GET", "HEAD"] as const) {
      const res = await store.serve(key, meta, request(method));
      expect(res.status).toBe(302);
      expect(res.body).toBeNull();
      const location = new URL(res.headers.get("location")!);
      expect(location.origin).toBe(connection().endpoint);
      expect(decodeURIComponent(location.pathname)).toBe(`/${connection().bucket}/${PREFIX}${key}`);
      expect(location.searchParams.get("X-Amz-Expires")).toBe("3600");
      expect(location.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
      expect(location.searchParams.get("response-content-type")).toBe("text/plain");
      expect(location.searchParams.get("response-content-disposition")).toBe(`inline; filename="a.txt"`);
    }
  });

  test("the redirect is exactly what Bun's client presigns for the request's method (HEAD is signed as HEAD)", async () => {
    const store = new S3FileStore({ ...connection(), prefix: PREFIX });
    const raw = new S3Client(connection());
    const key = newKey("signed.txt");
    const meta = await store.put(key, new Uint8Array([1]), { contentType: "text/plain", filename: "signed.txt" });

    for (const method of ["GET", "HEAD"] as const) {
      const presign = () =>
        raw.presign(PREFIX + key, { method, expiresIn: 3600, type: "text/plain", contentDisposition: `inline; filename="signed.txt"` });
      // Signatures embed the time to the second: the store's URL matches one taken just before or just after it.
      const before = presign();
      const location = (await store.serve(key, meta, request(method))).headers.get("location");
      const after = presign();
      expect([before, after], method).toContain(location!);
    }
  });

  test("serve answers without contacting S3 (304 and the redirect work with S3 unreachable)", async () => {
    const store = new S3FileStore({ ...connection(), endpoint: "http://127.0.0.1:9", prefix: PREFIX });
    const key = newKey("offline.txt");
    const meta = { contentType: "text/plain", filename: "offline.txt", size: 1, etag: `"${"a".repeat(64)}"`, created: Date.now() };

    const notModified = await store.serve(key, meta, request("GET", { "If-None-Match": meta.etag }));
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe(meta.etag);
    const redirect = await store.serve(key, meta, request("GET"));
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toStartWith("http://127.0.0.1:9/");
  });
});
