// Forgot password (temporary password by SMTP or into the outbox), login with the temporary password with
// and without new_password, and resetPassword for the signed-in user.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth } from "../helpers/sign.ts";
import { SMTP_PASSWORD, SMTP_USER, startSmtp } from "../helpers/smtp.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  const user = (await t.admin("GET", "/schemas/user")).body;
  await t.admin("PUT", "/schemas/user", { ...user, user: { ...user.user, forgotPassword: true } });
  await t.request("POST", "/user", {
    body: [
      { username: "ann", password: "old-password", email: "ann@example.com" },
      { username: "nomail", password: "pw-123456" },
    ],
  });
  await t.admin("PUT", "/schemas/member", {
    fields: { pw: { type: "password" }, mail: { type: "string" } },
    user: { key: "login", password: "pw", email: "mail" },
  });
  await t.request("POST", "/member", { body: { login: "m1", pw: "member-pw", mail: "m1@example.com" } });
});
afterAll(() => t.close());

const login = (username: string, password: string, extra: Record<string, string> = {}) =>
  t.request("POST", "/user/accessToken", {
    raw: new URLSearchParams({ username, password, token_type: "mac", ...extra }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
const tempFrom = (text: string) => /temporary password for .* is: ([A-Za-z0-9]+)/.exec(text)![1]!;

describe("forgot password", () => {
  test("without SMTP the temporary password goes to the outbox; the old password keeps working", async () => {
    const r = await t.request("POST", "/user/forgotPassword", { body: { username: "ann" } });
    expect(r.status).toBe(200);
    const outbox = (await t.admin("GET", "/outbox")).body;
    expect(outbox[0]).toMatchObject({ to: "ann@example.com", via: "outbox" });
    const temp = tempFrom(outbox[0].text);
    expect(temp).toMatch(/^[A-Za-z0-9]{12}$/);
    expect((await login("ann", "old-password")).status).toBe(200);

    const needsReset = await login("ann", temp);
    expect(needsReset.status).toBe(401);
    expect(needsReset.body).toEqual({
      error: "Temporary password reset required.",
      error_description: "Temporary password reset required.",
    });
    const reset = await login("ann", temp, { new_password: "new-password" });
    expect(reset.status).toBe(200);
    expect(reset.body.service.user.username).toBe("ann");
    expect((await login("ann", "new-password")).status).toBe(200);
    expect((await login("ann", "old-password")).status).toBe(401);
    expect((await login("ann", temp, { new_password: "again" })).status).toBe(401);
  });

  test("the GET form with new_password works as the REST docs show", async () => {
    await t.request("POST", "/user/forgotPassword", { body: { username: "ann" } });
    const temp = tempFrom((await t.admin("GET", "/outbox")).body[0].text);
    const r = await t.request("GET", `/user/accessToken?username=ann&password=${temp}&new_password=via-get`);
    expect(r.status).toBe(200);
    expect((await login("ann", "via-get")).status).toBe(200);
  });

  test("an expired temporary password does not log in", async () => {
    await t.request("POST", "/user/forgotPassword", { body: { username: "ann" } });
    const temp = tempFrom((await t.admin("GET", "/outbox")).body[0].text);
    await t.burrow.envDbs.development.execute("UPDATE _burrow_temp_passwords SET expires = 0");
    const r = await login("ann", temp);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("access_denied");
  });

  test("401 for unknown users, users without email and schemas without the method", async () => {
    expect((await t.request("POST", "/user/forgotPassword", { body: { username: "ghost" } })).status).toBe(401);
    expect((await t.request("POST", "/user/forgotPassword", { body: { username: "nomail" } })).status).toBe(401);
    expect((await t.request("POST", "/member/forgotPassword", { body: { username: "m1" } })).status).toBe(401);
    expect((await t.request("POST", "/user/forgotPassword", { body: {} })).status).toBe(401);
  });

  test("an email field that holds no address: 200, the mail kept in the outbox as failed with the reason, no SMTP attempt", async () => {
    const smtp = await startSmtp();
    try {
      await t.admin("PUT", "/settings/development", {
        smtp: { host: "127.0.0.1", port: smtp.port, secure: false, from: "no-reply@acme.test" },
      });
      expect(
        (await t.request("POST", "/user", { body: { username: "odd", password: "odd-password", email: "not an address" } })).status,
      ).toBe(201);
      const r = await t.request("POST", "/user/forgotPassword", { body: { username: "odd" } });
      expect([r.status, r.body]).toEqual([200, {}]);
      const kept = (await t.admin("GET", "/outbox")).body[0];
      expect(kept).toMatchObject({ to: "not an address", via: "not-sent" });
      expect(kept.error).toContain("no e-mail address");
      expect(smtp.connections()).toBe(0);
      // The temporary password works as for any other user (an admin can hand it over).
      expect((await login("odd", tempFrom(kept.text), { new_password: "odd-new" })).status).toBe(200);
    } finally {
      await t.admin("PUT", "/settings/development", { smtp: null });
      await smtp.stop();
    }
  });

  test("with SMTP settings the mail is sent through the server", async () => {
    const smtp = await startSmtp();
    try {
      await t.admin("PUT", "/settings/development", {
        app: { name: "Acme" },
        smtp: {
          host: "127.0.0.1",
          port: smtp.port,
          secure: false,
          user: SMTP_USER,
          password: SMTP_PASSWORD,
          from: "Acme <no-reply@acme.test>",
        },
      });
      expect((await t.request("POST", "/user/forgotPassword", { body: { username: "ann" } })).status).toBe(200);
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.connections()).toBeGreaterThanOrEqual(1);
      const m = smtp.messages[0]!;
      expect(m.to).toEqual(["ann@example.com"]);
      expect(m.subject).toContain("Acme");
      const temp = tempFrom(m.text);
      expect((await login("ann", temp, { new_password: "from-smtp" })).status).toBe(200);
      expect((await t.admin("GET", "/outbox")).body[0].via).toBe("smtp");
    } finally {
      await t.admin("PUT", "/settings/development", { smtp: null, app: null });
      await smtp.stop();
    }
  });
});

describe("reset password", () => {
  test("the signed-in user changes the password with the old one; other users and bad input get 401", async () => {
    await t.request("POST", "/user", { body: { username: "rita", password: "rita-old" } });
    const c = (await login("rita", "rita-old")).body;
    const body = { old: { password: "rita-old" }, new: { password: "rita-new" } };
    const unsigned = await t.request("POST", "/user/resetPassword", { body });
    expect(unsigned.status).toBe(401);
    const wrong = await t.request("POST", "/user/resetPassword", {
      body: { ...body, old: { password: "nope" } },
      headers: { authorization: macAuth(c, "POST", "/user/resetPassword") },
    });
    expect(wrong.status).toBe(401);
    const ok = await t.request("POST", "/user/resetPassword", {
      body,
      headers: { authorization: macAuth(c, "POST", "/user/resetPassword") },
    });
    expect(ok.status).toBe(200);
    expect((await login("rita", "rita-new")).status).toBe(200);
    expect((await login("rita", "rita-old")).status).toBe(401);
    const malformed = await t.request("POST", "/user/resetPassword", {
      body: { old: "x" },
      headers: { authorization: macAuth(c, "POST", "/user/resetPassword") },
    });
    expect(malformed.status).toBe(401);
  });

  test("custom user schemas log in with their own field names", async () => {
    const r = await t.request("POST", "/member/accessToken", {
      raw: "login=m1&pw=member-pw&token_type=mac",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status).toBe(200);
    expect(r.body.service.user).toMatchObject({ login: "m1", mail: "m1@example.com" });
    expect(r.body.service.user.pw).toBeUndefined();
  });
});
