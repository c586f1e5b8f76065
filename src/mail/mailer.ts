// Outgoing mail: sent through the environment's SMTP server (settings smtp.*) with nodemailer, or kept in the
// system.db outbox when no SMTP host is set. Every mail, sent, failed or kept, is recorded in the outbox.

import type { Client } from "@libsql/core/api";
import type Nodemailer from "nodemailer";
import type { SMTPSentMessageInfo, SMTPTransportOptions, Transporter } from "nodemailer";
import { onFirstUse } from "../on-first-use.ts";
import { ApiError, badRequest } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { EnvName } from "../system/environments.ts";
import type { Settings } from "../system/settings.ts";

const nodemailer = onFirstUse(() => require("nodemailer") as typeof Nodemailer);

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** What send takes: one address or several (one message, all in To); a text or an html body or both. */
export interface OutgoingMail {
  to: string | readonly string[];
  subject: string;
  /** An html-only mail is recorded in the outbox with an empty text. */
  text?: string;
  html?: string;
}

interface SentMail {
  id: string;
  via: "smtp" | "outbox" | "not-sent";
}

interface OutboxEntry {
  id: string;
  env: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  created: number;
  via: string;
  error: string | null;
}

interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string;
  password: string;
  from: string;
}

/** How long the outbox keeps mail (maintenance prunes older entries). */
const OUTBOX_RETENTION_MS = 30 * 24 * 3600 * 1000;

const OUTBOX_DDL = [
  `CREATE TABLE IF NOT EXISTS outbox (id TEXT PRIMARY KEY, env TEXT NOT NULL, recipient TEXT NOT NULL, subject TEXT NOT NULL, text TEXT NOT NULL,
     html TEXT, created INTEGER NOT NULL, via TEXT NOT NULL, error TEXT) STRICT`,
  `CREATE INDEX IF NOT EXISTS outbox_created ON outbox (created)`,
];

export const OUTBOX_MAX_LIMIT = 500;
const OUTBOX_DEFAULT_LIMIT = 100;
const DEFAULT_FROM = "Burrow <no-reply@localhost>";
const SMTP_TIMEOUT_MS = 10_000;
const MAX_BODY_CHARS = 1024 * 1024;
/** Recipients of one mail at most. */
export const MAX_RECIPIENTS = 50;

// One plain address: no display name, no list, no whitespace or control characters.
const ADDRESS = /^[^\s\x00-\x1f\x7f@,;:<>()[\]\\"]+@[^\s\x00-\x1f\x7f@,;:<>()[\]\\"]+$/;
const CONTROL_EXCEPT_TAB = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Client-safe reasons for nodemailer's error codes; the full (redacted) error goes to the outbox and log. */
const REASONS: Record<string, string> = {
  EAUTH: "the SMTP server rejected the login",
  ENOAUTH: "the SMTP server requires a login",
  ECONNECTION: "the connection to the SMTP server failed",
  ESOCKET: "the connection to the SMTP server failed",
  ETIMEDOUT: "the SMTP server did not answer in time",
  EDNS: "the SMTP host name could not be resolved",
  ETLS: "the TLS connection to the SMTP server failed",
  EENVELOPE: "the SMTP server refused the sender or recipient",
  EMESSAGE: "the SMTP server refused the message",
};

/** Whether a recipient is one plain e-mail address (what send accepts). */
export function isMailAddress(to: unknown): to is string {
  return typeof to === "string" && to.length <= 254 && ADDRESS.test(to);
}

/** The recipients as a list (one address is a list of one). */
function recipients(to: OutgoingMail["to"]): readonly string[] {
  return typeof to === "string" ? [to] : to;
}

function checkMail(mail: OutgoingMail): void {
  if (typeof mail.to === "string" || !Array.isArray(mail.to)) {
    if (!isMailAddress(mail.to)) throw badRequest("the recipient must be one e-mail address");
  } else if (mail.to.length === 0 || mail.to.length > MAX_RECIPIENTS || !mail.to.every(isMailAddress))
    throw badRequest(`the recipients must be 1 to ${MAX_RECIPIENTS} e-mail addresses`);
  if (typeof mail.subject !== "string" || mail.subject.length > 998 || CONTROL_EXCEPT_TAB.test(mail.subject))
    throw badRequest("the subject must be one line of at most 998 characters");
  if (mail.text === undefined && mail.html === undefined) throw badRequest("the mail needs a text or an html body");
  if (mail.text !== undefined && (typeof mail.text !== "string" || mail.text.length > MAX_BODY_CHARS))
    throw badRequest(`the text must be a string of at most ${MAX_BODY_CHARS} characters`);
  if (mail.html !== undefined && (typeof mail.html !== "string" || mail.html.length > MAX_BODY_CHARS))
    throw badRequest(`the html must be a string of at most ${MAX_BODY_CHARS} characters`);
}

/** An error's code and message with every form of the secret an SMTP exchange may echo removed. */
function describe(error: unknown, s: SmtpSettings): string {
  const code = (error as { code?: unknown })?.code;
  let text = `${typeof code === "string" ? `${code}: ` : ""}${error instanceof Error ? error.message : String(error)}`;
  if (s.password) {
    const secrets = [s.password, Buffer.from(s.password).toString("base64"), Buffer.from(`\0${s.user}\0${s.password}`).toString("base64")];
    for (const secret of secrets) text = text.replaceAll(secret, "[redacted]");
  }
  return text.slice(0, 500);
}

export class Mailer {
  private transports = new Map<EnvName, { config: string; transport: Transporter<SMTPSentMessageInfo, SMTPTransportOptions> }>();

  constructor(
    private readonly db: Client,
    private readonly settings: Settings,
    private readonly log: Logger,
  ) {}

  /** Make sure the outbox table exists (idempotent). */
  async init(): Promise<void> {
    await this.db.batch(OUTBOX_DDL, "write");
  }

  /** Send through the environment's SMTP server when configured, else record in the outbox. */
  async send(env: EnvName, mail: OutgoingMail): Promise<SentMail> {
    checkMail(mail);
    const s = this.settings.get(env).smtp as SmtpSettings;
    const id = crypto.randomUUID();
    if (!s.host) {
      await this.record(id, env, mail, "outbox", null);
      this.log.info("mail kept in the outbox (no SMTP host is set)", { env, id });
      return { id, via: "outbox" };
    }
    try {
      await this.transport(env, s).sendMail({
        from: s.from || DEFAULT_FROM,
        to: typeof mail.to === "string" ? mail.to : [...mail.to],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
    } catch (e) {
      const error = describe(e, s);
      await this.record(id, env, mail, "smtp-failed", error);
      this.log.warn("mail could not be sent through SMTP; kept in the outbox", { env, id, host: s.host, port: s.port, error });
      const code = (e as { code?: unknown })?.code;
      throw new ApiError(
        502,
        `the mail could not be sent: ${(typeof code === "string" && REASONS[code]) || "the SMTP server returned an error"}`,
      );
    }
    // The mail is out: a failed audit record must not make the caller send it again.
    await this.record(id, env, mail, "smtp", null).catch((e) =>
      this.log.warn("a sent mail could not be recorded in the outbox", { env, id, error: String(e) }),
    );
    return { id, via: "smtp" };
  }

  /** Whether a recipient is one plain e-mail address (what send accepts). */
  isAddress(to: string): boolean {
    return isMailAddress(to);
  }

  /**
   * Record a mail that must not be sent (e.g. a user's email field holds no address): kept in the outbox as failed
   * with the reason, never handed to SMTP. The recipient is stored as given (at most 254 characters).
   */
  async keepUnsent(env: EnvName, mail: Mail, reason: string): Promise<SentMail> {
    const id = crypto.randomUUID();
    await this.record(id, env, { ...mail, to: String(mail.to).slice(0, 254) }, "not-sent", reason);
    this.log.info("mail kept in the outbox, not sent", { env, id, reason });
    return { id, via: "not-sent" };
  }

  /** Drop outbox entries older than `maxAgeMs` (default 30 days): they hold temporary passwords. */
  async prune(maxAgeMs = OUTBOX_RETENTION_MS): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM outbox WHERE created < ?`, args: [Date.now() - maxAgeMs] });
  }

  /** Newest first, at most `limit` (default 100, max 500), optional env filter. */
  async outbox(opts: { env?: EnvName; limit?: number } = {}): Promise<OutboxEntry[]> {
    const limit = Math.min(Math.max(Math.trunc(opts.limit ?? OUTBOX_DEFAULT_LIMIT), 1), OUTBOX_MAX_LIMIT);
    const rs = await this.db.execute({
      sql: `SELECT id, env, recipient, subject, text, html, created, via, error FROM outbox
            ${opts.env ? "WHERE env = ?" : ""} ORDER BY created DESC, rowid DESC LIMIT ?`,
      args: opts.env ? [opts.env, limit] : [limit],
    });
    return rs.rows.map((r) => ({
      id: r.id as string,
      env: r.env as string,
      to: r.recipient as string,
      subject: r.subject as string,
      text: r.text as string,
      html: (r.html as string | null) ?? null,
      created: Number(r.created),
      via: r.via as string,
      error: (r.error as string | null) ?? null,
    }));
  }

  private async record(id: string, env: EnvName, mail: OutgoingMail, via: string, error: string | null): Promise<void> {
    await this.db.execute({
      sql: `INSERT INTO outbox (id, env, recipient, subject, text, html, created, via, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [id, env, recipients(mail.to).join(", "), mail.subject, mail.text ?? "", mail.html ?? null, Date.now(), via, error],
    });
  }

  /** The environment's transport, rebuilt (and the old one closed) when its SMTP settings change. */
  private transport(env: EnvName, s: SmtpSettings): Transporter<SMTPSentMessageInfo, SMTPTransportOptions> {
    const config = JSON.stringify(s);
    const current = this.transports.get(env);
    if (current?.config === config) return current.transport;
    current?.transport.close();
    const transport = nodemailer().createTransport({
      host: s.host,
      port: s.port,
      secure: s.secure,
      auth: s.user ? { user: s.user, pass: s.password } : undefined,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    });
    this.transports.set(env, { config, transport });
    return transport;
  }
}
