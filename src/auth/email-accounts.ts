// Accounts by email: verifying a user's address (a mailed link and 6-digit code; `emailverified` set when it is
// used) and passwordless sign-in with a mailed code (`grant_type=email_code`). Requests for codes answer the same
// whoever the username names, so they reveal nothing; mails per user are limited (5 an hour); a code's check counts
// against the user's failed-login budget. Mail templates come from the settings auth.mail.*.

import { badRequest, oauthError, unauthorized } from "../errors.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { Accounts, UserRows } from "./accounts.ts";
import { type CodePurpose, type CodeRefusal, EmailCodes } from "./email-codes.ts";
import type { Credential } from "./login-flow.ts";
import type { RateLimiter } from "./rate-limit.ts";

export interface EmailTemplates {
  verifySubject: string;
  verifyText: string;
  codeSubject: string;
  codeText: string;
}

interface Mail {
  to: string;
  subject: string;
  text: string;
}

interface EmailDeps {
  accounts: Accounts;
  users: UserRows;
  limiter: RateLimiter;
  mailer: { send(env: EnvName, mail: Mail): Promise<unknown>; isAddress(to: string): boolean };
  templates(ctx: ApiContext): EmailTemplates;
  appName(ctx: ApiContext): string;
  /** Told when a mail could not be sent (the answer to the client stays the same). */
  failed?(message: string): void;
}

/** Mails of codes per user and hour. */
const MAILS_PER_HOUR = 5;

const REASONS: Record<CodeRefusal, string> = {
  unknown: "the code is not valid (none was sent, or it was used); ask for a new one",
  expired: "the code has expired; ask for a new one",
  wrong: "the code is wrong",
  voided: "the code is wrong; after five wrong tries it is void: ask for a new one",
};

/** A template with {app}, {username}, {code} and {link} filled in. Pure. */
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(app|username|code|link)\}/g, (_, k: string) => values[k] ?? "");
}

function usernameOf(s: CompiledSchema, body: Record<string, unknown>): string {
  const u = body.username ?? body[s.pk];
  if (typeof u !== "string" || u.length === 0 || u.length > 256) throw badRequest('send {"username": <key>}');
  return u;
}

function codeOf(body: Record<string, unknown>): string {
  const c = body.code;
  if (typeof c !== "string" || c.length === 0 || c.length > 32) throw badRequest('send {"username": <key>, "code": "<6 digits>"}');
  return c.trim();
}

export class EmailAccounts {
  readonly codes = new EmailCodes();

  constructor(private readonly deps: EmailDeps) {}

  /** The accessToken grant `email_code` (username and code): the user, proved by the code sent to their address. */
  readonly grant = async (ctx: ApiContext, s: CompiledSchema, params: Record<string, string>): Promise<Credential> => {
    if (!s.def.user?.email) throw oauthError(400, "unsupported_grant_type", `${s.name} has no email field (user.email)`);
    const username = params.username ?? params[s.pk];
    const code = params.code;
    if (!username || !code || username.length > 256 || code.length > 32)
      throw oauthError(400, "invalid_request", "send grant_type=email_code with username and code");
    const used = await this.use(ctx, s, username, "login", code);
    if (typeof used === "string") throw oauthError(401, "invalid_grant", REASONS[used]);
    // The code proved the address: on a schema that verifies emails it is now verified.
    const user = s.def.user.verifyEmail
      ? await this.deps.users.setEmailVerified(ctx, s, username, used.email)
      : await this.deps.users.json(ctx, s, username);
    if (user === null) throw oauthError(401, "invalid_grant", "the account or its email address changed since the code was sent");
    return { username, user, method: "email_code" };
  };

  /** POST /<userSchema>/requestCode: mail a sign-in code (the same answer for every username). */
  async requestCode(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<void> {
    await this.deps.accounts.limitIp(ctx, ip);
    if (!s.def.user?.email) throw badRequest(`${s.name} has no email field (user.email): codes cannot be mailed`);
    this.background(this.mailCode(ctx, s, usernameOf(s, body), "login", null));
  }

  /** POST /<userSchema>/requestVerification: mail a link and a code to confirm the address (the same answer for every username). */
  async requestVerification(
    ctx: ApiContext,
    s: CompiledSchema,
    body: Record<string, unknown>,
    ip: string | null,
    linkBase: string,
  ): Promise<void> {
    await this.deps.accounts.limitIp(ctx, ip);
    if (!s.def.user?.verifyEmail) throw badRequest(`${s.name} does not verify email addresses (user.verifyEmail)`);
    this.background(this.mailCode(ctx, s, usernameOf(s, body), "verify", linkBase));
  }

  /** POST /<userSchema>/verifyEmail (or the mailed link): the user's JSON with emailverified set. */
  async verifyEmail(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<string> {
    await this.deps.accounts.limitIp(ctx, ip);
    if (!s.def.user?.verifyEmail) throw badRequest(`${s.name} does not verify email addresses (user.verifyEmail)`);
    const username = usernameOf(s, body);
    const used = await this.use(ctx, s, username, "verify", codeOf(body));
    if (typeof used === "string") throw unauthorized(REASONS[used]);
    const user = await this.deps.users.setEmailVerified(ctx, s, username, used.email);
    if (user === null) throw unauthorized("the email address changed since the code was sent; ask for a new code");
    return user;
  }

  /** The lookup and mail of a code run after the answer, so its time tells nothing about the username either. */
  private background(work: Promise<void>): void {
    work.catch((e) => this.deps.failed?.(`a code mail could not be prepared: ${String((e as Error)?.message ?? e)}`));
  }

  /** Use a code within the user's failed-login budget (a right code gives it back). */
  private async use(ctx: ApiContext, s: CompiledSchema, username: string, purpose: CodePurpose, code: string) {
    await this.deps.accounts.takeLoginAttempt(ctx, s, username);
    const used = await this.codes.use(ctx.db, s.name, username, purpose, code);
    if (typeof used !== "string") await this.deps.accounts.resetLoginAttempts(ctx, s, username);
    return used;
  }

  /**
   * Mail a code (and, to verify, a link) when the user exists, has an address and is under the hourly limit; the
   * caller learns nothing either way. The mail leaves in the background.
   */
  private async mailCode(
    ctx: ApiContext,
    s: CompiledSchema,
    username: string,
    purpose: CodePurpose,
    linkBase: string | null,
  ): Promise<void> {
    const row = await this.deps.users.email(ctx, s, username);
    const email = row?.email;
    if (!email || !this.deps.mailer.isAddress(email)) return;
    const budget = await this.deps.limiter.hit(`${ctx.env}|mail-code|${s.name}|${username}`, MAILS_PER_HOUR, 3600_000);
    if (!budget.ok) return;
    const code = await this.codes.issue(ctx.db, s.name, username, purpose, email);
    const t = this.deps.templates(ctx);
    const link =
      linkBase === null
        ? ""
        : `${linkBase}/_auth/verify?${new URLSearchParams({ env: ctx.env, schema: s.name, username, code, ...(ctx.env === "production" ? { version: String(ctx.version) } : {}) })}`;
    const values = { app: this.deps.appName(ctx), username, code, link };
    const mail = {
      to: email,
      subject: fill(purpose === "verify" ? t.verifySubject : t.codeSubject, values).replace(/[\r\n]+/g, " "),
      text: fill(purpose === "verify" ? t.verifyText : t.codeText, values),
    };
    this.deps.mailer
      .send(ctx.env, mail)
      .catch((e) => this.deps.failed?.(`a code mail could not be sent: ${String((e as Error)?.message ?? e)}`));
  }
}
