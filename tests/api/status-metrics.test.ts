// The server's own figures (docs/api/admin.md#status-metrics-and-health): requests counted by area in GET /_admin/api/status and
// /_status/data, the status page public or for admins only, /_metrics off by default, on with --metrics and
// behind a token with BURROW_METRICS_TOKEN, and the request log ring at GET /_admin/api/logs?source=requests.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";

let t: TestApp;
/** Figures are recorded when an answer is ready, a promised one when it settles: let those run before reading. */
const settle = () => Bun.sleep(20);
beforeAll(async () => {
  t = await makeTestApp({ logLevel: "info" });
});
afterAll(() => t.close());

describe("figures by area", () => {
  test("data, users, custom code, push, files, admin and system requests are told apart", async () => {
    expect((await t.request("POST", "/note", { body: { text: "a" } })).status).toBe(201);
    expect((await t.request("GET", "/note")).status).toBe(200);
    expect((await t.request("GET", "/note/missing")).status).toBe(404);
    expect((await t.request("POST", "/user", { body: { username: "ann", password: "secret-1" } })).status).toBe(201);
    expect((await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "wrong" } })).status).toBe(401);
    expect((await upload(t, 'export const methods = [{ name: "hi", execute() { return { body: "hi" }; } }];')).status).toBe(200);
    expect((await t.request("GET", "/hi")).status).toBe(200);
    expect((await t.request("DELETE", `/_push/tokens/ios/${"ab".repeat(32)}`)).status).toBe(200);
    expect((await t.request("GET", "/_files/development/nothing/x.png")).status).toBe(404);
    expect((await t.request("GET", "/_health", { key: null, version: null })).status).toBe(200);
    await settle();
    const s = await t.admin("GET", "/status");
    expect(s.status).toBe(200);
    const r = s.body.requests;
    // POST /user creates a user object through the datastore; /user/accessToken is a user endpoint.
    expect(r.data.requests).toBe(4);
    expect(r.data.clientErrors).toBe(1);
    expect(r.users.requests).toBe(1);
    expect(r.users.clientErrors).toBe(1);
    expect(r.code.requests).toBe(1);
    expect(r.push.requests).toBe(1);
    expect(r.files.requests).toBe(1);
    expect(r.system.requests).toBe(1);
    expect(r.admin.requests).toBeGreaterThanOrEqual(2); // login, code upload (and this call is counted after it answers)
    expect(r.data.p50).toBeGreaterThan(0);
    expect(s.body.areas).toEqual(["data", "users", "code", "push", "files", "admin", "system", "other"]);
    expect(s.body.series.length).toBeGreaterThanOrEqual(1);
    expect(s.body.stores.development.db).toBeGreaterThan(0);
    expect(s.body.push.development).toMatchObject({ depth: 0, lastHour: { notifications: 0 } });
    expect(s.body.code).toMatchObject({ running: true, calls: 1, failures: 0 });
    expect(s.body.process.rssBytes).toBeGreaterThan(1_000_000);
    expect(s.body.environments.development.objects.note).toBe(1);
  });

  test("the status page's figures are public by default and the page is served", async () => {
    const data = await t.request("GET", "/_status/data", { key: null, version: null });
    expect(data.status).toBe(200);
    expect(data.headers.get("cache-control")).toBe("no-store");
    expect(data.body.requests.data.requests).toBeGreaterThanOrEqual(3);
    // Schema names and object counts are an admin's: not in the public figures.
    expect(data.body.environments).toBeUndefined();
    expect(data.text).not.toContain("note");
    const page = await t.app.handle(new Request("http://localhost/_status/"));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('id="status"');
    const chunk = /src="(\/_status\/[^"]+\.js)"/.exec(html)![1]!;
    expect((await t.app.handle(new Request(`http://localhost${chunk}`))).status).toBe(200);
    const redirect = await t.app.handle(new Request("http://localhost/_status"));
    expect(redirect.status).toBe(308);
  });
});

describe("the public figures are shared, not recomputed per caller", () => {
  test("object counts are reused for 30 s on /_status/data; the admin API counts afresh", async () => {
    const token = (await t.request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null })).body.token;
    const asAdmin = { key: null, version: null, headers: { authorization: `Bearer ${token}` } };
    const first = (await t.request("GET", "/_status/data", asAdmin)).body.environments.development.objects.note;
    expect((await t.request("POST", "/note", { body: { text: "b" } })).status).toBe(201);
    await Bun.sleep(1100); // past the one-second sharing of the whole answer
    expect((await t.request("GET", "/_status/data", asAdmin)).body.environments.development.objects.note).toBe(first);
    expect((await t.admin("GET", "/status")).body.environments.development.objects.note).toBe(first + 1);
  });
});

describe("request log", () => {
  test("GET /logs?source=requests lists this process's requests newest first with filters, without query values", async () => {
    await t.request("GET", "/note?text=secret-value");
    await settle();
    const all = await t.admin("GET", "/logs?source=requests&limit=5");
    expect(all.status).toBe(200);
    expect(all.body.length).toBe(5);
    expect(all.body[0].id).toBeGreaterThan(all.body[1].id);
    const notes = await t.admin("GET", "/logs?source=requests&area=data&limit=50");
    expect(notes.body.every((e: { area: string }) => e.area === "data")).toBe(true);
    expect(notes.body.map((e: { path: string }) => e.path)).toContain("/note?text");
    expect(JSON.stringify(notes.body)).not.toContain("secret-value");
    const refused = await t.admin("GET", "/logs?source=requests&status=4xx");
    expect(refused.body.length).toBeGreaterThanOrEqual(2);
    expect(refused.body.every((e: { status: number }) => e.status >= 400 && e.status < 500)).toBe(true);
    const next = await t.admin("GET", `/logs?source=requests&limit=2&before=${all.body[1].id}`);
    expect(next.body[0].id).toBeLessThan(all.body[1].id);
    for (const bad of ["area=nope", "status=6xx", "env=staging", "before=x"])
      expect((await t.admin("GET", `/logs?source=requests&${bad}`)).status).toBe(400);
    expect((await t.admin("GET", "/logs?source=elsewhere")).status).toBe(400);
  });
});

describe("metrics", () => {
  test("/_metrics is 404 unless enabled", async () => {
    const r = await t.request("GET", "/_metrics", { key: null, version: null });
    expect(r.status).toBe(404);
    expect(r.body.error).toContain("--metrics");
  });

  test("with --metrics: the custom code threads report their memory once code runs", async () => {
    const m = await makeTestApp({ flags: { "--metrics": true } });
    try {
      const bundle = `export const methods = [{ name: "hello", execute() { return { body: "hi" }; } }];`;
      expect((await upload(m, bundle)).status).toBeLessThan(300);
      expect((await m.request("GET", "/hello")).status).toBe(200);
      const figure = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
      let text = "";
      for (let i = 0; i < 100 && figure(text, "burrow_code_thread_external_bytes") < 16 * 2 ** 20; i++) {
        text = (await m.request("GET", "/_metrics", { key: null, version: null })).text;
        await Bun.sleep(50);
      }
      expect(figure(text, "burrow_code_thread_heap_bytes")).toBeGreaterThan(0);
      // Each warm sandbox reserves its linear memory (16 MB at the start).
      expect(figure(text, "burrow_code_thread_external_bytes")).toBeGreaterThanOrEqual(16 * 2 ** 20);
      // A counter (none run yet on a fresh server: the threads collect only after megabytes of garbage).
      expect(text).toMatch(/^# TYPE burrow_code_thread_collections_total counter$/m);
      expect(text).toMatch(/^burrow_code_thread_collections_total \d+$/m);
    } finally {
      await m.close();
    }
  });

  test("with --metrics: Prometheus text with request counters and gauges", async () => {
    const m = await makeTestApp({ flags: { "--metrics": true } });
    try {
      await m.request("GET", "/_health", { key: null, version: null });
      await settle();
      const r = await m.request("GET", "/_metrics", { key: null, version: null });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect(r.text).toContain('burrow_http_requests_total{area="system",status="2xx"} 1');
      expect(r.text).toContain('burrow_store_bytes{store="development",file="db"}');
      expect(r.text).toContain('burrow_push_queue_depth{env="production"} 0');
      expect(r.text).toContain("process_resident_memory_bytes");
      // Memory apart: the JS heap in use and reserved, and what JS objects hold outside it (all positive byte counts).
      for (const name of ["burrow_heap_used_bytes", "burrow_heap_total_bytes", "burrow_external_memory_bytes"])
        expect(Number(new RegExp(`^${name} (\\d+)$`, "m").exec(r.text)?.[1])).toBeGreaterThan(0);
    } finally {
      await m.close();
    }
  });

  test("with a token: 401 without it or with a wrong one", async () => {
    const token = "metrics-token-0123456789";
    const m = await makeTestApp({ env: { BURROW_METRICS_TOKEN: token } });
    try {
      expect((await m.request("GET", "/_metrics", { key: null, version: null })).status).toBe(401);
      expect(
        (await m.request("GET", "/_metrics", { key: null, version: null, headers: { authorization: "Bearer wrong-token-0123456789" } }))
          .status,
      ).toBe(401);
      expect(
        (await m.request("GET", "/_metrics", { key: null, version: null, headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
    } finally {
      await m.close();
    }
  });

  test("a metrics token that is too short is a configuration error", async () => {
    await expect(makeTestApp({ env: { BURROW_METRICS_TOKEN: "short" } })).rejects.toThrow(/BURROW_METRICS_TOKEN|metricsToken/);
  });
});

describe("status for admins only", () => {
  test("--status-admin-only: the figures need an admin token, the page stays reachable", async () => {
    const a = await makeTestApp({ flags: { "--status-admin-only": true } });
    try {
      const none = await a.request("GET", "/_status/data", { key: null, version: null });
      expect(none.status).toBe(401);
      expect(none.body.error).toContain("/_admin/");
      const token = (
        await a.request("POST", "/_admin/api/login", {
          body: { email: "admin@example.com", password: "correct horse battery" },
          key: null,
          version: null,
        })
      ).body.token;
      expect(
        (await a.request("GET", "/_status/data", { key: null, version: null, headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      expect((await a.app.handle(new Request("http://localhost/_status/"))).status).toBe(200);
    } finally {
      await a.close();
    }
  });
});
