// User accounts over any user schema: token login (also with a temporary password and new_password), the legacy
// session login (one password check for both), refresh, logout, the logged-in user, forgot/reset password.
// Answers and errors follow the original service (docs/api/users.md): token responses, 401
// access_denied, the temporary-password message; the session login's refusals are plain {"error": ...}.
// The account logic only: user rows are read and written through the UserRows port (the datastore's
// src/datastore/user-rows.ts) and mail leaves through the MailSender port (src/mail/mailer.ts), both declared here.

import { hashPassword, verifyNothing, verifyPassword } from "./passwords.ts";
import { type ApiError, badRequest, notFound, oauthError, tooManyRequests, unauthorized } from "../errors.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { Sessions } from "./sessions.ts";
import { randomToken } from "./sessions.ts";
import type { RateLimiter } from "./rate-limit.ts";
import { rateKeyOfIp } from "../net/ip.ts";
import { type Credential, type Grant, type SecondFactor, type TokenKind, tokenKindOf, tokenResponse } from "./login-flow.ts";

const TEMP_PASSWORD_TTL_MS = 24 * 3600 * 1000;
const TEMP_REQUIRED = "Temporary password reset required.";
const MAX_FIELD = 1024;

export interface RateLimits {
  ipPerMinute: number;
  failedLoginsPerAccount: number;
  failedLoginWindowMinutes: number;
  signupsPerIpPerHour: number;
}

const INVALID_CREDENTIALS = "Invalid username or password";

/** How a password login words its refusals. */
interface LoginRefusals {
  /** Wrong or missing credentials. */
  denied(): ApiError;
  /** The temporary password was given without new_password. */
  resetRequired(): ApiError;
  /** A parameter out of bounds (400). */
  invalid(message: string): ApiError;
}

/** accessToken: OAuth 2.0 token errors (docs/api/users.md#accesstoken). */
const TOKEN_REFUSALS: LoginRefusals = {
  denied: () => oauthError(401, "access_denied", INVALID_CREDENTIALS),
  resetRequired: () => oauthError(401, TEMP_REQUIRED, TEMP_REQUIRED),
  invalid: (message) => oauthError(400, "invalid_request", message),
};

/** The legacy /login: plain {"error": ...}, whose text for bad credentials contains "Invalid" (docs/api/users.md#legacy-cookie-session). */
const SESSION_REFUSALS: LoginRefusals = {
  denied: () => unauthorized(INVALID_CREDENTIALS),
  resetRequired: () => unauthorized(TEMP_REQUIRED),
  invalid: badRequest,
};

/** The rows of a user schema (and its temporary passwords) that accounts read and write. */
export interface UserRows {
  /** The user's JSON (never the password) and password hash in one read; null when there is no such user. */
  forLogin(ctx: ApiContext, s: CompiledSchema, username: string): Promise<{ json: string; hash: string | null } | null>;
  /** The user's JSON, as GET /<schema>/<key> answers it; null when there is no such user. */
  json(ctx: ApiContext, s: CompiledSchema, username: string): Promise<string | null>;
  /** The stored password hash; null when there is no such user or no password. */
  passwordHash(ctx: ApiContext, s: CompiledSchema, username: string): Promise<string | null>;
  /** The user's email field; null when there is no such user. */
  email(ctx: ApiContext, s: CompiledSchema, username: string): Promise<{ email: string | null } | null>;
  /**
   * Store a new password hash, drop any temporary password and end every session of the user but `keepFamily`'s,
   * in one transaction; the updated user's JSON, null when there is no such user.
   */
  setPasswordHash(ctx: ApiContext, s: CompiledSchema, username: string, hash: string, keepFamily: string | null): Promise<string | null>;
  /** The hash of the user's temporary password still valid at `now`, or null. */
  tempPasswordHash(ctx: ApiContext, s: CompiledSchema, username: string, now: number): Promise<string | null>;
  /** Store (or replace) the user's temporary password. */
  setTempPasswordHash(ctx: ApiContext, s: CompiledSchema, username: string, hash: string, expires: number): Promise<void>;
  /** Mark the user's email address verified, when it is still `email`; the updated user's JSON, or null. */
  setEmailVerified(ctx: ApiContext, s: CompiledSchema, username: string, email: string): Promise<string | null>;
}

/** Outgoing mail as accounts send it (the Mailer satisfies it). */
interface MailSender {
  send(env: EnvName, mail: { to: string; subject: string; text: string }): Promise<unknown>;
  /** Whether a recipient is an address the sender takes. */
  isAddress(to: string): boolean;
  /** Keep a mail in the outbox as failed, with the reason, without sending it. */
  keepUnsent(env: EnvName, mail: { to: string; subject: string; text: string }, reason: string): Promise<unknown>;
}

interface AccountDeps {
  sessions(ctx: ApiContext): Sessions;
  limiter: RateLimiter;
  users: UserRows;
  mailer: MailSender;
  limits(ctx: ApiContext): RateLimits;
  appName(ctx: ApiContext): string;
}

export class Accounts {
  /** accessToken grants beside the password, by grant_type (email codes, the second factor, passkeys). */
  private readonly grants = new Map<string, Grant>();
  private secondFactor: SecondFactor | null = null;

  constructor(private readonly deps: AccountDeps) {}

  /** Accept `grant_type=<name>` on accessToken. */
  useGrant(name: string, grant: Grant): void {
    this.grants.set(name, grant);
  }

  /** Ask for a second factor after a password (or email code) when the user has one. */
  useSecondFactor(factor: SecondFactor): void {
    this.secondFactor = factor;
  }

  /** The user schema an endpoint is called on; 404 when the schema is not one. */
  userSchema(ctx: ApiContext, name: string): CompiledSchema {
    const s = ctx.schemas.schemas.get(name);
    if (!s?.def.user) throw notFound(`${name} is not a user schema`);
    return s;
  }

  /** Per-IP limit shared by every login, token, password and social endpoint (an IPv6 client counts by its /64). */
  async limitIp(ctx: ApiContext, ip: string | null): Promise<void> {
    const r = await this.deps.limiter.hit(
      `${ctx.env}|ip|${ip === null ? "unknown" : rateKeyOfIp(ip)}`,
      this.deps.limits(ctx).ipPerMinute,
      60_000,
    );
    if (!r.ok) throw tooManyRequests(r.retryAfter);
  }

  /**
   * Sign-ups per client IP and hour (setting rateLimits.signupsPerIpPerHour): `count` accounts at once (a batch).
   * The private key creates accounts without this limit.
   */
  async limitSignups(ctx: ApiContext, ip: string | null, count: number): Promise<void> {
    if (ctx.principal.kind === "app" || ctx.principal.kind === "system") return;
    const r = await this.deps.limiter.hit(
      `${ctx.env}|signup|${ip === null ? "unknown" : rateKeyOfIp(ip)}`,
      this.deps.limits(ctx).signupsPerIpPerHour,
      3600_000,
      count,
    );
    if (!r.ok) throw tooManyRequests(r.retryAfter);
  }

  /**
   * Take one attempt from the account's failed-login budget before a password is checked, so that parallel
   * guesses cannot all pass a check made before any of them failed: at most `failedLoginsPerAccount` checks
   * run per window, the rest are 429. A correct password gives the budget back (the count starts again).
   */
  /** Take one attempt from a user's failed-login budget (email codes, second factors, passkeys count there too). */
  takeLoginAttempt(ctx: ApiContext, s: CompiledSchema, username: string): Promise<void> {
    return this.takeAttempt(ctx, this.accountKey(ctx, s, username));
  }

  /** A login that succeeded gives the user's budget back. */
  async resetLoginAttempts(ctx: ApiContext, s: CompiledSchema, username: string): Promise<void> {
    await this.deps.limiter.reset(this.accountKey(ctx, s, username));
  }

  private async takeAttempt(ctx: ApiContext, key: string): Promise<void> {
    const limits = this.deps.limits(ctx);
    const r = await this.deps.limiter.hit(key, limits.failedLoginsPerAccount, limits.failedLoginWindowMinutes * 60_000);
    if (!r.ok) throw tooManyRequests(r.retryAfter);
  }

  private accountKey(ctx: ApiContext, s: CompiledSchema, username: string): string {
    return `${ctx.env}|fail|${s.name}|${username}`;
  }

  /** A new login of `username` (social sign-in): the token response around the user's JSON. */
  async issueTokens(ctx: ApiContext, s: CompiledSchema, username: string, user: string, kind: TokenKind = "mac"): Promise<string> {
    const tokens = await this.deps.sessions(ctx).issue(s.name, username, s.def.user?.singleSession === true, kind);
    return tokenResponse(user, tokens, kind);
  }

  /**
   * The checks every login passes once its first proof is in: a user schema requiring a verified email refuses an
   * unverified user (401 email_not_verified) unless the proof was a code sent to that email or a social or OpenID
   * provider's (which vouches for the account itself); a user with a second
   * factor gets 401 mfa_required with a challenge token unless the proof was the second factor or a passkey.
   */
  async admit(ctx: ApiContext, s: CompiledSchema, cred: Credential): Promise<void> {
    if (s.def.user?.requireVerifiedEmail && cred.method !== "email_code" && cred.method !== "social" && !isVerified(cred.user))
      throw oauthError(401, "email_not_verified", "verify your email address first (requestVerification)");
    if (cred.method === "mfa" || cred.method === "passkey" || !this.secondFactor) return;
    const token = await this.secondFactor.challenge(ctx, s, cred.username);
    if (token !== null)
      throw oauthError(401, "mfa_required", "a second factor is needed: send grant_type=mfa with mfa_token and code", { mfa_token: token });
  }

  /** A new cookie session of `username` (the pre-OAuth 2.0 social logins): its token and lifetime in seconds. */
  async issueCookieSession(ctx: ApiContext, s: CompiledSchema, username: string): Promise<{ token: string; expiresIn: number }> {
    const tokens = await this.deps.sessions(ctx).issue(s.name, username, s.def.user?.singleSession === true, "cookie");
    return { token: tokens.access_token, expiresIn: tokens.expires_in };
  }

  /**
   * Set a new password (dropping any temporary one) and end the user's other sessions: all of them, or all but the
   * caller's `keepFamily`. The updated user's JSON, null when the user is gone.
   */
  private async setPassword(
    ctx: ApiContext,
    s: CompiledSchema,
    username: string,
    password: string,
    keepFamily: string | null,
  ): Promise<string | null> {
    const user = await this.deps.users.setPasswordHash(ctx, s, username, await hashPassword(password), keepFamily);
    this.deps.sessions(ctx).forgetUsers(s.name, [username], keepFamily);
    return user;
  }

  /** POST (or GET) /<userSchema>/accessToken: the password, or another grant_type; MAC or bearer tokens. */
  async login(ctx: ApiContext, s: CompiledSchema, params: Record<string, string>, ip: string | null): Promise<string> {
    await this.limitIp(ctx, ip);
    const kind = tokenKindOf(params);
    if (kind === "mac" && params.mac_algorithm !== undefined && !["hmac-sha-1", "hmac-sha1"].includes(params.mac_algorithm))
      throw oauthError(400, "invalid_request", "mac_algorithm must be hmac-sha-1");
    const grantType = params.grant_type ?? "password";
    let cred: Credential;
    if (grantType === "password") cred = { ...(await this.checkPassword(ctx, s, params, TOKEN_REFUSALS)), method: "password" };
    else {
      const grant = this.grants.get(grantType);
      if (!grant)
        throw oauthError(400, "unsupported_grant_type", `grant_type must be one of ${["password", ...this.grants.keys()].join(", ")}`);
      cred = await grant(ctx, s, params, ip);
    }
    await this.admit(ctx, s, cred);
    return this.issueTokens(ctx, s, cred.username, cred.user, kind);
  }

  /**
   * GET /<userSchema>/login, the legacy session login: the same check as accessToken, then a session whose access
   * token the HTTP layer hands out as a cookie. The user's JSON, the token and its lifetime in seconds.
   */
  async sessionLogin(
    ctx: ApiContext,
    s: CompiledSchema,
    params: Record<string, string>,
    ip: string | null,
  ): Promise<{ user: string; token: string; expiresIn: number }> {
    await this.limitIp(ctx, ip);
    const { username, user } = await this.checkPassword(ctx, s, params, SESSION_REFUSALS);
    await this.admit(ctx, s, { username, user, method: "password" });
    const tokens = await this.deps.sessions(ctx).issue(s.name, username, s.def.user?.singleSession === true, "cookie");
    return { user, token: tokens.access_token, expiresIn: tokens.expires_in };
  }

  /**
   * The one password check of every login: the login field and password (or a temporary password, replaced by
   * new_password), with the per-account failure limit. The username and the user's JSON (never the password).
   */
  private async checkPassword(
    ctx: ApiContext,
    s: CompiledSchema,
    params: Record<string, string>,
    refuse: LoginRefusals,
  ): Promise<{ username: string; user: string }> {
    const username = params[s.pk] ?? params.username;
    const password = params[s.passwordField!] ?? params.password;
    if (!username || !password || username.length > 256 || password.length > MAX_FIELD) throw refuse.denied();
    const key = this.accountKey(ctx, s, username);
    await this.takeAttempt(ctx, key);

    // The one read of the user row: its JSON for the answer and the hash to check.
    const row = await this.deps.users.forLogin(ctx, s, username);
    const ok = row?.hash ? await verifyPassword(password, row.hash) : await verifyNothing(password);
    let user = ok && row ? row.json : null;
    if (user === null && row) {
      const temp = await this.deps.users.tempPasswordHash(ctx, s, username, Date.now());
      if (temp !== null && (await verifyPassword(password, temp))) {
        const next = params.new_password;
        if (!next) throw refuse.resetRequired();
        if (next.length > MAX_FIELD) throw refuse.invalid("new_password is too long");
        user = await this.setPassword(ctx, s, username, next, null);
        if (user === null) throw refuse.denied();
      }
    }
    // A failure keeps the attempt it took; a success gives the budget back.
    if (user === null) throw refuse.denied();
    await this.deps.limiter.reset(key);
    return { username, user };
  }

  /** POST /<userSchema>/refreshToken. */
  async refresh(ctx: ApiContext, s: CompiledSchema, params: Record<string, string>, ip: string | null): Promise<string> {
    await this.limitIp(ctx, ip);
    if (params.grant_type !== undefined && params.grant_type !== "refresh_token")
      throw oauthError(400, "unsupported_grant_type", "grant_type must be refresh_token");
    const asked = params.token_type === undefined ? undefined : tokenKindOf(params);
    const token = params.refresh_token;
    if (!token) throw oauthError(401, "invalid_grant", "refresh_token is missing");
    const r = await this.deps.sessions(ctx).refresh(token, asked);
    if (r === null) throw oauthError(401, "invalid_grant", "the refresh token is unknown or expired");
    if (r === "reused") throw oauthError(401, "invalid_grant", "the refresh token was already used; every token of this login is revoked");
    if (r.schema !== s.name) throw oauthError(401, "invalid_grant", `the refresh token does not belong to ${s.name}`);
    const user = await this.deps.users.json(ctx, s, r.username);
    if (user === null) throw TOKEN_REFUSALS.denied();
    return tokenResponse(user, r.tokens, r.kind === "bearer" ? "bearer" : "mac");
  }

  private signedIn(ctx: ApiContext, s: CompiledSchema): { username: string; family: string } {
    const p = ctx.principal;
    if (p.kind !== "user" || p.schema !== s.name) throw unauthorized();
    return p;
  }

  /** GET /<userSchema>/logout: revokes the session of this login (its token pair, or its session cookie). */
  async logout(ctx: ApiContext, s: CompiledSchema): Promise<void> {
    await this.deps.sessions(ctx).revokeFamily(this.signedIn(ctx, s).family);
  }

  /** GET /<userSchema>/loggedInUser. */
  async loggedInUser(ctx: ApiContext, s: CompiledSchema): Promise<string> {
    const { username } = this.signedIn(ctx, s);
    const user = await this.deps.users.json(ctx, s, username);
    if (user === null) throw notFound();
    return user;
  }

  /** POST /<userSchema>/forgotPassword: a temporary password, valid 24 hours, mailed to the user's email field. */
  async forgotPassword(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<void> {
    await this.limitIp(ctx, ip);
    const u = s.def.user!;
    if (!u.forgotPassword || !u.email) throw unauthorized(`the forgot password method is not enabled for ${s.name}`);
    const username = body.username ?? body[s.pk];
    if (typeof username !== "string" || username.length === 0 || username.length > 256) throw unauthorized('send {"username": <key>}');
    const row = await this.deps.users.email(ctx, s, username);
    if (!row) throw unauthorized("no such user");
    const email = row.email;
    if (!email) throw unauthorized("the user has no email address");
    const temp = randomToken(12);
    await this.deps.users.setTempPasswordHash(ctx, s, username, await hashPassword(temp), Date.now() + TEMP_PASSWORD_TTL_MS);
    const app = this.deps.appName(ctx);
    const mail = {
      to: email,
      subject: `${app}: password reset`,
      text: `Hello ${username},\n\nyour temporary password for ${app} is: ${temp}\n\nIt is valid for 24 hours. Log in with it and choose a new password.\nYour old password keeps working until then.\n`,
    };
    // An email field may hold any string (the original SDKs' tests store one): the answer is the same 200, the
    // mail stays in the outbox as failed, with the reason, and no SMTP server is asked.
    if (this.deps.mailer.isAddress(email)) await this.deps.mailer.send(ctx.env, mail);
    else await this.deps.mailer.keepUnsent(ctx.env, mail, "the user's email field holds no e-mail address; not sent");
  }

  /** POST /<userSchema>/resetPassword: {old: {password}, new: {password}} for the signed-in user. */
  async resetPassword(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<void> {
    await this.limitIp(ctx, ip);
    const { username, family } = this.signedIn(ctx, s);
    const old = (body.old as Record<string, unknown> | undefined)?.password;
    const next = (body.new as Record<string, unknown> | undefined)?.password;
    if (
      (old !== undefined && typeof old !== "string") ||
      typeof next !== "string" ||
      next.length === 0 ||
      next.length > MAX_FIELD ||
      (old?.length ?? 0) > MAX_FIELD
    )
      throw unauthorized('send {"old": {"password": ...}, "new": {"password": ...}}');
    const key = this.accountKey(ctx, s, username);
    const hash = await this.deps.users.passwordHash(ctx, s, username);
    // A user created by a social login has no password: its first one needs no old password.
    if (hash === null && !old) {
      await this.setPassword(ctx, s, username, next, family);
      return;
    }
    await this.takeAttempt(ctx, key);
    if (!hash || typeof old !== "string" || !(await verifyPassword(old, hash))) throw unauthorized("the old password is wrong");
    await this.deps.limiter.reset(key);
    await this.setPassword(ctx, s, username, next, family);
  }
}

/** Whether a user's JSON says its email is verified (`emailverified`: true). */
function isVerified(user: string): boolean {
  return /"emailverified":true[,}]/.test(user);
}
