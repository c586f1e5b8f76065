// Privacy defaults: a field declared "visibility": "owner" (the built-in user schema's email is one) is answered
// only to the object's owner (a user object's owner is that user), the private key, admins and custom code, and no
// one else may filter or sort on it; a user's push tokens are read only by that user or the private key.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
type Creds = { access_token: string; mac_key: string };
const creds: Record<string, Creds> = {};
const as = (who: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, { body, headers: { ...headers, authorization: macAuth(creds[who]!, method, path) } });
const app = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, {
    body,
    key: null,
    headers: { ...headers, authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
  });
const anon = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, { body, headers });

beforeAll(async () => {
  t = await makeTestApp();
  for (const u of ["ann", "bob"]) {
    const signup = await t.request("POST", "/user", { body: { username: u, password: `${u}-password`, email: `${u}@example.com` } });
    expect(signup.status).toBe(201);
    // The sign-up's answer shows what the new user wrote.
    expect(signup.body.email).toBe(`${u}@example.com`);
    creds[u] = (await t.request("POST", "/user/accessToken", { body: { username: u, password: `${u}-password` } })).body;
  }
  await t.admin("PUT", "/schemas/post", { fields: { title: { type: "string" }, author: { type: "relationship", schema: "user" } } });
  await t.admin("PUT", "/schemas/card", {
    fields: { name: { type: "string" }, phone: { type: "string", visibility: "owner" }, photo: { type: "binary" } },
    permissions: { create: "logged_in", read: "open", update: "open", delete: "owner" },
  });
  await app("POST", "/post", [
    { post_id: "p1", title: "by ann", author: "ann" },
    { post_id: "p2", title: "by bob", author: "bob" },
  ]);
});
afterAll(() => t.close());

describe("the user schema's email", () => {
  test("is declared owner-visible in a fresh data directory", async () => {
    expect((await t.admin("GET", "/schemas/user")).body.fields.email).toEqual({ type: "string", visibility: "owner" });
  });

  test("anonymous callers never see it: by key, in lists, selected, expanded", async () => {
    const one = await anon("GET", "/user/ann");
    expect(one.body).toMatchObject({ username: "ann" });
    expect(one.text).not.toContain("example.com");
    expect((await anon("GET", "/user")).text).not.toContain("example.com");
    expect((await anon("GET", "/user/ann", undefined, { "x-service-select": "username,email" })).body).toEqual({ username: "ann" });
    const posts = await anon("GET", "/post?_expand=1");
    expect(posts.body.map((p: { author: { username: string } }) => p.author.username).sort()).toEqual(["ann", "bob"]);
    expect(posts.text).not.toContain("example.com");
  });

  test("another user never sees it; the user itself does, also in lists and expansions", async () => {
    expect((await as("bob", "GET", "/user/ann")).body.email).toBeUndefined();
    expect((await as("bob", "GET", "/user/bob")).body.email).toBe("bob@example.com");
    const list = (await as("bob", "GET", "/user")).body as { username: string; email?: string }[];
    expect(Object.fromEntries(list.map((u) => [u.username, u.email ?? null]))).toEqual({ ann: null, bob: "bob@example.com" });
    const posts = (await as("ann", "GET", "/post?_expand=1")).body as { post_id: string; author: { email?: string } }[];
    expect(Object.fromEntries(posts.map((p) => [p.post_id, p.author.email ?? null]))).toEqual({ p1: "ann@example.com", p2: null });
    expect((await as("ann", "GET", "/user/loggedInUser")).body.email).toBe("ann@example.com");
    expect(
      (await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "ann-password" } })).body.service.user.email,
    ).toBe("ann@example.com");
  });

  test("the private key, admins and custom code see it", async () => {
    expect((await app("GET", "/user/ann")).body.email).toBe("ann@example.com");
    expect((await t.admin("GET", "/data/development/user/ann")).body.email).toBe("ann@example.com");
    expect(
      (
        await upload(
          t,
          `export const methods = [{ name: "email_of", params: ["u"], async execute(r, s) { return { body: await s.data.read("user", r.params.u) }; } }];`,
        )
      ).status,
    ).toBe(200);
    expect((await anon("GET", "/email_of?u=bob")).body.email).toBe("bob@example.com");
  });

  test("nobody but the private key (and the server) may filter or sort on it", async () => {
    const refused = [
      () => anon("GET", "/user?email=ann@example.com"),
      () => as("ann", "GET", "/user?email=ann@example.com"),
      () => anon("GET", "/user?email[in]=ann@example.com,bob@example.com"),
      () => anon("GET", "/user?[or1].username=zed&[or1].email[gt]=a"),
      () => anon("GET", "/user", undefined, { "x-service-orderby": "email:asc" }),
      () => anon("DELETE", "/user?email=ann@example.com"),
      () => as("ann", "GET", "/post?author.email=ann@example.com"),
    ];
    for (const r of refused) {
      const res = await r();
      expect(res.status).toBe(400);
      expect(res.body.error).toContain("email");
    }
    expect((await anon("GET", "/user?email=ann@example.com")).body.error).toBe(
      '"email" of schema user is visible to its owner only; it cannot be used in a query',
    );
    expect((await app("GET", "/user?email=ann@example.com")).body.map((u: { username: string }) => u.username)).toEqual(["ann"]);
    expect(
      (await app("GET", "/user", undefined, { "x-service-orderby": "email:desc" })).body.map((u: { username: string }) => u.username),
    ).toEqual(["bob", "ann"]);
  });
});

describe("a declared owner-only field", () => {
  test("the creator's answer shows it, other readers' and updaters' answers leave it out, the owner sees it", async () => {
    const made = await as("ann", "POST", "/card", { card_id: "c1", name: "Ann", phone: "+1 555 0100" });
    expect(made.status).toBe(201);
    expect(made.body.phone).toBe("+1 555 0100");
    expect((await anon("GET", "/card/c1")).body).toMatchObject({ name: "Ann" });
    expect((await anon("GET", "/card/c1")).body.phone).toBeUndefined();
    expect((await as("bob", "GET", "/card/c1")).body.phone).toBeUndefined();
    // Update is open: an updater who is not the owner is not answered with the hidden field either.
    const updated = await anon("PUT", "/card/c1", { name: "Ann B." });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "Ann B." });
    expect(updated.body.phone).toBeUndefined();
    expect((await as("ann", "GET", "/card/c1")).body.phone).toBe("+1 555 0100");
    expect((await as("bob", "GET", "/card?phone=%2B1%20555%200100")).status).toBe(400);
  });

  test("definitions: owner or public; never on the key or a password", async () => {
    const put = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      t.admin("PUT", "/schemas/vis", { fields, ...extra });
    expect((await put({ a: { type: "string", visibility: "secret" } })).status).toBe(400);
    expect((await put({ vis_id: { type: "string", visibility: "owner" } })).status).toBe(400);
    expect(
      (
        await t.admin("PUT", "/schemas/visusers", {
          fields: { pw: { type: "password", visibility: "owner" } },
          user: { key: "login", password: "pw" },
        })
      ).status,
    ).toBe(400);
    const ok = await put({ a: { type: "string", visibility: "public" }, b: { type: "integer", visibility: "owner" } });
    expect(ok.status).toBe(201);
    expect(ok.body.fields).toEqual({ a: { type: "string" }, b: { type: "integer", visibility: "owner" } });
  });
});

describe("push tokens are their user's", () => {
  beforeAll(async () => {
    for (const u of ["ann", "bob"])
      expect((await t.request("POST", `/_push/tokens/android/tok-${u}`, { body: { user: u } })).status).toBe(200);
  });

  test("GET /_push/tokens?user=U: only U's own signature or session, or the private key", async () => {
    const path = "/_push/tokens?user=ann";
    expect((await anon("GET", path)).status).toBe(401);
    expect((await as("bob", "GET", path)).status).toBe(401);
    expect((await as("bob", "GET", "/_push/tokens?user=bob&user=ann")).status).toBe(401);
    expect((await as("ann", "GET", path)).body).toEqual({ ann: [{ type: "androidgcm", token: "tok-ann" }] });
    const cookie = (await t.request("GET", "/user/login?username=ann&password=ann-password")).headers.get("set-cookie")!.split(";")[0]!;
    expect((await anon("GET", path, undefined, { cookie })).status).toBe(200);
    expect((await app("GET", "/_push/tokens?user=ann&user=bob")).body).toEqual({
      ann: [{ type: "androidgcm", token: "tok-ann" }],
      bob: [{ type: "androidgcm", token: "tok-bob" }],
    });
  });

  test("the legacy get_tokens_for_users_universal alike", async () => {
    const path = "/_push/get_tokens_for_users_universal?userIds=ann";
    expect((await anon("GET", path)).status).toBe(401);
    expect((await as("bob", "GET", path)).status).toBe(401);
    expect((await as("ann", "GET", path)).body.tokens.ann).toHaveLength(1);
  });
});
