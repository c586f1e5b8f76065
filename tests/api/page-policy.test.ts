// The content security policy of the server's pages (the console at /_admin/, the status page at /_status/, the
// API reference at /_admin/docs/): script-src is one nonce, fresh in every response and carried by the page's
// script tags, never 'self', a host, 'unsafe-eval' or 'unsafe-inline'; the other directives stay strict; the
// page is never stored. Plus the nonce helpers themselves.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newNonce, nonceSlots, pagePolicy, withNonce } from "../../src/http/page-policy.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

const PAGES = ["/_admin/", "/_status/", "/_admin/docs/", "/_admin/index.html"];

/** The policy's directives by name, each with its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name!.toLowerCase(), sources]),
  );
}

async function page(path: string): Promise<{ policy: Map<string, string[]>; raw: string; headers: Headers; html: string }> {
  const r = await t.app.handle(new Request(`http://localhost${path}`));
  expect([path, r.status]).toEqual([path, 200]);
  const raw = r.headers.get("content-security-policy") ?? "";
  return { policy: directives(raw), raw, headers: r.headers, html: await r.text() };
}

describe("every page", () => {
  for (const path of PAGES)
    test(`${path}: script-src is one fresh nonce that the page's scripts carry; nothing else may run`, async () => {
      const first = await page(path);
      const scriptSrc = first.policy.get("script-src")!;
      expect(scriptSrc).toHaveLength(1);
      const nonce = /^'nonce-([A-Za-z0-9+/]{22,}={0,2})'$/.exec(scriptSrc[0]!)?.[1];
      expect(nonce).toBeString();
      // No source that trusts URLs or code the page did not name itself.
      expect(first.raw).not.toContain("'unsafe-eval'");
      expect(first.raw).not.toContain("'strict-dynamic'");
      for (const name of ["script-src", "script-src-elem", "script-src-attr", "worker-src"])
        for (const source of first.policy.get(name) ?? []) expect([name, source]).toEqual([name, expect.stringMatching(/^'nonce-/)]);
      // Every script tag carries it, and there is at least one.
      const tags = [...first.html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
      expect(tags.length).toBeGreaterThan(0);
      for (const tag of tags) expect(tag).toContain(`nonce="${nonce}"`);
      // A fresh one per response, so a nonce read from one answer is worth nothing in the next.
      const second = await page(path);
      const again = second.policy.get("script-src")![0]!;
      expect(again).not.toBe(scriptSrc[0]);
      expect(second.html).toContain(`nonce="${again.slice(7, -1)}"`);
      expect(second.html).not.toContain(nonce!);
      // Never stored, so no cache hands out a page whose nonce the policy no longer names.
      expect(first.headers.get("cache-control")).toBe("no-store");
      expect(first.headers.get("etag")).toBeNull();
    });

  for (const path of PAGES)
    test(`${path}: the other directives stay strict`, async () => {
      const { policy, headers } = await page(path);
      expect(policy.get("default-src")).toEqual(["'self'"]);
      expect(policy.get("object-src")).toEqual(["'none'"]);
      expect(policy.get("base-uri")).toEqual(["'none'"]);
      expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
      expect(policy.get("connect-src")).toEqual(["'self'"]);
      expect(policy.get("form-action")).toEqual(["'self'"]);
      expect(policy.get("font-src")).toEqual(["'self'"]);
      // No other host anywhere in the policy.
      for (const [name, sources] of policy)
        for (const s of sources) expect([name, s]).toEqual([name, expect.stringMatching(/^('|data:$|blob:$)/)]);
      expect(headers.get("x-frame-options")).toBe("DENY");
      expect(headers.get("referrer-policy")).toBe("no-referrer");
      expect(headers.get("x-content-type-options")).toBe("nosniff");
    });

  test("the pages' own files are all on this origin, under the page's path", async () => {
    for (const [path, prefix] of [
      ["/_admin/", "/_admin/"],
      ["/_status/", "/_status/"],
      ["/_admin/docs/", "/_admin/docs/"],
    ] as const) {
      const { html } = await page(path);
      const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
      expect(refs.length).toBeGreaterThan(1);
      for (const ref of refs)
        expect([path, ref]).toEqual([path, ref === "data:," ? ref : expect.stringMatching(new RegExp(`^${prefix}[\\w.-]+$`))]);
    }
  });
});

describe("helpers", () => {
  test("a nonce is 16 random bytes in base64, different each time", () => {
    const seen = new Set(Array.from({ length: 1000 }, newNonce));
    expect(seen.size).toBe(1000);
    for (const n of seen) expect(Buffer.from(n, "base64")).toHaveLength(16);
  });

  test("nonce slots: after every script tag and modulepreload link, not after stylesheets", () => {
    const html = `<link rel="stylesheet" href="/a.css"><link rel="modulepreload" href="/b.js"><SCRIPT type="module" src="/c.js"></SCRIPT><script>1</script><scripted>`;
    expect(withNonce(nonceSlots(html), "N")).toBe(
      `<link rel="stylesheet" href="/a.css"><link nonce="N" rel="modulepreload" href="/b.js"><SCRIPT nonce="N" type="module" src="/c.js"></SCRIPT><script nonce="N">1</script><scripted>`,
    );
    expect(withNonce(nonceSlots("<p>no scripts</p>"), "N")).toBe("<p>no scripts</p>");
  });

  test("the policy names the nonce it is given", () => {
    expect(directives(pagePolicy("abc")).get("script-src")).toEqual(["'nonce-abc'"]);
  });
});
