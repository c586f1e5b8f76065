// Guessing in parallel gains nothing, and sign-ups cannot burn the password hasher: the failed-login budget of an
// account (and of an admin) is taken before the password is checked, IPv6 clients count by their /64, duplicate
// keys of a batch are refused before any hashing, the accounts one public-key request may create are capped, and
// sign-ups have a per-IP limit of their own.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { passwordWork } from "../../src/auth/passwords.ts";
import { ADMIN, KEYS, makeTestApp, type RequestOptions, type TestApp } from "../helpers/app.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
/** The client address of a request: the x-test-peer header (the connection's peer in a real server). */
const from = (ip: string, opts: RequestOptions = {}): RequestOptions => ({ ...opts, headers: { ...opts.headers, "x-test-peer": ip } });
const form = (fields: Record<string, string>, ip = "192.0.2.1"): RequestOptions =>
  from(ip, { raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
const app = (method: string, path: string, body?: unknown) =>
  t.request(method, path, {
    body,
    key: null,
    headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
  });
const statuses = (rs: { status: number }[]) => {
  const n: Record<number, number> = {};
  for (const r of rs) n[r.status] = (n[r.status] ?? 0) + 1;
  return n;
};

beforeAll(async () => {
  t = await makeTestApp({ peer: (req) => req.headers.get("x-test-peer") });
  expect(
    (
      await app("POST", "/user", [
        { username: "ann", password: "ann-password" },
        { username: "bob", password: "bob-password" },
      ])
    ).status,
  ).toBe(200);
  // The harness's admin token, taken before a test spends the admin's failure budget.
  expect((await t.admin("GET", "/settings/development")).status).toBe(200);
});
afterAll(() => t.close());

describe("parallel guessing", () => {
  test("50 wrong passwords at once: at most failedLoginsPerAccount are checked, the rest are 429 before any check", async () => {
    const before = passwordWork.verifies;
    const guesses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.request("POST", "/user/accessToken", form({ username: "ann", password: `guess-${i}`, token_type: "mac" }, `192.0.2.${i + 1}`)),
      ),
    );
    expect(statuses(guesses)).toEqual({ 401: 10, 429: 40 });
    expect(passwordWork.verifies - before).toBe(10);
    expect(guesses.find((r) => r.status === 429)!.headers.get("retry-after")).toMatch(/^\d+$/);
    // The budget is spent: the right password is refused too until the window ends (no oracle).
    expect((await t.request("POST", "/user/accessToken", form({ username: "ann", password: "ann-password" }))).status).toBe(429);
    // Another account is not affected.
    expect((await t.request("POST", "/user/accessToken", form({ username: "bob", password: "bob-password" }))).status).toBe(200);
  });

  test("the legacy session login draws on the same budget", async () => {
    const tries = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 2 === 0
          ? t.request("GET", `/user/login?${new URLSearchParams({ username: "bob", password: `nope-${i}` })}`, from(`198.51.100.${i + 1}`))
          : t.request("POST", "/user/accessToken", form({ username: "bob", password: `nope-${i}` }, `198.51.100.${i + 1}`)),
      ),
    );
    expect(statuses(tries)).toEqual({ 401: 10, 429: 20 });
  });

  test("resetPassword's old password: parallel wrong ones get at most the budget's checks", async () => {
    expect((await app("POST", "/user", { username: "eve", password: "eve-password" })).status).toBe(201);
    const creds = (await t.request("POST", "/user/accessToken", form({ username: "eve", password: "eve-password", token_type: "mac" })))
      .body;
    const tries = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        t.request("POST", "/user/resetPassword", {
          body: { old: { password: `wrong-${i}` }, new: { password: "stolen" } },
          headers: { authorization: macAuth(creds, "POST", "/user/resetPassword") },
        }),
      ),
    );
    expect(statuses(tries)).toEqual({ 401: 10, 429: 15 });
  });

  test("a correct password gives the budget back", async () => {
    expect((await app("POST", "/user", { username: "cid", password: "cid-password" })).status).toBe(201);
    for (let i = 0; i < 9; i++)
      expect((await t.request("POST", "/user/accessToken", form({ username: "cid", password: "bad" }))).status).toBe(401);
    expect((await t.request("POST", "/user/accessToken", form({ username: "cid", password: "cid-password" }))).status).toBe(200);
    for (let i = 0; i < 9; i++)
      expect((await t.request("POST", "/user/accessToken", form({ username: "cid", password: "bad" }))).status).toBe(401);
  });

  test("admin sign-in: 50 wrong passwords at once get at most 10 checks", async () => {
    const guesses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.request(
          "POST",
          "/_admin/api/login",
          from(`203.0.113.${i + 1}`, { body: { email: ADMIN.email, password: `guess-${i}` }, key: null, version: null }),
        ),
      ),
    );
    expect(statuses(guesses)).toEqual({ 401: 10, 429: 40 });
  });

  test("the per-IP limit counts an IPv6 client by its /64", async () => {
    expect((await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 3 } })).status).toBe(200);
    try {
      const login = (ip: string) => t.request("POST", "/user/accessToken", form({ username: "dan", password: "x" }, ip));
      for (const ip of ["2001:db8:aa:1::1", "2001:db8:aa:1::2", "2001:db8:aa:1:ffff:ffff:ffff:ffff"])
        expect((await login(ip)).status).toBe(401);
      expect((await login("2001:db8:aa:1::99")).status).toBe(429);
      expect((await login("2001:0db8:00aa:0001:0000:0000:0000:0100")).status).toBe(429);
      expect((await login("2001:db8:aa:2::1")).status).toBe(401);
      // IPv4 clients still count one address each, also when mapped into IPv6.
      for (let i = 0; i < 3; i++) expect((await login("192.0.2.200")).status).toBe(401);
      expect((await login("::ffff:192.0.2.200")).status).toBe(429);
      expect((await login("192.0.2.201")).status).toBe(401);
    } finally {
      await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: null } });
    }
  });
});

describe("sign-ups cannot burn the password hasher", () => {
  test("duplicate keys in a batch fail before any hashing; so do keys that exist", async () => {
    const before = passwordWork.hashes;
    const batch = Array.from({ length: 18 }, (_, i) => ({ username: "dupe", password: `pw-${i}` }));
    const r = await t.request(
      "POST",
      "/user",
      from("192.0.2.50", { body: [...batch, { username: "ann", password: "taken" }, { username: "fresh1", password: "pw" }] }),
    );
    expect(r.status).toBe(200);
    expect(r.body.succeeded).toEqual(["dupe", "fresh1"]);
    expect(r.body.failed).toEqual([...Array(17).fill("dupe"), "ann"]);
    expect(passwordWork.hashes - before).toBe(2);
    expect((await t.request("POST", "/user/accessToken", form({ username: "dupe", password: "pw-0" }))).status).toBe(200);
  });

  test("at most 20 accounts with a password per public-key request; the private key may send more", async () => {
    const before = passwordWork.hashes;
    const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ username: `${prefix}${i}`, password: "pw-123456" }));
    const r = await t.request("POST", "/user", from("192.0.2.51", { body: many("cap", 21) }));
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("at most 20");
    expect(passwordWork.hashes - before).toBe(0);
    expect((await t.request("POST", "/user", from("192.0.2.51", { body: many("ok", 20) }))).body.succeeded).toHaveLength(20);
    expect((await app("POST", "/user", many("app", 30))).body.succeeded).toHaveLength(30);
    // The same cap on the other ways to create accounts: nested upserts and related creates.
    await t.admin("PUT", "/schemas/crew", { fields: { people: { type: "relationship", schema: "user", many: true } } });
    const nested = await t.request(
      "POST",
      "/crew",
      from("192.0.2.52", { body: { crew_id: "c1", people: many("nest", 21) }, headers: { "x-service-relations": "people=user" } }),
    );
    expect(nested.status).toBe(400);
    expect((await t.request("POST", "/crew", from("192.0.2.52", { body: { crew_id: "c2" } }))).status).toBe(201);
    expect((await t.request("POST", "/crew/c2/people", from("192.0.2.52", { body: many("rel", 21) }))).status).toBe(400);
  });

  test("sign-ups per IP and hour (rateLimits.signupsPerIpPerHour): a batch counts each account; the private key is not limited", async () => {
    expect((await t.admin("PUT", "/settings/development", { rateLimits: { signupsPerIpPerHour: 5 } })).status).toBe(200);
    try {
      const signup = (body: unknown, ip: string) => t.request("POST", "/user", from(ip, { body }));
      for (let i = 0; i < 3; i++) expect((await signup({ username: `s${i}`, password: "pw-123456" }, "192.0.2.60")).status).toBe(201);
      const batch = await signup(
        [
          { username: "s3", password: "pw-123456" },
          { username: "s4", password: "pw-123456" },
          { username: "s5", password: "pw-123456" },
        ],
        "192.0.2.60",
      );
      expect(batch.status).toBe(429);
      expect(batch.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(
        (
          await signup(
            [
              { username: "s3", password: "pw-123456" },
              { username: "s4", password: "pw-123456" },
            ],
            "192.0.2.60",
          )
        ).status,
      ).toBe(200);
      expect((await signup({ username: "s6", password: "pw-123456" }, "192.0.2.60")).status).toBe(429);
      // An IPv6 client: every address of its /64 shares one budget.
      for (let i = 0; i < 5; i++)
        expect((await signup({ username: `v6-${i}`, password: "pw-123456" }, `2001:db8:77:1::${i + 1}`)).status).toBe(201);
      expect((await signup({ username: "v6-x", password: "pw-123456" }, "2001:db8:77:1::abcd")).status).toBe(429);
      // Other schemas and the private key are not sign-ups.
      expect((await t.request("POST", "/crew", from("192.0.2.60", { body: { crew_id: "c3" } }))).status).toBe(201);
      expect((await app("POST", "/user", { username: "by-app", password: "pw-123456" })).status).toBe(201);
    } finally {
      await t.admin("PUT", "/settings/development", { rateLimits: { signupsPerIpPerHour: null } });
    }
  });
});
