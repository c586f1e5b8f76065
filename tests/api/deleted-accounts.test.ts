// A deleted account leaves nothing behind, whichever way it is deleted (the user itself, an admin, the private key,
// custom code, a delete by query, a cascade): its tokens, refresh tokens, cookie session, temporary password,
// social links, second factor (and logins waiting for it), passkeys and push tokens end in the delete's transaction, and a new account under the same username gets
// none of them, nor the objects, roles and relationship access the deleted one had. Also the other way round: a
// password change ends the user's other sessions, whoever makes it.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { KEYS, makeTestApp, type RequestOptions, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";
import { SoftAuthenticator } from "../helpers/soft-authenticator.ts";

let t: TestApp;
type Creds = { access_token: string; mac_key: string; refresh_token: string };

const form = (fields: Record<string, string>): RequestOptions => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
const login = async (username: string, password: string): Promise<Creds> => {
  const r = await t.request("POST", "/user/accessToken", form({ username, password, token_type: "mac" }));
  expect(r.status).toBe(200);
  return r.body;
};
const as = (c: Creds, method: string, path: string, body?: unknown) =>
  t.request(method, path, { body, headers: { authorization: macAuth(c, method, path) } });
const app = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, {
    body,
    key: null,
    headers: { ...headers, authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
  });
const count = async (sql: string, ...args: string[]) => Number((await t.burrow.envDbs.development.execute({ sql, args })).rows[0]!.n);

beforeAll(async () => {
  t = await makeTestApp();
  const user = (await t.admin("GET", "/schemas/user")).body;
  await t.admin("PUT", "/schemas/user", { ...user, user: { ...user.user, forgotPassword: true } });
  await t.admin("PUT", "/schemas/note", {
    fields: { text: { type: "string" } },
    permissions: { create: "logged_in", read: "owner", update: "owner", delete: "owner" },
  });
  await t.admin("PUT", "/schemas/team", {
    fields: {
      name: { type: "string" },
      members: { type: "relationship", schema: "user", many: true },
      lead: { type: "relationship", schema: "user" },
    },
    permissions: { create: "open", read: { relationship: "members" }, update: { relationship: "members" }, delete: "private_key" },
  });
  await t.admin("PUT", "/schemas/board", {
    fields: { title: { type: "string" } },
    permissions: { create: "private_key", read: { role: "editors" }, update: "private_key", delete: "private_key" },
  });
  // The cascade path: a schema relating to users whose pulled references delete them.
  await t.admin("PUT", "/schemas/club", { fields: { people: { type: "relationship", schema: "user", many: true } } });
  expect((await app("POST", "/board", { board_id: "b1", title: "editors only" })).status).toBe(201);
  expect((await app("POST", "/aclrole", { aclrole_id: "editors", users: [] })).status).toBe(201);
  const code = await upload(
    t,
    `export const methods = [{ name: "remove_user", params: ["id"], async execute(r, s) { return { body: { removed: await s.data.delete("user", r.params.id) } }; } }];`,
  );
  expect(code.status).toBe(200);
});
afterAll(() => t.close());

/** An account with everything an account can have, and what it owns and is granted. */
async function fullAccount(name: string) {
  const password = `${name}-password`;
  expect((await t.request("POST", "/user", { body: { username: name, password, email: `${name}@example.com` } })).status).toBe(201);
  const mac = await login(name, password);
  const cookie = (await t.request("GET", `/user/login?${new URLSearchParams({ username: name, password })}`)).headers
    .get("set-cookie")!
    .split(";")[0]!;
  expect((await t.request("POST", "/user/forgotPassword", { body: { username: name } })).status).toBe(200);
  const temp = /is: ([A-Za-z0-9]+)/.exec((await t.admin("GET", "/outbox")).body[0].text)![1]!;
  await t.burrow.envDbs.development.execute({
    sql: "INSERT INTO _burrow_social_links (user_schema, provider, provider_id, username, credentials, linked, used) VALUES ('user', 'social1', ?, ?, '{}', 0, 0)",
    args: [`fb-${name}`, name],
  });
  expect((await t.request("POST", `/_push/tokens/android/tok-${name}`, { body: { user: name } })).status).toBe(200);
  const note = (await as(mac, "POST", "/note", { text: `${name}'s secret` })).body.note_id as string;
  expect(
    (await app("POST", "/team", { team_id: `team-${name}`, name: "private team", members: [name, "someone-else"], lead: name })).status,
  ).toBe(201);
  expect((await app("PUT", "/aclrole/editors/users", [name])).status).toBe(200);
  expect((await as(mac, "GET", "/board/b1")).status).toBe(200);
  expect((await as(mac, "GET", `/team/team-${name}`)).status).toBe(200);
  expect((await t.request("GET", "/user/loggedInUser", { headers: { cookie } })).status).toBe(200);
  // A second factor, and a password login waiting for it.
  const secret = (await as(mac, "POST", "/user/mfa/totp")).body.secret as string;
  const code = TOTP.generate({ secret: Secret.fromBase32(secret) });
  expect((await as(mac, "POST", "/user/mfa/totp/confirm", { code })).status).toBe(200);
  expect((await t.request("POST", "/user/accessToken", form({ username: name, password }))).body.error).toBe("mfa_required");
  // A passkey, and a registration of another one under way.
  const passkey = await as(mac, "POST", "/user/passkeys/registerOptions");
  const response = await new SoftAuthenticator().create(passkey.body, "http://localhost");
  expect((await as(mac, "POST", "/user/passkeys/register", response)).status).toBe(201);
  expect((await as(mac, "POST", "/user/passkeys/registerOptions")).status).toBe(200);
  return { name, password, mac, cookie, temp, note };
}

type Account = Awaited<ReturnType<typeof fullAccount>>;

const DELETIONS: [string, (a: Account) => Promise<{ status: number }>][] = [
  ["the user itself (MAC-signed DELETE)", (a) => as(a.mac, "DELETE", `/user/${a.name}`)],
  ["the user itself (its session cookie)", (a) => t.request("DELETE", `/user/${a.name}`, { headers: { cookie: a.cookie } })],
  ["an admin (the console's data API)", (a) => t.admin("DELETE", `/data/development/user/${a.name}`)],
  ["the private key (OAuth 1.0 DELETE)", (a) => app("DELETE", `/user/${a.name}`)],
  ["custom code (data.delete)", (a) => t.request("GET", `/remove_user?id=${a.name}`)],
  ["a delete by query", (a) => app("DELETE", `/user?email=${encodeURIComponent(`${a.name}@example.com`)}`)],
  [
    "a cascade from a relationship",
    async (a) => {
      expect((await app("POST", "/club", { club_id: `club-${a.name}`, people: [a.name] })).status).toBe(201);
      return app("DELETE", `/club/club-${a.name}/people/${a.name}`, undefined, { "x-service-cascadedelete": "true" });
    },
  ],
];

describe("a deleted account leaves nothing behind", () => {
  for (const [i, [how, remove]] of DELETIONS.entries()) {
    test(`deleted by ${how}`, async () => {
      const a = await fullAccount(`gone${i}`);
      expect((await remove(a)).status).toBe(200);
      expect((await app("GET", `/user/${a.name}`)).status).toBe(404);

      // Every way in of the old account is closed at once (this node's session cache included).
      expect((await as(a.mac, "GET", "/user/loggedInUser")).status).toBe(401);
      expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: a.mac.refresh_token }))).status).toBe(401);
      expect((await t.request("GET", "/user/loggedInUser", { headers: { cookie: a.cookie } })).status).toBe(401);
      for (const table of [
        "_burrow_sessions",
        "_burrow_temp_passwords",
        "_burrow_social_links",
        "_burrow_mfa",
        "_burrow_mfa_tokens",
        "_burrow_passkeys",
        "_burrow_passkey_challenges",
      ])
        expect(await count(`SELECT count(*) AS n FROM ${table} WHERE username = ?`, a.name)).toBe(0);
      expect(await count("SELECT count(*) AS n FROM _burrow_push_tokens WHERE user = ?", a.name)).toBe(0);

      // Someone signs up under the same username: a new account, with nothing of the old one.
      expect((await t.request("POST", "/user", { body: { username: a.name, password: "the-newcomer" } })).status).toBe(201);
      expect((await t.request("POST", "/user/accessToken", form({ username: a.name, password: a.temp }))).status).toBe(401);
      expect(
        (await t.request("POST", "/user/accessToken", form({ username: a.name, password: a.temp, new_password: "taken over" }))).status,
      ).toBe(401);
      const newcomer = await login(a.name, "the-newcomer");
      expect((await as(newcomer, "GET", "/note")).body).toEqual([]);
      expect((await as(newcomer, "GET", `/note/${a.note}`)).status).toBe(404);
      expect((await as(newcomer, "PUT", `/note/${a.note}`, { text: "mine now" })).status).toBe(404);
      expect((await as(newcomer, "GET", "/board/b1")).status).toBe(401);
      expect((await as(newcomer, "GET", `/team/team-${a.name}`)).status).toBe(404);
      expect((await as(newcomer, "GET", `/_push/tokens?user=${a.name}`)).body).toEqual({ [a.name]: [] });
      const social = await t.admin("GET", `/users/development/user/${a.name}/social`);
      expect(social.body).toEqual([]);

      // Nothing acknowledged is lost: the old objects stay, without an owner, and the team without the old member.
      const note = await app("GET", `/note/${a.note}`);
      expect(note.body.text).toBe(`${a.name}'s secret`);
      expect(note.body.sm_owner).toBeUndefined();
      const team = (await app("GET", `/team/team-${a.name}`)).body;
      expect(team.members).toEqual(["someone-else"]);
      expect(team.lead).toBeUndefined();
      expect((await app("GET", "/aclrole/editors")).body.users ?? []).not.toContain(a.name);
    });
  }

  test("dropping a user schema ends its accounts' sessions and ownership too", async () => {
    await t.admin("PUT", "/schemas/member", { fields: { pw: { type: "password" } }, user: { key: "login", password: "pw" } });
    await t.admin("PUT", "/schemas/memo", {
      fields: { text: { type: "string" } },
      permissions: { create: "logged_in", read: "owner", update: "owner", delete: "owner" },
    });
    expect((await t.request("POST", "/member", { body: { login: "m1", pw: "m1-password" } })).status).toBe(201);
    const m1 = (await t.request("POST", "/member/accessToken", form({ login: "m1", pw: "m1-password", token_type: "mac" }))).body as Creds;
    const memo = (await as(m1, "POST", "/memo", { text: "m1's" })).body.memo_id as string;
    expect((await as(m1, "POST", "/member/mfa/totp")).status).toBe(200);
    const passkey = await as(m1, "POST", "/member/passkeys/registerOptions");
    const response = await new SoftAuthenticator().create(passkey.body, "http://localhost");
    expect((await as(m1, "POST", "/member/passkeys/register", response)).status).toBe(201);
    expect((await t.admin("DELETE", "/schemas/member")).status).toBe(200);
    await t.admin("PUT", "/schemas/member", { fields: { pw: { type: "password" } }, user: { key: "login", password: "pw" } });
    expect((await as(m1, "GET", "/member/loggedInUser")).status).toBe(401);
    expect(await count("SELECT count(*) AS n FROM _burrow_sessions WHERE user_schema = 'member'")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM _burrow_mfa WHERE user_schema = 'member'")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM _burrow_passkeys WHERE user_schema = 'member'")).toBe(0);
    expect((await t.request("POST", "/member", { body: { login: "m1", pw: "new-m1" } })).status).toBe(201);
    const newcomer = (await t.request("POST", "/member/accessToken", form({ login: "m1", pw: "new-m1", token_type: "mac" }))).body as Creds;
    expect((await as(newcomer, "GET", `/memo/${memo}`)).status).toBe(404);
  });
});

describe("a password change ends the other sessions", () => {
  async function twoSessions(name: string) {
    const password = `${name}-password`;
    expect((await t.request("POST", "/user", { body: { username: name, password, email: `${name}@example.com` } })).status).toBe(201);
    const phone = await login(name, password);
    const laptop = await login(name, password);
    const cookie = (await t.request("GET", `/user/login?${new URLSearchParams({ username: name, password })}`)).headers
      .get("set-cookie")!
      .split(";")[0]!;
    // Both sessions are in use (and so in this node's session cache) before the change.
    expect((await as(phone, "GET", "/user/loggedInUser")).status).toBe(200);
    expect((await as(laptop, "GET", "/user/loggedInUser")).status).toBe(200);
    return { name, password, phone, laptop, cookie };
  }
  const ended = async (s: Awaited<ReturnType<typeof twoSessions>>, kept: "laptop" | null) => {
    expect((await as(s.phone, "GET", "/user/loggedInUser")).status).toBe(401);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: s.phone.refresh_token }))).status).toBe(401);
    expect((await t.request("GET", "/user/loggedInUser", { headers: { cookie: s.cookie } })).status).toBe(401);
    expect((await as(s.laptop, "GET", "/user/loggedInUser")).status).toBe(kept === "laptop" ? 200 : 401);
  };

  test("resetPassword: every session but the caller's", async () => {
    const s = await twoSessions("reset1");
    const r = await as(s.laptop, "POST", "/user/resetPassword", { old: { password: s.password }, new: { password: "fresh-one" } });
    expect(r.status).toBe(200);
    await ended(s, "laptop");
  });

  test("completing a temporary password: every session", async () => {
    const s = await twoSessions("temp1");
    await t.request("POST", "/user/forgotPassword", { body: { username: s.name } });
    const temp = /is: ([A-Za-z0-9]+)/.exec((await t.admin("GET", "/outbox")).body[0].text)![1]!;
    expect(
      (await t.request("POST", "/user/accessToken", form({ username: s.name, password: temp, new_password: "after-reset" }))).status,
    ).toBe(200);
    await ended(s, null);
  });

  test("an admin setting it: every session", async () => {
    const s = await twoSessions("admin1");
    expect((await t.admin("PUT", `/users/development/user/${s.name}/password`, { password: "admin-set-it" })).status).toBe(200);
    await ended(s, null);
  });

  test("the private key setting the password field: every session, and a pending temporary password", async () => {
    const s = await twoSessions("app1");
    await t.request("POST", "/user/forgotPassword", { body: { username: s.name } });
    const temp = /is: ([A-Za-z0-9]+)/.exec((await t.admin("GET", "/outbox")).body[0].text)![1]!;
    expect((await app("PUT", `/user/${s.name}`, { password: "app-set-it" })).status).toBe(200);
    await ended(s, null);
    expect((await t.request("POST", "/user/accessToken", form({ username: s.name, password: temp, new_password: "x" }))).status).toBe(401);
    expect((await login(s.name, "app-set-it")).access_token).toBeString();
  });

  test("a PUT that changes other fields leaves the sessions alone", async () => {
    const s = await twoSessions("app2");
    expect((await app("PUT", `/user/${s.name}`, { email: "new@example.com" })).status).toBe(200);
    expect((await as(s.phone, "GET", "/user/loggedInUser")).status).toBe(200);
    expect((await as(s.laptop, "GET", "/user/loggedInUser")).status).toBe(200);
  });
});
