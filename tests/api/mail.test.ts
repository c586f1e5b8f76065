// Mail: the outbox without SMTP settings, delivery through a local SMTP server with a login, failures kept in
// the outbox without leaking the password, header injection refused, per-environment settings, ?env&limit.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors.ts";
import { createLogger } from "../../src/log.ts";
import { outboxQuery } from "../../src/mail/admin-outbox.ts";
import { Mailer, type Mail } from "../../src/mail/mailer.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { SMTP_PASSWORD, SMTP_USER, smtpSettings, startSmtp } from "../helpers/smtp.ts";

const WRONG_PASSWORD = "wr0ng-pa55word";
const TIMEOUT_MS = 15_000;

let t: TestApp;
let mailer: Mailer;
let smtp: Awaited<ReturnType<typeof startSmtp>>;
const logged: string[] = [];

beforeAll(async () => {
  t = await makeTestApp();
  mailer = new Mailer(
    t.burrow.system,
    t.burrow.settings,
    createLogger("debug", (l) => logged.push(l)),
  );
  await mailer.init();
  await mailer.init(); // idempotent
  smtp = await startSmtp();
});
afterAll(async () => {
  await smtp?.stop();
  await t.close();
});

async function setSmtp(env: "development" | "production", settings: Record<string, unknown> | null): Promise<void> {
  const r = await t.admin("PUT", `/settings/${env}`, { smtp: settings });
  expect(r.status).toBe(200);
}
const working = () => smtpSettings(smtp.port);
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected the send to fail");
    },
    (e: unknown) => e as ApiError,
  );
const reset: Mail = {
  to: "user@example.com",
  subject: "Reset your password",
  text: "Your code is 123456.\nIt expires in 15 minutes.",
  html: "<p>Your code is <b>123456</b>.</p>",
};

describe("without SMTP settings", () => {
  test("mail lands in the outbox, newest first, with every field", async () => {
    const before = Date.now();
    const first = await mailer.send("development", { to: "a@example.com", subject: "First", text: "one" });
    const second = await mailer.send("development", reset);
    expect(first.via).toBe("outbox");
    expect(second).toEqual({ id: expect.any(String), via: "outbox" });

    const box = await mailer.outbox();
    expect(box.map((m) => m.id)).toEqual([second.id, first.id]);
    expect(box[0]).toEqual({
      id: second.id,
      env: "development",
      to: reset.to,
      subject: reset.subject,
      text: reset.text,
      html: reset.html!,
      created: expect.any(Number),
      via: "outbox",
      error: null,
    });
    expect(box[1]).toMatchObject({ to: "a@example.com", subject: "First", text: "one", html: null, via: "outbox", error: null });
    expect(box[1]!.created).toBeGreaterThanOrEqual(before);
    expect(box[1]!.created).toBeLessThanOrEqual(Date.now());

    expect((await mailer.outbox({ limit: 1 })).map((m) => m.id)).toEqual([second.id]);
    expect(await mailer.outbox({ env: "production" })).toEqual([]);
  });
});

describe("through SMTP", () => {
  test(
    "the server gets exactly the message, from the configured sender, after logging in",
    async () => {
      await setSmtp("development", working());
      const sent = await mailer.send("development", reset);
      expect(sent.via).toBe("smtp");

      expect(smtp.messages).toHaveLength(1);
      const m = smtp.messages[0]!;
      expect(m).toMatchObject({
        from: "app@example.com",
        to: ["user@example.com"],
        user: SMTP_USER,
        subject: reset.subject,
        text: reset.text,
      });
      expect(m.raw).toMatch(/^From: App <app@example\.com>\r$/m);
      expect(m.raw).toMatch(/^To: user@example\.com\r$/m);

      const [latest] = await mailer.outbox();
      expect(latest).toMatchObject({
        id: sent.id,
        env: "development",
        to: reset.to,
        subject: reset.subject,
        text: reset.text,
        html: reset.html!,
        via: "smtp",
        error: null,
      });
    },
    TIMEOUT_MS,
  );

  test(
    "each send uses the current settings (the default sender when from is empty)",
    async () => {
      await mailer.send("development", { to: "b@example.com", subject: "Again", text: "two" });
      await setSmtp("development", { ...working(), from: "" });
      await mailer.send("development", { to: "c@example.com", subject: "Default sender", text: "three" });
      expect(smtp.messages.map((m) => [m.to[0], m.from])).toEqual([
        ["user@example.com", "app@example.com"],
        ["b@example.com", "app@example.com"],
        ["c@example.com", "no-reply@localhost"],
      ]);
      expect(smtp.messages[2]!.raw).toMatch(/^From: Burrow <no-reply@localhost>\r$/m);
    },
    TIMEOUT_MS,
  );

  test(
    "a rejected login is a 502, the mail stays in the outbox, and no form of the password is logged",
    async () => {
      await setSmtp("development", { ...working(), password: WRONG_PASSWORD });
      const count = smtp.messages.length;
      const e = await failure(mailer.send("development", { to: "d@example.com", subject: "Locked out", text: "four" }));
      expect(e).toBeInstanceOf(ApiError);
      expect(e.status).toBe(502);
      expect(e.message).toBe("the mail could not be sent: the SMTP server rejected the login");
      expect(smtp.messages).toHaveLength(count);

      const [latest] = await mailer.outbox();
      expect(latest).toMatchObject({ to: "d@example.com", subject: "Locked out", text: "four", via: "smtp-failed" });
      expect(latest!.error).toContain("EAUTH");
      expect(logged.some((l) => l.includes(" WARN ") && l.includes(latest!.id))).toBe(true);

      const secrets = [SMTP_PASSWORD, WRONG_PASSWORD, btoa(WRONG_PASSWORD), btoa(`\0${SMTP_USER}\0${WRONG_PASSWORD}`)];
      const box = JSON.stringify(await mailer.outbox());
      for (const s of secrets) {
        expect(logged.filter((l) => l.includes(s))).toEqual([]);
        expect(box).not.toContain(s);
        expect(e.message).not.toContain(s);
      }
    },
    TIMEOUT_MS,
  );

  test(
    "a closed port is a 502 and nothing is lost",
    async () => {
      const gone = await startSmtp();
      await gone.stop();
      await setSmtp("development", { ...working(), port: gone.port });
      const e = await failure(mailer.send("development", { to: "e@example.com", subject: "Nobody home", text: "five" }));
      expect(e).toBeInstanceOf(ApiError);
      expect(e.status).toBe(502);
      expect(e.message).toStartWith("the mail could not be sent: ");
      const [latest] = await mailer.outbox();
      expect(latest).toMatchObject({
        to: "e@example.com",
        subject: "Nobody home",
        text: "five",
        via: "smtp-failed",
        error: expect.stringContaining("ECONNREFUSED"),
      });
    },
    TIMEOUT_MS,
  );

  test(
    "header injection and anything but one plain address is a 400 and sends nothing",
    async () => {
      await setSmtp("development", working());
      const count = smtp.messages.length;
      const stored = (await mailer.outbox({ limit: 500 })).length;
      const bad: Mail[] = [
        { to: "f@example.com\r\nBcc: x@y", subject: "Hi", text: "x" },
        { to: "f@example.com\nBcc: x@y", subject: "Hi", text: "x" },
        { to: "f@example.com", subject: "Hi\nBcc: x@y", text: "x" },
        { to: "f@example.com", subject: "Hi\rBcc: x@y", text: "x" },
        { to: "f@example.com, g@example.com", subject: "Hi", text: "x" },
        { to: "Eve <f@example.com>", subject: "Hi", text: "x" },
        { to: "not-an-address", subject: "Hi", text: "x" },
        { to: `${"a".repeat(250)}@example.com`, subject: "Hi", text: "x" },
      ];
      for (const mail of bad) {
        const e = await failure(mailer.send("development", mail));
        expect(e).toBeInstanceOf(ApiError);
        expect(e.status).toBe(400);
      }
      expect(smtp.messages).toHaveLength(count);
      expect(await mailer.outbox({ limit: 500 })).toHaveLength(stored);
    },
    TIMEOUT_MS,
  );

  test(
    "production and development settings are separate",
    async () => {
      const count = smtp.messages.length;
      const prod = await mailer.send("production", { to: "h@example.com", subject: "Prod", text: "six" });
      expect(prod.via).toBe("outbox");
      expect(smtp.messages).toHaveLength(count);
      expect((await mailer.send("development", { to: "i@example.com", subject: "Dev", text: "seven" })).via).toBe("smtp");
      expect(smtp.messages).toHaveLength(count + 1);

      const prodBox = await mailer.outbox({ env: "production" });
      expect(prodBox.map((m) => [m.id, m.env, m.via])).toEqual([[prod.id, "production", "outbox"]]);
      expect((await mailer.outbox({ env: "development" })).every((m) => m.env === "development")).toBe(true);
    },
    TIMEOUT_MS,
  );
});

describe("outboxQuery", () => {
  const q = (s: string) => outboxQuery(new URL(`http://localhost/_admin/api/outbox${s}`));
  const status = (s: string) => {
    try {
      q(s);
      return 200;
    } catch (e) {
      return (e as ApiError).status;
    }
  };

  test("reads env and limit", () => {
    expect(q("")).toEqual({});
    expect(q("?env=production&limit=20")).toEqual({ env: "production", limit: 20 });
    expect(q("?limit=500")).toEqual({ limit: 500 });
  });

  test("bad values are a 400", () => {
    for (const s of ["?env=", "?env=staging", "?limit=0", "?limit=501", "?limit=-1", "?limit=1.5", "?limit=abc", "?limit=", "?limit=1e2"])
      expect([s, status(s)]).toEqual([s, 400]);
  });
});
