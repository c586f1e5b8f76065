// OAuth 1.0 private-key requests, CORS per environment, rate limits on the auth endpoints.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
let ip = "198.51.100.1";
beforeAll(async () => {
  t = await makeTestApp({ peer: () => ip });
  await t.admin("PUT", "/schemas/vault", {
    fields: { secret: { type: "string" } },
    permissions: { create: "private_key", read: "private_key", update: "private_key", delete: "private_key" },
  });
  await t.request("POST", "/user", { body: { username: "ann", password: "ann-password" } });
});
afterAll(() => t.close());

const sign = (method: string, path: string, opts: Parameters<typeof oauthAuth>[4] = {}) =>
  oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`, opts);

describe("OAuth 1.0 with the private key", () => {
  test("a signed request is the app: it passes private_key permissions without X-Service-API-Key", async () => {
    expect((await t.request("POST", "/vault", { body: { secret: "x" } })).status).toBe(401);
    const c = await t.request("POST", "/vault", {
      key: null,
      body: { vault_id: "v1", secret: "x" },
      headers: { authorization: sign("POST", "/vault") },
    });
    expect(c.status).toBe(201);
    const r = await t.request("GET", "/vault?secret=x", { key: null, headers: { authorization: sign("GET", "/vault?secret=x") } });
    expect(r.body.map((v: any) => v.vault_id)).toEqual(["v1"]);
  });

  test("form parameters are part of the signature", async () => {
    const body = "username=ann&password=ann-password&token_type=mac";
    const ok = await t.request("POST", "/user/accessToken", {
      key: null,
      raw: body,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: sign("POST", "/user/accessToken", { formBody: body }),
      },
    });
    expect(ok.status).toBe(200);
    const tampered = await t.request("POST", "/user/accessToken", {
      key: null,
      raw: body.replace("ann-password", "other"),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: sign("POST", "/user/accessToken", { formBody: body }),
      },
    });
    expect(tampered.status).toBe(401);
  });

  test("bad signatures, replays, skewed clocks, unknown consumers and the other environment's key are refused", async () => {
    const path = "/vault";
    expect(
      (
        await t.request("GET", path, {
          key: null,
          headers: { authorization: oauthAuth(KEYS.devPublic, "wrong-private", "GET", `http://localhost${path}`) },
        })
      ).status,
    ).toBe(401);
    const once = sign("GET", path, { nonce: "fixed-nonce" });
    expect((await t.request("GET", path, { key: null, headers: { authorization: once } })).status).toBe(200);
    expect((await t.request("GET", path, { key: null, headers: { authorization: once } })).status).toBe(401);
    const now = Math.floor(Date.now() / 1000);
    expect(
      (await t.request("GET", path, { key: null, headers: { authorization: sign("GET", path, { timestamp: now - 400 }) } })).status,
    ).toBe(401);
    expect(
      (await t.request("GET", path, { key: null, headers: { authorization: sign("GET", path, { timestamp: now + 400 }) } })).status,
    ).toBe(401);
    expect(
      (
        await t.request("GET", path, {
          key: null,
          headers: { authorization: oauthAuth("unknown", KEYS.devPrivate, "GET", `http://localhost${path}`) },
        })
      ).status,
    ).toBe(401);
    const prod = await t.request("GET", path, {
      key: null,
      version: 0,
      headers: { authorization: oauthAuth(KEYS.prodPublic, KEYS.prodPrivate, "GET", `http://localhost${path}`) },
    });
    expect(prod.status).toBe(401);
  });
});

describe("CORS", () => {
  test("development allows any origin; preflights allow the X-Service-* headers, Authorization and Range", async () => {
    const pre = await t.app.handle(
      new Request("http://localhost/vault", {
        method: "OPTIONS",
        headers: {
          origin: "http://app.test",
          "access-control-request-method": "PUT",
          "access-control-request-headers": `x-service-api-key, x-service-api-key-${KEYS.devPublic}, authorization, range, content-type, accept, x-service-select, x-service-expand, x-service-orderby, x-service-relations, x-service-cascadedelete, x-service-user-agent`,
        },
      }),
    );
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(pre.headers.get("access-control-allow-headers")).toContain("x-service-relations");
    const actual = await t.request("GET", "/user", { headers: { origin: "http://app.test", range: "objects=0-0" } });
    expect(actual.headers.get("access-control-allow-origin")).toBe("*");
    expect(actual.headers.get("access-control-expose-headers")).toContain("Content-Range");
  });

  test("production allows only its configured origins", async () => {
    await t.admin("POST", "/deploy", {});
    const preflight = (origin: string) =>
      t.app.handle(
        new Request("http://localhost/user", {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "GET",
            "access-control-request-headers": `x-service-api-key-${KEYS.prodPublic}`,
          },
        }),
      );
    expect((await preflight("https://shop.example")).status).toBe(403);
    await t.admin("PUT", "/settings/production", { cors: { origins: ["https://shop.example"] } });
    const ok = await preflight("https://shop.example");
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    expect((await preflight("https://shop.example:8443")).status).toBe(403);
    const actual = await t.request("GET", "/user", { version: 1, headers: { origin: "https://evil.example" } });
    expect(actual.headers.get("access-control-allow-origin")).toBeNull();
    const allowed = await t.request("GET", "/user", { version: 1, headers: { origin: "https://shop.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://shop.example");
    const odd = await t.app.handle(
      new Request("http://localhost/user", {
        method: "OPTIONS",
        headers: {
          origin: "https://shop.example",
          "access-control-request-method": "GET",
          "access-control-request-headers": `x-service-api-key-${KEYS.prodPublic}, x-secret-thing`,
        },
      }),
    );
    expect(odd.status).toBe(403);
  });
});

describe("rate limits", () => {
  const login = (password: string) => t.request("POST", "/user/accessToken", { body: { username: "ann", password } });

  test("a brute force on one account is stopped after 10 failures, even with the right password, with Retry-After", async () => {
    ip = "198.51.100.20";
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await login(`guess-${i}`)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    const right = await login("ann-password");
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    t.burrow.limiter.reset("development|fail|user|ann");
    expect((await login("ann-password")).status).toBe(200);
  });

  test("per client IP across the auth endpoints, configurable in settings", async () => {
    ip = "198.51.100.30";
    await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 5 } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await login("ann-password")).status);
    for (let i = 0; i < 3; i++) statuses.push((await t.request("POST", "/user/refreshToken", { body: { refresh_token: "x" } })).status);
    expect(statuses).toEqual([200, 200, 200, 401, 401, 429]);
    ip = "198.51.100.31";
    expect((await login("ann-password")).status).toBe(200);
    await t.admin("PUT", "/settings/development", { rateLimits: null });
  });

  test("admin logins are limited too", async () => {
    ip = "198.51.100.40";
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push(
        (
          await t.request("POST", "/_admin/api/login", {
            key: null,
            version: null,
            body: { email: "admin@example.com", password: `wrong-${i}` },
          })
        ).status,
      );
    expect(statuses.slice(10)).toEqual([429, 429]);
  });
});
