// User accounts over any user schema: token login (also with a temporary password and new_password),
// refresh, logout, the logged-in user, forgot/reset password. Answers and errors follow the original service
// (behaviour.md §6, §11.22-28): token responses, 401 access_denied, the temporary-password message.

import { hashPassword, verifyNothing, verifyPassword } from "./passwords.ts";
import type { ApiContext } from "../datastore/context.ts";
import { ApiError, tooManyRequests } from "../errors.ts";
import type { Mailer } from "../mail/mailer.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { q } from "../db/sql.ts";
import type { Sessions, Tokens } from "./sessions.ts";
import { randomToken } from "./sessions.ts";
import type { RateLimiter } from "./rate-limit.ts";

export const TEMP_PASSWORD_TTL_MS = 24 * 3600 * 1000;
export const TEMP_PASSWORDS_DDL = `CREATE TABLE IF NOT EXISTS _burrow_temp_passwords (user_schema TEXT NOT NULL, username TEXT NOT NULL, hash TEXT NOT NULL, expires INTEGER NOT NULL, PRIMARY KEY (user_schema, username)) STRICT`;
const TEMP_REQUIRED = "Temporary password reset required.";
const MAX_FIELD = 1024;

export interface RateLimits {
  ipPerMinute: number;
  failedLoginsPerAccount: number;
  failedLoginWindowMinutes: number;
}

const denied = (description = "Invalid username or password") => new ApiError(401, "access_denied", { description });

export interface AccountDeps {
  sessions(ctx: ApiContext): Sessions;
  limiter: RateLimiter;
  mailer: Mailer;
  limits(ctx: ApiContext): RateLimits;
  appName(ctx: ApiContext): string;
}

export class Accounts {
  constructor(private readonly deps: AccountDeps) {}

  /** The user schema an endpoint is called on; 404 when the schema is not one. */
  userSchema(ctx: ApiContext, name: string): CompiledSchema {
    const s = ctx.schemas.schemas.get(name);
    if (!s?.def.user) throw new ApiError(404, `${name} is not a user schema`);
    return s;
  }

  /** Per-IP limit shared by every login, token, password and social endpoint. */
  limitIp(ctx: ApiContext, ip: string | null): void {
    const r = this.deps.limiter.hit(`${ctx.env}|ip|${ip ?? "unknown"}`, this.deps.limits(ctx).ipPerMinute, 60_000);
    if (!r.ok) throw tooManyRequests(r.retryAfter);
  }

  private accountKey(ctx: ApiContext, s: CompiledSchema, username: string): string {
    return `${ctx.env}|fail|${s.name}|${username}`;
  }

  /** The user's JSON (never the password), as GET /<schema>/<key> would answer it. */
  private async userJson(ctx: ApiContext, s: CompiledSchema, username: string): Promise<string> {
    const rs = await ctx.db.execute({ sql: s.sqlGet, args: [username] });
    if (!rs.rows.length) throw denied();
    return rs.rows[0]!.j as string;
  }

  private async tokenResponse(ctx: ApiContext, s: CompiledSchema, username: string, tokens: Tokens): Promise<string> {
    const user = await this.userJson(ctx, s, username);
    const head = JSON.stringify({ ...tokens, mac_algorithm: "hmac-sha-1", token_type: "mac" });
    return `${head.slice(0, -1)},"service":{"user":${user}}}`;
  }

  private async setPassword(ctx: ApiContext, s: CompiledSchema, username: string, password: string): Promise<void> {
    await ctx.db.batch(
      [
        { sql: `UPDATE ${s.table} SET ${q(s.passwordField!)} = ?, "lastmoddate" = max("lastmoddate" + 1, ?) WHERE ${q(s.pk)} = ?`, args: [await hashPassword(password), Date.now(), username] },
        { sql: `DELETE FROM _burrow_temp_passwords WHERE user_schema = ? AND username = ?`, args: [s.name, username] },
      ],
      "write",
    );
  }

  /** POST (or GET) /<userSchema>/accessToken. */
  async login(ctx: ApiContext, s: CompiledSchema, params: Record<string, string>, ip: string | null): Promise<string> {
    this.limitIp(ctx, ip);
    if (params.token_type !== undefined && params.token_type !== "mac") throw new ApiError(400, "unsupported_token_type", { description: "token_type must be mac" });
    if (params.mac_algorithm !== undefined && !["hmac-sha-1", "hmac-sha1"].includes(params.mac_algorithm)) throw new ApiError(400, "invalid_request", { description: "mac_algorithm must be hmac-sha-1" });
    const username = params[s.pk] ?? params.username;
    const password = params[s.passwordField!] ?? params.password;
    if (!username || !password || username.length > 256 || password.length > MAX_FIELD) throw denied();
    const key = this.accountKey(ctx, s, username);
    const limits = this.deps.limits(ctx);
    const blocked = this.deps.limiter.blocked(key, limits.failedLoginsPerAccount);
    if (!blocked.ok) throw tooManyRequests(blocked.retryAfter);

    const rs = await ctx.db.execute({ sql: `SELECT ${q(s.passwordField!)} AS h FROM ${s.table} WHERE ${q(s.pk)} = ?`, args: [username] });
    const hash = rs.rows[0]?.h as string | null | undefined;
    let ok = hash ? await verifyPassword(password, hash) : await verifyNothing(password);
    if (!ok && rs.rows.length) {
      const temp = await ctx.db.execute({ sql: `SELECT hash FROM _burrow_temp_passwords WHERE user_schema = ? AND username = ? AND expires > ?`, args: [s.name, username, Date.now()] });
      if (temp.rows.length && (await verifyPassword(password, temp.rows[0]!.hash as string))) {
        const next = params.new_password;
        if (!next) throw new ApiError(401, TEMP_REQUIRED, { description: TEMP_REQUIRED });
        if (next.length > MAX_FIELD) throw new ApiError(400, "invalid_request", { description: "new_password is too long" });
        await this.setPassword(ctx, s, username, next);
        ok = true;
      }
    }
    if (!ok) {
      this.deps.limiter.hit(key, limits.failedLoginsPerAccount, limits.failedLoginWindowMinutes * 60_000);
      throw denied();
    }
    this.deps.limiter.reset(key);
    const tokens = await this.deps.sessions(ctx).issue(s.name, username, s.def.user?.singleSession === true);
    return this.tokenResponse(ctx, s, username, tokens);
  }

  /** POST /<userSchema>/refreshToken. */
  async refresh(ctx: ApiContext, s: CompiledSchema, params: Record<string, string>, ip: string | null): Promise<string> {
    this.limitIp(ctx, ip);
    if (params.grant_type !== undefined && params.grant_type !== "refresh_token") throw new ApiError(400, "unsupported_grant_type", { description: "grant_type must be refresh_token" });
    const token = params.refresh_token;
    if (!token) throw new ApiError(401, "invalid_grant", { description: "refresh_token is missing" });
    const r = await this.deps.sessions(ctx).refresh(token);
    if (r === null) throw new ApiError(401, "invalid_grant", { description: "the refresh token is unknown or expired" });
    if (r === "reused") throw new ApiError(401, "invalid_grant", { description: "the refresh token was already used; every token of this login is revoked" });
    if (r.schema !== s.name) throw new ApiError(401, "invalid_grant", { description: `the refresh token does not belong to ${s.name}` });
    return this.tokenResponse(ctx, s, r.username, r.tokens);
  }

  private signedIn(ctx: ApiContext, s: CompiledSchema): { username: string; family: string } {
    const p = ctx.principal;
    if (p.kind !== "user" || p.schema !== s.name) throw new ApiError(401, "Insufficient authorization");
    return p;
  }

  /** GET /<userSchema>/logout: revokes the access and refresh tokens of this login. */
  async logout(ctx: ApiContext, s: CompiledSchema): Promise<void> {
    await this.deps.sessions(ctx).revokeFamily(this.signedIn(ctx, s).family);
  }

  /** GET /<userSchema>/loggedInUser. */
  async loggedInUser(ctx: ApiContext, s: CompiledSchema): Promise<string> {
    const { username } = this.signedIn(ctx, s);
    const rs = await ctx.db.execute({ sql: s.sqlGet, args: [username] });
    if (!rs.rows.length) throw new ApiError(404, "object instance does not exist");
    return rs.rows[0]!.j as string;
  }

  /** POST /<userSchema>/forgotPassword: a temporary password, valid 24 hours, mailed to the user's email field. */
  async forgotPassword(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<void> {
    this.limitIp(ctx, ip);
    const u = s.def.user!;
    if (!u.forgotPassword || !u.email) throw new ApiError(401, `the forgot password method is not enabled for ${s.name}`);
    const username = body.username ?? body[s.pk];
    if (typeof username !== "string" || username.length === 0 || username.length > 256) throw new ApiError(401, "send {\"username\": <key>}");
    const rs = await ctx.db.execute({ sql: `SELECT ${q(u.email)} AS email FROM ${s.table} WHERE ${q(s.pk)} = ?`, args: [username] });
    if (!rs.rows.length) throw new ApiError(401, "no such user");
    const email = rs.rows[0]!.email as string | null;
    if (!email) throw new ApiError(401, "the user has no email address");
    const temp = randomToken(12);
    await ctx.db.execute({
      sql: `INSERT INTO _burrow_temp_passwords (user_schema, username, hash, expires) VALUES (?, ?, ?, ?)
            ON CONFLICT(user_schema, username) DO UPDATE SET hash = excluded.hash, expires = excluded.expires`,
      args: [s.name, username, await hashPassword(temp), Date.now() + TEMP_PASSWORD_TTL_MS],
    });
    const app = this.deps.appName(ctx);
    await this.deps.mailer.send(ctx.env, {
      to: email,
      subject: `${app}: password reset`,
      text: `Hello ${username},\n\nyour temporary password for ${app} is: ${temp}\n\nIt is valid for 24 hours. Log in with it and choose a new password.\nYour old password keeps working until then.\n`,
    });
  }

  /** POST /<userSchema>/resetPassword: {old: {password}, new: {password}} for the signed-in user. */
  async resetPassword(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<void> {
    this.limitIp(ctx, ip);
    const { username } = this.signedIn(ctx, s);
    const old = (body.old as Record<string, unknown> | undefined)?.password;
    const next = (body.new as Record<string, unknown> | undefined)?.password;
    if (typeof old !== "string" || typeof next !== "string" || next.length === 0 || next.length > MAX_FIELD || old.length > MAX_FIELD)
      throw new ApiError(401, "send {\"old\": {\"password\": ...}, \"new\": {\"password\": ...}}");
    const key = this.accountKey(ctx, s, username);
    const limits = this.deps.limits(ctx);
    const blocked = this.deps.limiter.blocked(key, limits.failedLoginsPerAccount);
    if (!blocked.ok) throw tooManyRequests(blocked.retryAfter);
    const rs = await ctx.db.execute({ sql: `SELECT ${q(s.passwordField!)} AS h FROM ${s.table} WHERE ${q(s.pk)} = ?`, args: [username] });
    const hash = rs.rows[0]?.h as string | undefined;
    if (!hash || !(await verifyPassword(old, hash))) {
      this.deps.limiter.hit(key, limits.failedLoginsPerAccount, limits.failedLoginWindowMinutes * 60_000);
      throw new ApiError(401, "the old password is wrong");
    }
    await this.setPassword(ctx, s, username, next);
  }
}
