// User accounts through the admin API: setting a password (temporary passwords dropped, the schema's password
// rule), revoking every session (MAC tokens and cookie sessions), listing and removing social links without their
// credentials, production through the latest deployed version, and the refusals (400, 403, 404).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, makeTestApp, type TestApp, type TestResponse } from "../helpers/app.ts";
import { macAuth, type MacCredentials } from "../helpers/sign.ts";

let t: TestApp;
let viewer: string;
beforeAll(async () => {
  t = await makeTestApp();
  const user = (await t.admin("GET", "/schemas/user")).body;
  await t.admin("PUT", "/schemas/user", { ...user, user: { ...user.user, forgotPassword: true } });
  await t.admin("PUT", "/schemas/member", {
    fields: { pw: { type: "password" }, mail: { type: "string" } },
    user: { key: "login", password: "pw", email: "mail" },
  });
  await t.admin("PUT", "/schemas/note", { fields: { text: { type: "string" } } });
  await t.request("POST", "/user", {
    body: [
      { username: "ann", password: "ann-password", email: "ann@example.com" },
      { username: "bob", password: "bob-password" },
    ],
  });
  await t.request("POST", "/member", { body: { login: "m1", pw: "member-pw", mail: "m1@example.com" } });
  await t.admin("POST", "/admins", { email: "viewer@example.com", password: "viewer password", role: "viewer" });
  viewer = (
    await t.request("POST", "/_admin/api/login", {
      body: { email: "viewer@example.com", password: "viewer password" },
      key: null,
      version: null,
    })
  ).body.token;
});
afterAll(() => t.close());

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
const tokenLogin = (username: string, password: string, version = 0) =>
  t.request("POST", "/user/accessToken", { version, ...form({ username, password, token_type: "mac" }) });
const signedMe = (c: MacCredentials, version = 0) =>
  t.request("GET", "/user/loggedInUser", { version, headers: { authorization: macAuth(c, "GET", "/user/loggedInUser") } });
const cookieLogin = (username: string, password: string) => t.request("GET", `/user/login?${new URLSearchParams({ username, password })}`);
const withCookie = (r: TestResponse) => ({ headers: { cookie: r.headers.get("set-cookie")!.split(";")[0]! } });

describe("set a user's password", () => {
  test("the new password works and the old one does not; every session of the user ends", async () => {
    const before = (await tokenLogin("ann", "ann-password")).body;
    expect((await signedMe(before)).status).toBe(200);
    const r = await t.admin("PUT", "/users/development/user/ann/password", { password: "set by an admin" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({});
    expect((await tokenLogin("ann", "ann-password")).status).toBe(401);
    expect((await tokenLogin("ann", "set by an admin")).status).toBe(200);
    // The session from before the new password is over (also the one this node had cached).
    expect((await signedMe(before)).status).toBe(401);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: before.refresh_token }))).status).toBe(401);
  });

  test("it drops a pending temporary password, as a reset does", async () => {
    expect((await t.request("POST", "/user/forgotPassword", { body: { username: "ann" } })).status).toBe(200);
    const temp = /is: ([A-Za-z0-9]+)/.exec((await t.admin("GET", "/outbox")).body[0].text)![1]!;
    await t.admin("PUT", "/users/development/user/ann/password", { password: "second admin set" });
    expect((await t.request("POST", "/user/accessToken", form({ username: "ann", password: temp, new_password: "mine now" }))).status).toBe(
      401,
    );
    expect((await tokenLogin("ann", "second admin set")).status).toBe(200);
  });

  test("a user schema with other field names", async () => {
    expect((await t.admin("PUT", "/users/development/member/m1/password", { password: "member-new" })).status).toBe(200);
    expect((await t.request("POST", "/member/accessToken", form({ login: "m1", pw: "member-new", token_type: "mac" }))).status).toBe(200);
  });

  test("refusals: the schema's password rule, bad bodies, unknown users, schemas and environments", async () => {
    const bad: [unknown, string][] = [
      [{ password: "" }, "password must be a non-empty string of at most 1024 characters"],
      [{ password: "p".repeat(1025) }, "password must be a non-empty string of at most 1024 characters"],
      [{ password: 12345 }, "body.password: expected a string"],
      [{ password: null }, "body.password"],
      [{}, "body.password: required"],
      [{ password: "fine", username: "bob" }, "body.username: unknown member"],
      [["fine"], "body: expected a JSON object"],
    ];
    for (const [body, msg] of bad) {
      const r = await t.admin("PUT", "/users/development/user/bob/password", body);
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.error).toContain(msg);
    }
    const proto = await t.request("PUT", "/_admin/api/users/development/user/bob/password", {
      raw: '{"password": "fine", "__proto__": {"x": 1}}',
      key: null,
      version: null,
      headers: {
        authorization: `Bearer ${(await t.request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null })).body.token}`,
      },
    });
    expect(proto.status).toBe(400);
    expect((await tokenLogin("bob", "bob-password")).status).toBe(200);

    const missing: [string, string][] = [
      ["/users/development/user/ghost/password", 'user "ghost" does not exist'],
      ["/users/development/note/x/password", "note is not a user schema"],
      ["/users/development/nothing/x/password", "nothing is not a user schema"],
      ["/users/staging/user/ann/password", 'unknown environment "staging"'],
      ["/users/production/user/ann/password", "production has no deployed version yet"],
    ];
    for (const [path, msg] of missing) {
      const r = await t.admin("PUT", path, { password: "whatever" });
      expect([path, r.status]).toEqual([path, 404]);
      expect(r.body.error).toContain(msg);
    }
    expect(
      (
        await t.request("PUT", "/_admin/api/users/development/user/bob/password", {
          body: { password: "x" },
          key: null,
          version: null,
          headers: { authorization: `Bearer ${viewer}` },
        })
      ).status,
    ).toBe(403);
  });
});

describe("revoke a user's sessions", () => {
  test("every MAC token and cookie session ends; the answer counts them", async () => {
    await t.admin("DELETE", "/users/development/user/bob/sessions"); // bob's logins of the tests before
    const a = (await tokenLogin("bob", "bob-password")).body;
    const b = (await tokenLogin("bob", "bob-password")).body;
    const cookie = await cookieLogin("bob", "bob-password");
    expect(cookie.status).toBe(200);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(cookie))).status).toBe(200);
    expect((await signedMe(a)).status).toBe(200);
    const ann = (await tokenLogin("ann", "second admin set")).body;

    const r = await t.admin("DELETE", "/users/development/user/bob/sessions");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ revoked: 3 });
    expect((await signedMe(a)).status).toBe(401);
    expect((await signedMe(b)).status).toBe(401);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(cookie))).status).toBe(401);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: a.refresh_token }))).status).toBe(401);
    expect((await signedMe(ann)).status).toBe(200);

    expect((await t.admin("DELETE", "/users/development/user/bob/sessions")).body).toEqual({ revoked: 0 });
    const ghost = await t.admin("DELETE", "/users/development/user/ghost/sessions");
    expect(ghost.status).toBe(404);
    expect(ghost.body.error).toBe('user "ghost" does not exist');
  });
});

describe("social links", () => {
  const link = (username: string, provider: string, id: string, linked: number) =>
    t.burrow.envDbs.development.execute({
      sql: "INSERT INTO _burrow_social_links (user_schema, provider, provider_id, username, credentials, linked, used) VALUES ('user', ?, ?, ?, ?, ?, ?)",
      args: [provider, id, username, JSON.stringify({ token: "SECRET-TOKEN", secret: "SECRET-SECRET" }), linked, linked + 1000],
    });

  test("listed with provider, subject and times, never credentials; unlinked one by one", async () => {
    await link("ann", "social1", "fb-123", Date.UTC(2024, 0, 1));
    await link("ann", "oidc:apple", "apple-sub-9", Date.UTC(2024, 1, 1));
    await link("bob", "social2", "tw-1", Date.UTC(2024, 2, 1));
    const r = await t.admin("GET", "/users/development/user/ann/social");
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { provider: "oidc:apple", subject: "apple-sub-9", created: "2024-02-01T00:00:00.000Z", lastUsed: "2024-02-01T00:00:01.000Z" },
      { provider: "social1", subject: "fb-123", created: "2024-01-01T00:00:00.000Z", lastUsed: "2024-01-01T00:00:01.000Z" },
    ]);
    expect(r.text).not.toContain("SECRET");
    const viewed = await t.request("GET", "/_admin/api/users/development/user/ann/social", {
      key: null,
      version: null,
      headers: { authorization: `Bearer ${viewer}` },
    });
    expect(viewed.body).toEqual(r.body);

    expect(
      (
        await t.request("DELETE", "/_admin/api/users/development/user/ann/social/social1", {
          key: null,
          version: null,
          headers: { authorization: `Bearer ${viewer}` },
        })
      ).status,
    ).toBe(403);
    const gone = await t.admin("DELETE", "/users/development/user/ann/social/oidc%3Aapple");
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({});
    expect((await t.admin("GET", "/users/development/user/ann/social")).body.map((l: any) => l.provider)).toEqual(["social1"]);
    const again = await t.admin("DELETE", "/users/development/user/ann/social/oidc:apple");
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('user "ann" has no oidc:apple account linked');
    expect((await t.admin("GET", "/users/development/user/bob/social")).body).toHaveLength(1);

    expect((await t.admin("GET", "/users/development/user/m1/social")).status).toBe(404); // a user of member, not of user
    expect((await t.admin("GET", "/users/development/member/m1/social")).body).toEqual([]);
    expect((await t.admin("GET", "/users/development/user/ghost/social")).status).toBe(404);
    expect((await t.admin("DELETE", "/users/development/user/ghost/social/social1")).status).toBe(404);
  });
});

describe("production", () => {
  test("uses the latest deployed version's schemas", async () => {
    expect((await t.admin("POST", "/deploy", {})).status).toBe(200);
    expect((await t.request("POST", "/user", { version: 1, body: { username: "pat", password: "pat-password" } })).status).toBe(201);
    const session = (await tokenLogin("pat", "pat-password", 1)).body;
    expect((await t.admin("PUT", "/users/production/user/pat/password", { password: "pat-new" })).status).toBe(200);
    expect((await signedMe(session, 1)).status).toBe(401);
    expect((await tokenLogin("pat", "pat-new", 1)).status).toBe(200);
    expect((await tokenLogin("pat", "pat-new", 1)).status).toBe(200);
    expect((await t.admin("DELETE", "/users/production/user/pat/sessions")).body).toEqual({ revoked: 2 });
    // Development's users are not production's.
    expect((await t.admin("PUT", "/users/production/user/ann/password", { password: "x" })).status).toBe(404);
    expect((await t.admin("PUT", "/users/development/user/pat/password", { password: "x" })).status).toBe(404);
  });
});
