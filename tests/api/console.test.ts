// The admin console's files at /_admin/ (docs/api/admin.md#console-and-reference-pages): built from static/console
// by Bun's HTML bundler; hashed chunks served with br/gzip, strong ETags (304 on revalidation) and year-long
// caching; the page never stored, with a strict content security policy (tests/api/page-policy.test.ts); the whole
// console stays under 1 MB uncompressed.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { consoleAssets, etagMatches, pickEncoding } from "../../src/console/console-assets.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return t.app.handle(new Request(`http://localhost${path}`, { headers }));
}

describe("serving", () => {
  test("/_admin redirects to /_admin/, keeping the query", async () => {
    const r = await get("/_admin?x=1");
    expect(r.status).toBe(308);
    expect(r.headers.get("location")).toBe("/_admin/?x=1");
  });

  test("the page: HTML, never stored, with a content security policy naming its script's nonce and framing refused", async () => {
    const r = await get("/_admin/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(r.headers.get("content-security-policy") ?? "")?.[1];
    expect(nonce).toBeString();
    expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    const html = await r.text();
    expect(html).toContain('<div id="app">');
    expect(html).toContain(`<script nonce="${nonce}" type="module"`);
    // Chunks are addressed under /_admin/ (Bun's HTML bundler with the console's public path).
    const scripts = [...html.matchAll(/(?:src|href)="(\/_admin\/[^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.some((s) => s.endsWith(".js"))).toBe(true);
    expect(scripts.some((s) => s.endsWith(".css"))).toBe(true);
    for (const s of scripts) {
      const c = await get(s);
      expect(c.status).toBe(200);
      expect(c.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(c.headers.get("content-type")).toMatch(s.endsWith(".js") ? /javascript/ : /text\/css/);
    }
  });

  /** The console's script chunk, as the page names it. */
  async function chunk(): Promise<string> {
    const html = await (await get("/_admin/")).text();
    return /src="(\/_admin\/[^"]+\.js)"/.exec(html)![1]!;
  }

  test("chunks are compressed as the client accepts (br before gzip), identical once decompressed; the page is not", async () => {
    const js = await chunk();
    const plain = new Uint8Array(await (await get(js)).arrayBuffer());
    const br = await get(js, { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")).toBe("accept-encoding");
    expect(new Uint8Array(brotliDecompressSync(new Uint8Array(await br.arrayBuffer())))).toEqual(plain);
    const gz = await get(js, { "accept-encoding": "gzip" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(new Uint8Array(gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toEqual(plain);
    const refused = await get(js, { "accept-encoding": "br;q=0, gzip;q=0" });
    expect(refused.headers.get("content-encoding")).toBeNull();
    // The page is made per response (its nonce) and is under 1 KB: sent as it is.
    const page = await get("/_admin/", { "accept-encoding": "gzip, deflate, br" });
    expect(page.headers.get("content-encoding")).toBeNull();
    expect(Number(page.headers.get("content-length"))).toBeLessThan(1024);
  });

  test("chunks have a strong ETag; If-None-Match answers 304 without a body; the page has none and is always sent", async () => {
    const js = await chunk();
    const first = await get(js);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const again = await get(js, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect((await get(js, { "if-none-match": '"other"' })).status).toBe(200);
    const page = await get("/_admin/", { "if-none-match": "*" });
    expect(page.status).toBe(200);
    expect(page.headers.get("etag")).toBeNull();
  });

  test("an unknown console file is a JSON 404; the admin API and docs keep their routes", async () => {
    const r = await get("/_admin/nope.js");
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: string }).error).toContain("nope.js");
    expect((await get("/_admin/api/keys")).status).toBe(401);
    expect((await get("/_admin/api/openapi.json")).status).toBe(200);
  });

  test("HEAD gives the headers without a body", async () => {
    const r = await t.app.handle(new Request("http://localhost/_admin/", { method: "HEAD" }));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toContain("script-src 'nonce-");
    expect(Number(r.headers.get("content-length"))).toBeGreaterThan(100);
    expect(await r.text()).toBe("");
    const js = await t.app.handle(new Request(`http://localhost${await chunk()}`, { method: "HEAD" }));
    expect(js.headers.get("etag")).toMatch(/^"/);
    expect(await js.text()).toBe("");
  });
});

describe("size", () => {
  test("every console file together is at most 1 MB uncompressed", async () => {
    const assets = [...(await consoleAssets()).values()];
    const total = assets.reduce((n, a) => n + a.body.length, 0);
    const gzip = (await Promise.all(assets.map((a) => a.encoded))).reduce((n, e) => n + e.gzip.length, 0);
    console.log(`console: ${assets.length} files, ${(total / 1024).toFixed(1)} KiB, ${(gzip / 1024).toFixed(1)} KiB gzip`);
    expect(total).toBeLessThanOrEqual(1024 * 1024);
    expect(assets.map((a) => a.name)).toContain("index.html");
  });
});

describe("helpers", () => {
  test("encoding negotiation", () => {
    expect(pickEncoding(null)).toBeNull();
    expect(pickEncoding("gzip")).toBe("gzip");
    expect(pickEncoding("gzip, br")).toBe("br");
    expect(pickEncoding("br;q=0, gzip")).toBe("gzip");
    expect(pickEncoding("*")).toBe("br");
    expect(pickEncoding("identity")).toBeNull();
    expect(pickEncoding("BR")).toBe("br");
  });

  test("If-None-Match", () => {
    expect(etagMatches('"a"', '"a"')).toBe(true);
    expect(etagMatches('W/"a"', '"a"')).toBe(true);
    expect(etagMatches('"b", "a"', '"a"')).toBe(true);
    expect(etagMatches("*", '"a"')).toBe(true);
    expect(etagMatches('"b"', '"a"')).toBe(false);
    expect(etagMatches(null, '"a"')).toBe(false);
  });
});
