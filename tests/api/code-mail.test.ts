// Custom code's mail service through real method calls: a mail reaching a loopback SMTP server with its recipients,
// subject and bodies; without an SMTP host, the outbox (read through the admin API); the hourly limit of the
// setting code.mail.perHour (a refused send rejects, the method may catch it, nothing is sent); and bad arguments,
// header injection included, each refused with a message naming the field and nothing sent.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { smtpSettings, startSmtp } from "../helpers/smtp.ts";

const TIMEOUT_MS = 15_000;

const CODE = `
export const methods = [
  { name: "send_mail", async execute(r, s) {
      try { return { body: await s.mail.send(JSON.parse(r.body)) }; }
      catch (e) { return { status: 400, body: { error: e.message } }; } } },
  { name: "send_args", async execute(r, s) {
      try { return { body: await s.mail.send(...JSON.parse(r.body)) }; }
      catch (e) { return { status: 400, body: { error: e.message } }; } } },
  { name: "send_uncaught", async execute(r, s) { return { body: await s.mail.send(JSON.parse(r.body)) }; } },
];`;

let smtp: Awaited<ReturnType<typeof startSmtp>>;

beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(async () => {
  await smtp?.stop();
});

async function appWithCode(): Promise<TestApp> {
  const app = await makeTestApp();
  expect((await upload(app, CODE)).status).toBe(200);
  return app;
}

const send = (app: TestApp, message: unknown, method = "send_mail") => app.request("POST", `/${method}`, { body: message });
const outbox = async (app: TestApp) => (await app.admin("GET", "/outbox?env=development")).body as Record<string, unknown>[];

describe("sending", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWithCode();
  });
  afterAll(async () => {
    await t.close();
  });

  test("without an SMTP host the mail lands in the outbox, readable through the admin API", async () => {
    const message = { to: "ann@example.com", subject: "Your order", text: "Shipped today.\nThanks!", html: "<p>Shipped today.</p>" };
    const r = await send(t, message);
    expect([r.status, r.body]).toEqual([200, { id: expect.any(String), via: "outbox" }]);

    const htmlOnly = await send(t, { to: ["bob@example.com", "cy@example.org"], subject: "Only html", html: "<b>hi</b>" });
    expect(htmlOnly.body.via).toBe("outbox");

    const box = await outbox(t);
    expect(box.map((m) => m.id)).toEqual([htmlOnly.body.id, r.body.id]);
    expect(box[1]).toMatchObject({ env: "development", ...message, via: "outbox", error: null });
    expect(box[0]).toMatchObject({
      to: "bob@example.com, cy@example.org",
      subject: "Only html",
      text: "",
      html: "<b>hi</b>",
      via: "outbox",
    });
  });

  test(
    "with SMTP settings the mail reaches the server: every recipient, the subject and the body",
    async () => {
      expect((await t.admin("PUT", "/settings/development", { smtp: smtpSettings(smtp.port) })).status).toBe(200);
      try {
        const before = smtp.messages.length;
        const r = await send(t, {
          to: ["ann@example.com", "bob@example.com"],
          subject: "Welcome to the app",
          text: "Hello Ann and Bob.\nSee you soon.",
          html: "<p>Hello</p>",
        });
        expect([r.status, r.body.via]).toEqual([200, "smtp"]);
        expect(smtp.messages).toHaveLength(before + 1);
        const m = smtp.messages[before]!;
        expect(m).toMatchObject({
          from: "app@example.com",
          to: ["ann@example.com", "bob@example.com"],
          subject: "Welcome to the app",
          text: "Hello Ann and Bob.\nSee you soon.",
        });
        expect(m.raw).toMatch(/^To: ann@example\.com, bob@example\.com\r$/m);
        expect(m.raw).toContain("text/html");
        const [latest] = await outbox(t);
        expect(latest).toMatchObject({ id: r.body.id, to: "ann@example.com, bob@example.com", via: "smtp", error: null });

        const plain = await send(t, { to: "cy@example.org", subject: "Plain", text: "just text" });
        expect(plain.body.via).toBe("smtp");
        expect(smtp.messages[before + 1]).toMatchObject({ to: ["cy@example.org"], subject: "Plain", text: "just text" });
      } finally {
        expect((await t.admin("PUT", "/settings/development", { smtp: null })).status).toBe(200);
      }
    },
    TIMEOUT_MS,
  );

  test(
    "header injection through the subject or a recipient is refused before anything is sent",
    async () => {
      expect((await t.admin("PUT", "/settings/development", { smtp: smtpSettings(smtp.port) })).status).toBe(200);
      try {
        const before = smtp.messages.length;
        const subject = await send(t, { to: "ann@example.com", subject: "Hi\r\nBcc: eve@example.com", text: "x" });
        expect([subject.status, subject.body.error]).toEqual([
          400,
          "mail.send: subject: must be one line, without line breaks or control characters",
        ]);
        const lf = await send(t, { to: "ann@example.com", subject: "Hi\nX-Evil: 1", text: "x" });
        expect(lf.body.error).toBe("mail.send: subject: must be one line, without line breaks or control characters");
        const to = await send(t, { to: "ann@example.com\r\nBcc: eve@example.com", subject: "Hi", text: "x" });
        expect(to.body.error).toStartWith("mail.send: to: expected one plain e-mail address");
        const named = await send(t, { to: ["Ann <ann@example.com>"], subject: "Hi", text: "x" });
        expect(named.body.error).toStartWith("mail.send: to[0]: expected one plain e-mail address");
        const list = await send(t, { to: "ann@example.com, eve@example.com", subject: "Hi", text: "x" });
        expect(list.body.error).toStartWith("mail.send: to: expected one plain e-mail address");
        expect(smtp.messages).toHaveLength(before);
      } finally {
        expect((await t.admin("PUT", "/settings/development", { smtp: null })).status).toBe(200);
      }
    },
    TIMEOUT_MS,
  );

  test("bad arguments are refused with a message naming the field, and nothing is kept", async () => {
    const kept = (await outbox(t)).length;
    const ok = { to: "ann@example.com", subject: "Hi", text: "x" };
    const fifty = Array.from({ length: 50 }, (_, i) => `u${i}@example.com`);
    const cases: [unknown, string][] = [
      [{ to: "ann@example.com", text: "x" }, "mail.send: subject: required (a string of at most 998 characters), got nothing"],
      [{ ...ok, subject: 42 }, "mail.send: subject: required (a string of at most 998 characters), got number 42"],
      [{ ...ok, subject: "s".repeat(999) }, "mail.send: subject: at most 998 characters, got 999"],
      [{ ...ok, subject: "tab\tis fine but not\u0000" }, "mail.send: subject: must be one line, without line breaks or control characters"],
      [{ subject: "Hi", text: "x" }, "mail.send: to: required (an e-mail address or an array of 1 to 50), got nothing"],
      [
        { ...ok, to: "not-an-address" },
        'mail.send: to: expected one plain e-mail address such as ann@example.com (no name, no list), got string "not-an-address"',
      ],
      [
        { ...ok, to: ["ann@example.com", 7] },
        "mail.send: to[1]: expected one plain e-mail address such as ann@example.com (no name, no list), got number 7",
      ],
      [{ ...ok, to: [...fifty, "one-more@example.com"] }, "mail.send: to: at most 50 recipients, got 51"],
      [{ ...ok, to: [] }, "mail.send: to: expected at least one recipient, got an empty array"],
      [{ ...ok, cc: "eve@example.com" }, "mail.send: cc: unknown property; expected to, subject, text, html"],
      [{ ...ok, "x-header": "1" }, 'mail.send: ["x-header"]: unknown property; expected to, subject, text, html'],
      [{ to: "ann@example.com", subject: "Hi" }, "mail.send: text, html: one of them is required (the body)"],
      [{ ...ok, text: { rich: true } }, "mail.send: text: expected a string, got an object"],
      [{ ...ok, html: 1 }, "mail.send: html: expected a string, got number 1"],
      [
        { ...ok, text: "é".repeat(400_000), html: "x".repeat(300_000) },
        "mail.send: text, html: at most 1048576 bytes together (UTF-8), got 1100000",
      ],
      ["ann@example.com", 'mail.send: the message must be an object {to, subject, text, html}, got string "ann@example.com"'],
      [[ok], "mail.send: the message must be an object {to, subject, text, html}, got an array of 1"],
    ];
    for (const [message, error] of cases) {
      const r = await send(t, message);
      expect([r.status, r.body.error]).toEqual([400, error]);
    }
    expect((await send(t, [], "send_args")).body.error).toBe(
      "mail.send: the message must be an object {to, subject, text, html}, got nothing",
    );
    expect((await send(t, [ok, ok], "send_args")).body.error).toBe("mail.send: takes one argument (the message), got 2");
    expect((await send(t, { ...ok, to: fifty })).body.via).toBe("outbox");
    expect((await outbox(t)).length).toBe(kept + 1);
  });
});

describe("the hourly limit (code.mail.perHour)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWithCode();
  });
  afterAll(async () => {
    await t.close();
  });

  test("past the limit a send rejects with the reason; a method may catch it; nothing is kept", async () => {
    expect((await t.admin("PUT", "/settings/development", { code: { mail: { perHour: 2 } } })).status).toBe(200);
    const message = { to: "ann@example.com", subject: "Ping", text: "ping" };
    expect((await send(t, message)).body.via).toBe("outbox");
    // Each recipient counts: two more are over the one left.
    const two = await send(t, { ...message, to: ["ann@example.com", "bob@example.com"] });
    expect(two.status).toBe(400);
    expect(two.body.error).toMatch(
      /^mail\.send: the limit of 2 mails an hour in development is reached \(setting code\.mail\.perHour, one per recipient\); try again in \d+ s$/,
    );
    expect((await send(t, message)).body.via).toBe("outbox");

    const third = await send(t, message);
    expect(third.status).toBe(400);
    expect(third.body.error).toMatch(/^mail\.send: the limit of 2 mails an hour in development is reached .*; try again in \d+ s$/);
    const seconds = Number(/in (\d+) s$/.exec(third.body.error)![1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(3600);

    const uncaught = await send(t, message, "send_uncaught");
    expect(uncaught.status).toBe(500);
    expect(uncaught.body.error).toContain("mail.send: the limit of 2 mails an hour in development is reached");

    const box = await outbox(t);
    expect(box.map((m) => m.subject)).toEqual(["Ping", "Ping"]);

    // A higher limit applies at once, within the same hour.
    expect((await t.admin("PUT", "/settings/development", { code: { mail: { perHour: 3 } } })).status).toBe(200);
    expect((await send(t, message)).body.via).toBe("outbox");
    expect((await send(t, message)).status).toBe(400);
  });
});
