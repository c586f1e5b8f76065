// The TOTP second factor over HTTP: enrolment and confirmation (recovery codes), a password login that answers
// mfa_required with an mfa_token, grant_type=mfa with a TOTP code or a recovery code (each good once), wrong codes
// on the failed-login budget, expired, reused and foreign mfa_tokens, turning it off with a code, the admin's
// view and reset, the legacy cookie login, a deleted user's factor going with it, and two nodes on one store.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth, type MacCredentials } from "../helpers/sign.ts";

let t: TestApp;

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
const passwordLogin = (username: string, password = `${username}-password`, schema = "user") =>
  t.request(
    "POST",
    `/${schema}/accessToken`,
    form(schema === "user" ? { grant_type: "password", username, password, token_type: "mac" } : { login: username, pw: password }),
  );
const mfaLogin = (mfa_token: string, code: string, extra: Record<string, string> = {}, schema = "user") =>
  t.request("POST", `/${schema}/accessToken`, form({ grant_type: "mfa", mfa_token, code, ...extra }));
const as = (c: MacCredentials, method: string, path: string, body?: unknown) =>
  t.request(method, path, { body, headers: { authorization: macAuth(c, method, path) } });

/** The code of a secret `steps` steps from now (0: the current one), as an authenticator app shows it. */
const codeOf = (secret: string, steps = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + steps * 30_000 });
/** A 6-digit code that is none of the secret's codes around now. */
const wrongCode = (secret: string) => {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => codeOf(secret, d)));
  let n = 123456;
  while (near.has(String(n))) n++;
  return String(n);
};

/** A new user, signed in with a MAC token. */
async function newUser(username: string): Promise<MacCredentials> {
  expect((await t.request("POST", "/user", { body: { username, password: `${username}-password` } })).status).toBe(201);
  const r = await passwordLogin(username);
  expect(r.status).toBe(200);
  return r.body;
}

/** A new user with TOTP on, its secret confirmed with the current step's code (so that step is used). */
async function withTotp(username: string) {
  const creds = await newUser(username);
  const enrol = await as(creds, "POST", "/user/mfa/totp");
  expect(enrol.status).toBe(200);
  const secret = enrol.body.secret as string;
  const confirm = await as(creds, "POST", "/user/mfa/totp/confirm", { code: codeOf(secret) });
  expect(confirm.status).toBe(200);
  return { creds, secret, recovery: confirm.body.recovery_codes as string[] };
}

/** A password login of a user with TOTP on: its mfa_token. */
async function challenge(username: string): Promise<string> {
  const r = await passwordLogin(username);
  expect(r.status).toBe(401);
  expect(r.body.error).toBe("mfa_required");
  expect(r.body.mfa_token).toBeString();
  return r.body.mfa_token;
}

const count = async (sql: string, ...args: string[]) => Number((await t.burrow.envDbs.development.execute({ sql, args })).rows[0]!.n);

beforeAll(async () => {
  t = await makeTestApp();
  expect((await t.admin("PUT", "/settings/development", { app: { name: "Test App" } })).status).toBe(200);
  await t.admin("PUT", "/schemas/member", { fields: { pw: { type: "password" } }, user: { key: "login", password: "pw" } });
  await t.admin("PUT", "/schemas/note", { fields: { text: { type: "string" } } });
});
afterAll(() => t.close());

describe("enrolment", () => {
  test("a secret and its otpauth URL; pending until a right code confirms it; ten recovery codes", async () => {
    const ann = await newUser("ann");
    expect((await as(ann, "GET", "/user/mfa")).body).toEqual({ totp: "off", recovery_codes_left: 0 });
    const first = await as(ann, "POST", "/user/mfa/totp");
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(first.body.otpauth_url).toStartWith("otpauth://totp/Test%20App:ann?");
    expect(new URL(first.body.otpauth_url).searchParams.get("secret")).toBe(first.body.secret);
    expect(new URL(first.body.otpauth_url).searchParams.get("issuer")).toBe("Test App");
    expect((await as(ann, "GET", "/user/mfa")).body).toEqual({ totp: "pending", recovery_codes_left: 0 });

    // A new POST replaces the pending secret: the first one's codes no longer confirm.
    const second = await as(ann, "POST", "/user/mfa/totp");
    expect(second.body.secret).not.toBe(first.body.secret);
    const stale = await as(ann, "POST", "/user/mfa/totp/confirm", { code: codeOf(first.body.secret) });
    expect(stale.status).toBe(401);
    expect(stale.body.error).toBe("the code is wrong");
    // Pending, a password login needs no second factor.
    expect((await passwordLogin("ann")).status).toBe(200);

    const ok = await as(ann, "POST", "/user/mfa/totp/confirm", { code: codeOf(second.body.secret) });
    expect(ok.status).toBe(200);
    expect(ok.body.recovery_codes).toHaveLength(10);
    for (const c of ok.body.recovery_codes) expect(c).toMatch(/^[2-9A-HJ-NP-Z]{10}$/);
    expect(new Set(ok.body.recovery_codes).size).toBe(10);
    expect((await as(ann, "GET", "/user/mfa")).body).toEqual({ totp: "on", recovery_codes_left: 10 });
    // Stored hashed: neither a recovery code nor its text appears in the table.
    const stored = (await t.burrow.envDbs.development.execute("SELECT recovery FROM _burrow_mfa WHERE username = 'ann'")).rows[0]!;
    for (const c of ok.body.recovery_codes) expect(String(stored.recovery)).not.toContain(c);

    // On: a new enrolment is a conflict, and so is a second confirmation.
    expect((await as(ann, "POST", "/user/mfa/totp")).status).toBe(409);
    expect((await as(ann, "POST", "/user/mfa/totp/confirm", { code: codeOf(second.body.secret, 1) })).status).toBe(409);
  });

  test("signed by the user of that schema only; bad bodies are 400", async () => {
    expect((await t.request("POST", "/user/mfa/totp")).status).toBe(401);
    expect((await t.request("GET", "/user/mfa")).status).toBe(401);
    expect((await t.request("POST", "/user/mfa/totp/confirm", { body: { code: "123456" } })).status).toBe(401);
    const bo = await newUser("bo");
    expect((await as(bo, "POST", "/user/mfa/totp/confirm", { code: "123456" })).status).toBe(409);
    expect((await as(bo, "POST", "/user/mfa/totp")).status).toBe(200);
    expect((await as(bo, "POST", "/user/mfa/totp/confirm", {})).status).toBe(400);
    expect((await as(bo, "POST", "/user/mfa/totp/confirm", { code: 123456 })).status).toBe(400);
    expect((await as(bo, "POST", "/user/mfa/totp/confirm", { code: "x".repeat(40) })).status).toBe(400);
    // Another user schema's paths refuse a user's token.
    expect((await as(bo, "GET", "/member/mfa")).status).toBe(401);
  });

  test("a session cookie signs too", async () => {
    expect((await t.request("POST", "/user", { body: { username: "cookie", password: "cookie-password" } })).status).toBe(201);
    const login = await t.request("GET", `/user/login?${new URLSearchParams({ username: "cookie", password: "cookie-password" })}`);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const r = await t.request("POST", "/user/mfa/totp", { headers: { cookie } });
    expect(r.status).toBe(200);
    expect((await t.request("GET", "/user/mfa", { headers: { cookie } })).body.totp).toBe("pending");
  });

  test("on a schema without a user block the paths keep their datastore meaning", async () => {
    const app = await t.request("POST", "/note", { body: { note_id: "mfa", text: "a note keyed mfa" } });
    expect(app.status).toBe(201);
    expect((await t.request("GET", "/note/mfa")).body.text).toBe("a note keyed mfa");
    expect((await t.request("POST", "/note/mfa/totp/confirm", { body: { code: "123456" } })).status).toBe(404);
    expect((await t.request("DELETE", "/note/mfa/totp", { body: { code: "123456" } })).status).toBe(404);
  });
});

describe("logging in with a second factor", () => {
  test("mfa_required, then a TOTP code: MAC tokens; the same code is not good twice", async () => {
    const { secret } = await withTotp("cat");
    const token = await challenge("cat");
    const r0 = await passwordLogin("cat");
    expect(r0.body.error_description).toContain("grant_type=mfa");
    // The confirmation used the current step's code: it is not good for a login.
    const replayed = await mfaLogin(token, codeOf(secret));
    expect(replayed.status).toBe(401);
    expect(replayed.body).toMatchObject({ error: "invalid_grant", error_description: "code already used" });

    const code = codeOf(secret, 1);
    const ok = await mfaLogin(token, code);
    expect(ok.status).toBe(200);
    expect(ok.body.token_type).toBe("mac");
    expect(ok.body.mac_key).toBeString();
    expect(ok.body.service.user.username).toBe("cat");
    expect(ok.body.service.user.password).toBeUndefined();
    expect((await as(ok.body, "GET", "/user/loggedInUser")).body.username).toBe("cat");

    // The token was used; a new login cannot take the same code again.
    expect((await mfaLogin(token, code)).body.error_description).toContain("mfa_token");
    const again = await mfaLogin(await challenge("cat"), code);
    expect(again.status).toBe(401);
    expect(again.body.error_description).toBe("code already used");
  });

  test("a recovery code signs in once, in place of a code; bearer tokens on request", async () => {
    const { recovery } = await withTotp("dan");
    const ok = await mfaLogin(await challenge("dan"), recovery[3]!.toLowerCase(), { token_type: "bearer" });
    expect(ok.status).toBe(200);
    expect(ok.body.token_type).toBe("bearer");
    expect(ok.body.mac_key).toBeUndefined();
    const reused = await mfaLogin(await challenge("dan"), recovery[3]!);
    expect(reused.status).toBe(401);
    expect(reused.body.error_description).toBe("code already used");
    // Dashes and spaces as a user may type them.
    const spaced = `${recovery[4]!.slice(0, 5)}-${recovery[4]!.slice(5)}`;
    expect((await mfaLogin(await challenge("dan"), spaced)).status).toBe(200);
    expect((await passwordLogin("dan")).status).toBe(401);
    const token = await challenge("dan");
    const creds = (await mfaLogin(token, recovery[5]!)).body as MacCredentials;
    expect((await as(creds, "GET", "/user/mfa")).body).toEqual({ totp: "on", recovery_codes_left: 7 });
  });

  test("wrong codes count against the failed-login budget: 429 past it, for the password too", async () => {
    const { secret } = await withTotp("eli");
    const token = await challenge("eli");
    const wrong = wrongCode(secret);
    for (let i = 0; i < 10; i++) {
      const r = await mfaLogin(token, i % 2 ? wrong : "WRONGCODE2");
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: "invalid_grant", error_description: "the code is wrong" });
    }
    const limited = await mfaLogin(token, codeOf(secret, 1));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await passwordLogin("eli")).status).toBe(429);
    // The budget is the account's: another user is not affected.
    await withTotp("fox");
    expect((await challenge("fox")).length).toBeGreaterThan(20);
  });

  test("an expired, unknown or foreign mfa_token is refused; malformed requests are 400", async () => {
    const { secret } = await withTotp("gil");
    const token = await challenge("gil");
    await t.burrow.envDbs.development.execute("UPDATE _burrow_mfa_tokens SET expires = 0 WHERE username = 'gil'");
    const expired = await mfaLogin(token, codeOf(secret, 1));
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ error: "invalid_grant" });
    expect(expired.body.error_description).toContain("expired");
    expect((await mfaLogin("no-such-token", codeOf(secret, 1))).status).toBe(401);

    // A token of the user schema "user" does not sign in to "member".
    expect((await t.request("POST", "/member", { body: { login: "gil", pw: "gil-password" } })).status).toBe(201);
    const foreign = await mfaLogin(await challenge("gil"), codeOf(secret, 1), {}, "member");
    expect(foreign.status).toBe(401);
    expect(foreign.body.error_description).toContain("does not belong to member");

    expect((await t.request("POST", "/user/accessToken", form({ grant_type: "mfa", code: "123456" }))).status).toBe(400);
    expect((await t.request("POST", "/user/accessToken", form({ grant_type: "mfa", mfa_token: token }))).status).toBe(400);
  });

  test("the legacy cookie login answers mfa_required too, with no cookie", async () => {
    await withTotp("hal");
    const r = await t.request("GET", `/user/login?${new URLSearchParams({ username: "hal", password: "hal-password" })}`);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("mfa_required");
    expect(r.body.mfa_token).toBeString();
    expect(r.headers.get("set-cookie")).toBeNull();
  });

  test("a wrong password still says only that", async () => {
    await withTotp("ida");
    const r = await passwordLogin("ida", "not-the-password");
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("access_denied");
    expect(r.body.mfa_token).toBeUndefined();
  });
});

describe("turning it off", () => {
  test("with a current code; then a password is enough again", async () => {
    const { creds, secret } = await withTotp("jo");
    expect((await as(creds, "DELETE", "/user/mfa/totp", { code: wrongCode(secret) })).status).toBe(401);
    expect((await as(creds, "DELETE", "/user/mfa/totp", {})).status).toBe(400);
    expect((await as(creds, "DELETE", "/user/mfa/totp", { code: codeOf(secret, 1) })).status).toBe(200);
    expect((await as(creds, "GET", "/user/mfa")).body).toEqual({ totp: "off", recovery_codes_left: 0 });
    expect((await passwordLogin("jo")).status).toBe(200);
    expect((await as(creds, "DELETE", "/user/mfa/totp", { code: codeOf(secret, 1) })).status).toBe(409);
    expect(await count("SELECT count(*) AS n FROM _burrow_mfa WHERE username = 'jo'")).toBe(0);
  });

  test("a pending enrolment is dropped without a code", async () => {
    const kay = await newUser("kay");
    expect((await as(kay, "POST", "/user/mfa/totp")).status).toBe(200);
    expect((await as(kay, "DELETE", "/user/mfa/totp")).status).toBe(200);
    expect((await as(kay, "GET", "/user/mfa")).body.totp).toBe("off");
  });
});

describe("the admin", () => {
  const viewer = async () =>
    (
      await t.request("POST", "/_admin/api/login", {
        body: { email: "viewer@example.com", password: "viewer password" },
        key: null,
        version: null,
      })
    ).body.token as string;

  test("sees whether TOTP is on and resets it (editors and owners); a viewer only sees", async () => {
    await withTotp("lee");
    expect((await t.admin("GET", "/users/development/user/lee/mfa")).body).toEqual({ totp: "on", recovery_codes_left: 10 });
    expect((await t.admin("GET", "/users/development/user/nobody/mfa")).status).toBe(404);
    await t.admin("POST", "/admins", { email: "viewer@example.com", password: "viewer password", role: "viewer" });
    const token = await viewer();
    const headers = { authorization: `Bearer ${token}` };
    const path = "/_admin/api/users/development/user/lee/mfa";
    expect((await t.request("GET", path, { key: null, version: null, headers })).status).toBe(200);
    expect((await t.request("DELETE", path, { key: null, version: null, headers })).status).toBe(403);

    const pending = await challenge("lee");
    expect((await t.admin("DELETE", "/users/development/user/lee/mfa")).status).toBe(200);
    expect((await t.admin("GET", "/users/development/user/lee/mfa")).body.totp).toBe("off");
    expect((await passwordLogin("lee")).status).toBe(200);
    // A login waiting for its second factor cannot complete any more.
    expect((await mfaLogin(pending, "ABCDEFGHJK")).status).toBe(401);
    expect((await t.admin("DELETE", "/users/development/user/nobody/mfa")).status).toBe(404);
    expect((await t.admin("DELETE", "/users/development/user/lee/mfa")).status).toBe(200);
  });
});

test("a deleted user's second factor and pending logins go with it", async () => {
  const { creds } = await withTotp("max");
  await challenge("max");
  expect(await count("SELECT count(*) AS n FROM _burrow_mfa_tokens WHERE username = 'max'")).toBe(1);
  expect((await as(creds, "DELETE", "/user/max")).status).toBe(200);
  expect(await count("SELECT count(*) AS n FROM _burrow_mfa WHERE username = 'max'")).toBe(0);
  expect(await count("SELECT count(*) AS n FROM _burrow_mfa_tokens WHERE username = 'max'")).toBe(0);
  // A newcomer under the same name signs in with a password alone.
  expect((await t.request("POST", "/user", { body: { username: "max", password: "max-password" } })).status).toBe(201);
  expect((await passwordLogin("max")).status).toBe(200);
});

test("two nodes on one store: a login started on one completes on the other, and a code used on one is used on both", async () => {
  const b = await makeTestApp({ dir: t.dir });
  try {
    const { secret } = await withTotp("ned");
    const code = codeOf(secret, 1);
    const onA = await challenge("ned");
    const done = await b.request("POST", "/user/accessToken", form({ grant_type: "mfa", mfa_token: onA, code }));
    expect(done.status).toBe(200);
    expect(done.body.service.user.username).toBe("ned");
    // The token was used on B; the code too, for A.
    expect((await mfaLogin(onA, code)).status).toBe(401);
    const again = await mfaLogin(await challenge("ned"), code);
    expect(again.body.error_description).toBe("code already used");
  } finally {
    await b.close();
  }
});
