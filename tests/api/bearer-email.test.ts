// Accounts for new apps, over HTTP with the mails read from the outbox: bearer tokens (the token response, every
// kind of call, https or loopback only, refresh rotation and reuse detection, never a MAC id or cookie), email
// verification (a code and a link; the same answer for unknown users; a new address is unverified; logins refused
// while unverified when required) and sign-in codes (single use, ten minutes, five wrong tries void a code).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth } from "../helpers/sign.ts";

let t: TestApp;
/** Which peer the next request comes from (loopback unless a test says otherwise). */
let peer = "127.0.0.1";

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

async function outboxFor(to: string, count = 1): Promise<{ subject: string; text: string }[]> {
  for (let i = 0; i < 100; i++) {
    const mails = ((await t.admin("GET", "/outbox")).body as { to: string; subject: string; text: string }[]).filter((m) => m.to === to);
    if (mails.length >= count) return mails;
    await Bun.sleep(20);
  }
  throw new Error(`no mail to ${to}`);
}
const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)![1]!;

beforeAll(async () => {
  t = await makeTestApp({ flags: { "--trusted-proxy": "10.0.0.0/8" }, peer: () => peer });
  const open = { create: "open", read: "open", update: "owner", delete: "owner" };
  const fields = { email: { type: "string" }, password: { type: "password" } };
  const user = { key: "username", password: "password", email: "email" };
  expect((await t.admin("PUT", "/schemas/member", { fields, permissions: open, user: { ...user, verifyEmail: true } })).status).toBe(201);
  expect(
    (
      await t.admin("PUT", "/schemas/strict", {
        fields,
        permissions: open,
        user: { ...user, verifyEmail: true, requireVerifiedEmail: true },
      })
    ).status,
  ).toBe(201);
  for (const [schema, name] of [
    ["user", "bea"],
    ["member", "mia"],
    ["strict", "stu"],
  ])
    expect(
      (await t.request("POST", `/${schema}`, { body: { username: name, password: `${name}-password`, email: `${name}@example.com` } }))
        .status,
    ).toBe(201);
});
afterAll(() => t.close());

describe("bearer tokens", () => {
  const login = (params: Record<string, string> = {}) =>
    t.request(
      "POST",
      "/user/accessToken",
      form({ grant_type: "password", username: "bea", password: "bea-password", token_type: "bearer", ...params }),
    );

  test("the token response has token_type bearer and no MAC key; the token authenticates every kind of call", async () => {
    const r = await login();
    expect(r.status).toBe(200);
    expect(r.body.token_type).toBe("bearer");
    expect(r.body.mac_key).toBeUndefined();
    expect(r.body.mac_algorithm).toBeUndefined();
    expect(r.body.service.user.username).toBe("bea");
    const bearer = { authorization: `Bearer ${r.body.access_token}` };
    expect((await t.request("GET", "/user/loggedInUser", { headers: bearer })).body.username).toBe("bea");
    // Data as that user: the owner of what it creates.
    await t.admin("PUT", "/schemas/note", {
      fields: { text: { type: "string" } },
      permissions: { create: "logged_in", read: "owner", update: "owner", delete: "owner" },
    });
    const note = await t.request("POST", "/note", { body: { text: "mine" }, headers: bearer });
    expect([note.status, note.body.sm_owner]).toEqual([201, "user/bea"]);
    expect((await t.request("GET", `/note/${note.body.note_id}`)).status).toBe(401);
    expect((await t.request("GET", `/note/${note.body.note_id}`, { headers: bearer })).status).toBe(200);
    // Live streams act as the caller too.
    const stream = await t.request("POST", "/_live/streams", { headers: bearer });
    expect(stream.status).toBe(201);
  });

  test("only over https (through a trusted proxy) or from loopback, unless auth.bearerOverHttp", async () => {
    const token = (await login()).body.access_token;
    const call = (headers: Record<string, string> = {}) =>
      t.request("GET", "/user/loggedInUser", { headers: { authorization: `Bearer ${token}`, ...headers } });
    peer = "192.0.2.7";
    try {
      const refused = await call();
      expect(refused.status).toBe(401);
      expect(refused.body.error).toContain("https");
      peer = "10.0.0.5";
      expect((await call({ "x-forwarded-proto": "https", "x-forwarded-for": "192.0.2.7" })).status).toBe(200);
      expect((await call({ "x-forwarded-proto": "http", "x-forwarded-for": "192.0.2.7" })).status).toBe(401);
      peer = "192.0.2.7";
      expect((await t.admin("PUT", "/settings/development", { auth: { bearerOverHttp: true } })).status).toBe(200);
      expect((await call()).status).toBe(200);
      expect((await t.admin("PUT", "/settings/development", { auth: { bearerOverHttp: null } })).status).toBe(200);
    } finally {
      peer = "127.0.0.1";
    }
  });

  test("refresh rotates (staying bearer), a reused refresh token revokes the login; MAC ids and cookies are never bearer tokens", async () => {
    const first = (await login()).body;
    const next = await t.request("POST", "/user/refreshToken", form({ refresh_token: first.refresh_token }));
    expect([next.status, next.body.token_type, next.body.mac_key]).toEqual([200, "bearer", undefined]);
    expect((await t.request("GET", "/user/loggedInUser", { headers: { authorization: `Bearer ${first.access_token}` } })).status).toBe(401);
    const again = await t.request("POST", "/user/refreshToken", form({ refresh_token: first.refresh_token }));
    expect([again.status, again.body.error]).toEqual([401, "invalid_grant"]);
    expect((await t.request("GET", "/user/loggedInUser", { headers: { authorization: `Bearer ${next.body.access_token}` } })).status).toBe(
      401,
    );
    // A MAC login's access token travels in clear in every MAC header: it is not a bearer token.
    const mac = (await login({ token_type: "mac" })).body;
    expect(mac.token_type).toBe("mac");
    expect((await t.request("GET", "/user/loggedInUser", { headers: { authorization: `Bearer ${mac.access_token}` } })).status).toBe(401);
    // And a bearer token is no MAC id: a MAC signed with it (keyless) is refused.
    const b = (await login()).body;
    const forged = macAuth({ access_token: b.access_token, mac_key: "-" }, "GET", "/user/loggedInUser");
    expect((await t.request("GET", "/user/loggedInUser", { headers: { authorization: forged } })).status).toBe(401);
    // A MAC session can be refreshed into a bearer one.
    const switched = await t.request("POST", "/user/refreshToken", form({ refresh_token: mac.refresh_token, token_type: "bearer" }));
    expect([switched.status, switched.body.token_type]).toEqual([200, "bearer"]);
    expect(
      (await t.request("POST", "/user/accessToken", form({ username: "bea", password: "bea-password", token_type: "jwt" }))).status,
    ).toBe(400);
    expect((await t.request("GET", "/user/loggedInUser", { headers: { authorization: "Bearer" } })).status).toBe(401);
  });
});

describe("email verification", () => {
  test("a code from the mail verifies the address; the same answer for unknown users; a new address is unverified", async () => {
    expect((await t.request("GET", "/member/mia")).body.emailverified).toBeUndefined();
    const ask = await t.request("POST", "/member/requestVerification", { body: { username: "mia" } });
    expect([ask.status, ask.body]).toEqual([200, {}]);
    const nobody = await t.request("POST", "/member/requestVerification", { body: { username: "nobody" } });
    expect([nobody.status, nobody.body]).toEqual([200, {}]);
    const [mail] = await outboxFor("mia@example.com");
    expect(mail!.subject).toContain("confirm your email address");
    const code = codeIn(mail!.text);
    const wrong = await t.request("POST", "/member/verifyEmail", {
      body: { username: "mia", code: code === "000000" ? "111111" : "000000" },
    });
    expect([wrong.status, wrong.body.error]).toEqual([401, "the code is wrong"]);
    const ok = await t.request("POST", "/member/verifyEmail", { body: { username: "mia", code } });
    expect([ok.status, ok.body.emailverified]).toEqual([200, true]);
    const reused = await t.request("POST", "/member/verifyEmail", { body: { username: "mia", code } });
    expect(reused.status).toBe(401);
    // Clients cannot set the flag; a new address clears it, the same address keeps it.
    const creds = (await t.request("POST", "/member/accessToken", form({ username: "mia", password: "mia-password" }))).body;
    const put = (body: unknown) =>
      t.request("PUT", "/member/mia", { body, headers: { authorization: macAuth(creds, "PUT", "/member/mia") } });
    expect((await put({ email: "mia@example.com" })).body.emailverified).toBe(true);
    expect((await put({ email: "mia2@example.com", emailverified: true })).body.emailverified).toBeUndefined();
    expect((await t.request("POST", "/member/requestVerification", { body: {} })).status).toBe(400);
    expect((await t.request("POST", "/user/requestVerification", { body: { username: "bea" } })).status).toBe(400);
  });

  test("the mailed link verifies the address in a browser (no API key)", async () => {
    await t.request("POST", "/member/requestVerification", { body: { username: "mia" } });
    const [mail] = await outboxFor("mia2@example.com");
    const link = /(http\S+\/_auth\/verify\S+)/.exec(mail!.text)![1]!;
    const url = new URL(link);
    const res = await t.app.handle(new Request(`http://localhost${url.pathname}${url.search}`));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("confirmed");
    expect((await t.request("GET", "/member/mia")).body.emailverified).toBe(true);
    const again = await t.app.handle(new Request(`http://localhost${url.pathname}${url.search}`));
    expect(again.status).toBe(401);
  });

  test("with requireVerifiedEmail a password login waits for verification; an email code proves the address", async () => {
    const refused = await t.request("POST", "/strict/accessToken", form({ username: "stu", password: "stu-password" }));
    expect([refused.status, refused.body.error]).toEqual([401, "email_not_verified"]);
    const cookie = await t.request("GET", "/strict/login?username=stu&password=stu-password");
    expect(cookie.status).toBe(401);
    await t.request("POST", "/strict/requestCode", { body: { username: "stu" } });
    const [mail] = await outboxFor("stu@example.com");
    const signed = await t.request(
      "POST",
      "/strict/accessToken",
      form({ grant_type: "email_code", username: "stu", code: codeIn(mail!.text) }),
    );
    expect(signed.status).toBe(200);
    expect(signed.body.service.user.emailverified).toBe(true);
    expect((await t.request("POST", "/strict/accessToken", form({ username: "stu", password: "stu-password" }))).status).toBe(200);
  });
});

describe("email codes", () => {
  test("single use; five wrong tries void a code; the same answer for every username", async () => {
    expect((await t.request("POST", "/user/requestCode", { body: { username: "nobody" } })).body).toEqual({});
    await t.request("POST", "/user/requestCode", { body: { username: "bea" } });
    const [first] = await outboxFor("bea@example.com");
    const code = codeIn(first!.text);
    const grant = (c: string, extra: Record<string, string> = {}) =>
      t.request("POST", "/user/accessToken", form({ grant_type: "email_code", username: "bea", code: c, ...extra }));
    const ok = await grant(code, { token_type: "bearer" });
    expect([ok.status, ok.body.token_type]).toEqual([200, "bearer"]);
    const reused = await grant(code);
    expect([reused.status, reused.body.error]).toEqual([401, "invalid_grant"]);
    // A new code, then five wrong tries: the right one no longer works.
    await t.request("POST", "/user/requestCode", { body: { username: "bea" } });
    const mails = await outboxFor("bea@example.com", 2);
    const second = codeIn(mails.find((m) => codeIn(m.text) !== code)?.text ?? mails[0]!.text);
    const wrong = second === "000000" ? "111111" : "000000";
    for (let i = 0; i < 4; i++) expect((await grant(wrong)).body.error_description).toBe("the code is wrong");
    expect((await grant(wrong)).body.error_description).toContain("void");
    expect((await grant(second)).status).toBe(401);
    expect((await t.request("POST", "/user/accessToken", form({ grant_type: "magic", username: "bea" }))).status).toBe(400);
    expect((await t.request("POST", "/user/accessToken", form({ grant_type: "email_code", username: "bea" }))).status).toBe(400);
  });
});
