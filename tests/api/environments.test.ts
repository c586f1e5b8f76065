// Environments, versions and API keys (docs/api/README.md#environments-and-versions): Accept parsing, key/environment matching, deploys.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

describe("API keys", () => {
  test("a request without X-Service-API-Key is 401 with {error}", async () => {
    const r = await t.request("GET", "/user", { key: null });
    expect(r.status).toBe(401);
    expect(r.body.error).toContain("X-Service-API-Key");
  });

  test("an unknown key is 401", async () => {
    const r = await t.request("GET", "/user", { key: "not-a-key" });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: "invalid API key" });
  });

  test("a private key is not a public key", async () => {
    expect((await t.request("GET", "/user", { key: KEYS.devPrivate })).status).toBe(401);
  });

  test("the production key on version 0 is 401, the development key on version 1 is 401", async () => {
    expect((await t.request("GET", "/user", { version: 0, key: KEYS.prodPublic })).status).toBe(401);
    expect((await t.request("GET", "/user", { version: 1, key: KEYS.devPublic })).status).toBe(401);
  });
});

describe("versions", () => {
  test("version 0 with the development key reaches development", async () => {
    const r = await t.request("GET", "/user");
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });

  test("a malformed version is 400", async () => {
    for (const v of ["abc", "-1", "1.5", "99999999999", ""]) {
      const r = await t.request("GET", "/user", { version: null, headers: { accept: `application/vnd.service+json; version=${v}` } });
      expect([v, r.status]).toEqual([v, 400]);
      expect(r.body.error).toContain("invalid API version");
    }
  });

  test("the media type is read leniently; the version wins", async () => {
    const r = await t.request("GET", "/user", { version: null, headers: { accept: "applicaton/vnd.service+json;version=0" } });
    expect(r.status).toBe(200);
  });

  test("no Accept: the development key means development", async () => {
    expect((await t.request("GET", "/user", { version: null, key: KEYS.devPublic })).status).toBe(200);
  });

  test("production answers 404 until the first deploy, then serves the deployed version", async () => {
    const before = await t.request("GET", "/user", { version: null, key: KEYS.prodPublic });
    expect(before.status).toBe(404);
    const v1 = await t.request("GET", "/user", { version: 1 });
    expect(v1.status).toBe(404);
    expect(v1.body).toEqual({ error: "API version 1 is not deployed" });

    const d = await t.admin("POST", "/deploy", {});
    expect(d.status).toBe(200);
    expect(d.body.version).toBe(1);
    expect((await t.request("GET", "/user", { version: 1 })).status).toBe(200);
    expect((await t.request("GET", "/user", { version: null, key: KEYS.prodPublic })).status).toBe(200);
    const v2 = await t.request("GET", "/user", { version: 2 });
    expect(v2.status).toBe(404);
    expect(v2.body.error).toBe("API version 2 is not deployed");
  });

  test("development and production hold separate data", async () => {
    const dev = await t.request("POST", "/user", { body: { username: "devonly", password: "secret-1" } });
    expect(dev.status).toBe(201);
    const prod = await t.request("GET", "/user/devonly", { version: 1 });
    expect(prod.status).toBe(404);
    const created = await t.request("POST", "/user", { version: 1, body: { username: "produser", password: "secret-2" } });
    expect(created.status).toBe(201);
    expect((await t.request("GET", "/user/produser")).status).toBe(404);
  });

  test("production never infers: unknown schema 404, unknown field 400", async () => {
    const s = await t.request("POST", "/gadget", { version: 1, body: { name: "x" } });
    expect(s.status).toBe(404);
    const f = await t.request("POST", "/user", { version: 1, body: { username: "p2", password: "pw-123456", shoe: 42 } });
    expect(f.status).toBe(400);
    expect(f.body.error).toBe("shoe does not exist in schema user");
  });
});
