// The TOTP second factor of user accounts: enrolment (pending until a first code confirms it, which hands out ten
// recovery codes), its check after a password login (the SecondFactor port: a 5-minute, single-use mfa_token), the
// accessToken grant `mfa` that completes such a login with a code or a recovery code, turning it off, and the
// admin's view and reset. Rows live in each environment's database (_burrow_mfa, _burrow_mfa_tokens), so every
// node sees them; a code's step and a recovery code are taken with compare-and-set updates, so no code is good twice.
// Wrong codes count against the user's failed-login budget (and a budget of their own that a password does not refill).

import { conflict, badRequest, oauthError, tooManyRequests, unauthorized } from "../errors.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { Accounts, RateLimits, UserRows } from "./accounts.ts";
import type { Credential, SecondFactor } from "./login-flow.ts";
import type { RateLimiter } from "./rate-limit.ts";
import { randomToken } from "./sessions.ts";
import { checkCode, newSecret, otpauthUrl } from "./totp.ts";

export const MFA_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_mfa (user_schema TEXT NOT NULL, username TEXT NOT NULL, secret TEXT NOT NULL, state TEXT NOT NULL,
     last_step INTEGER, recovery TEXT NOT NULL DEFAULT '[]', created INTEGER NOT NULL, PRIMARY KEY (user_schema, username)) STRICT, WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS _burrow_mfa_tokens (digest TEXT NOT NULL PRIMARY KEY, user_schema TEXT NOT NULL, username TEXT NOT NULL,
     expires INTEGER NOT NULL) STRICT, WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS _burrow_mfa_tokens_user ON _burrow_mfa_tokens (user_schema, username)`,
];

/** How long an mfa_token (a password login waiting for its second factor) is good for. */
export const MFA_TOKEN_TTL_MS = 5 * 60_000;
export const RECOVERY_CODES = 10;
const RECOVERY_LENGTH = 10;
/** 32 letters and digits without 0/O and 1/I: 5 bits a character, 50 bits a code. */
const RECOVERY_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ";

export type TotpState = "off" | "pending" | "on";
export interface MfaStatus {
  totp: TotpState;
  recovery_codes_left: number;
}

type Outcome = "ok" | "wrong" | "used";
const REASONS: Record<Exclude<Outcome, "ok">, string> = { wrong: "the code is wrong", used: "code already used" };

interface Row {
  secret: string;
  state: "pending" | "on";
  lastStep: number | null;
  /** The JSON text of the recovery codes' SHA-256 digests (a used one after "-"), as stored (the compare-and-set value). */
  recoveryText: string;
  recovery: string[];
}

interface SecondFactorDeps {
  accounts: Pick<Accounts, "takeLoginAttempt" | "resetLoginAttempts">;
  users: Pick<UserRows, "json">;
  limiter: RateLimiter;
  /** An environment's settings: rateLimits (the failed-login budget) and app.name (the issuer of otpauth URLs). */
  settings: { get(env: EnvName): { [key: string]: unknown } };
  now?: () => number;
}

/** A new recovery code: 10 characters of RECOVERY_ALPHABET, uniformly random. */
export function newRecoveryCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(RECOVERY_LENGTH));
  return Array.from(bytes, (b) => RECOVERY_ALPHABET[b & 31]).join("");
}

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
/** A code as typed: spaces and dashes dropped, letters upper case. */
const normalize = (code: string) => code.replace(/[\s-]/g, "").toUpperCase();

async function readRow(ctx: ApiContext, schema: string, username: string): Promise<Row | null> {
  const rs = await ctx.db.execute({
    sql: `SELECT secret, state, last_step, recovery FROM _burrow_mfa WHERE user_schema = ? AND username = ?`,
    args: [schema, username],
  });
  const r = rs.rows[0];
  if (!r) return null;
  const recoveryText = r.recovery as string;
  let recovery: string[] = [];
  try {
    const v = JSON.parse(recoveryText);
    if (Array.isArray(v)) recovery = v.filter((x): x is string => typeof x === "string");
  } catch {}
  return {
    secret: r.secret as string,
    state: r.state === "on" ? "on" : "pending",
    lastStep: r.last_step === null ? null : Number(r.last_step),
    recoveryText,
    recovery,
  };
}

/** Whether a user has TOTP on, pending or off, and how many recovery codes are unused. */
export async function mfaStatus(ctx: ApiContext, schema: string, username: string): Promise<MfaStatus> {
  const row = await readRow(ctx, schema, username);
  return {
    totp: row?.state ?? "off",
    recovery_codes_left: row?.state === "on" ? row.recovery.filter((d) => !d.startsWith("-")).length : 0,
  };
}

/** Remove a user's second factor and pending mfa_tokens (the admin's reset, turning it off); whether there was one. */
export async function resetMfa(ctx: ApiContext, schema: string, username: string): Promise<boolean> {
  const [rs] = await ctx.db.batch(
    [
      { sql: `DELETE FROM _burrow_mfa WHERE user_schema = ? AND username = ?`, args: [schema, username] },
      { sql: `DELETE FROM _burrow_mfa_tokens WHERE user_schema = ? AND username = ?`, args: [schema, username] },
    ],
    "write",
  );
  return rs!.rowsAffected > 0;
}

/** The `code` member of a body: a string of at most 32 characters, else 400. */
export function codeOf(body: Record<string, unknown>): string {
  const c = body.code;
  if (typeof c !== "string" || c.trim().length === 0 || c.length > 32) throw badRequest('send {"code": "<6 digits, or a recovery code>"}');
  return c;
}

export class TotpFactor implements SecondFactor {
  private readonly now: () => number;

  constructor(private readonly deps: SecondFactorDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** After a first factor: an mfa_token when the user has TOTP on, else null. Expired tokens are swept here. */
  async challenge(ctx: ApiContext, s: CompiledSchema, username: string): Promise<string | null> {
    if ((await readRow(ctx, s.name, username))?.state !== "on") return null;
    const token = randomToken(32);
    const now = this.now();
    await ctx.db.batch(
      [
        { sql: `DELETE FROM _burrow_mfa_tokens WHERE expires <= ?`, args: [now] },
        {
          sql: `INSERT INTO _burrow_mfa_tokens (digest, user_schema, username, expires) VALUES (?, ?, ?, ?)`,
          args: [sha256(token), s.name, username, now + MFA_TOKEN_TTL_MS],
        },
      ],
      "write",
    );
    return token;
  }

  /** The accessToken grant `mfa` (mfa_token and code): the user the token was given to, proved by the code. */
  readonly grant = async (ctx: ApiContext, s: CompiledSchema, params: Record<string, string>): Promise<Credential> => {
    const token = params.mfa_token;
    const code = params.code;
    if (!token || !code || token.length > 128 || code.length > 32)
      throw oauthError(400, "invalid_request", "send grant_type=mfa with mfa_token and code");
    const digest = sha256(token);
    const rs = await ctx.db.execute({
      sql: `SELECT user_schema, username FROM _burrow_mfa_tokens WHERE digest = ? AND expires > ?`,
      args: [digest, this.now()],
    });
    const t = rs.rows[0];
    if (!t) throw oauthError(401, "invalid_grant", "the mfa_token is unknown, used or expired; log in again");
    if (t.user_schema !== s.name) throw oauthError(401, "invalid_grant", `the mfa_token does not belong to ${s.name}`);
    const username = t.username as string;
    const row = await readRow(ctx, s.name, username);
    if (row?.state !== "on") throw oauthError(401, "invalid_grant", "the second factor was turned off; log in again");
    const outcome = await this.budgeted(ctx, s, username, () => this.useCode(ctx, s.name, username, row, code));
    if (outcome !== "ok") throw oauthError(401, "invalid_grant", REASONS[outcome]);
    // Single use: only the completion whose DELETE removed the token goes on.
    const del = await ctx.db.execute({ sql: `DELETE FROM _burrow_mfa_tokens WHERE digest = ?`, args: [digest] });
    if (del.rowsAffected !== 1) throw oauthError(401, "invalid_grant", "the mfa_token was already used; log in again");
    const user = await this.deps.users.json(ctx, s, username);
    if (user === null) throw oauthError(401, "invalid_grant", "the mfa_token is unknown, used or expired; log in again");
    return { username, user, method: "mfa" };
  };

  /** GET /<userSchema>/mfa: the signed-in user's second factor. */
  status(ctx: ApiContext, s: CompiledSchema): Promise<MfaStatus> {
    return mfaStatus(ctx, s.name, signedIn(ctx, s));
  }

  /** POST /<userSchema>/mfa/totp: a new pending secret (replacing a pending one); 409 when TOTP is on. */
  async enrol(ctx: ApiContext, s: CompiledSchema): Promise<{ secret: string; otpauth_url: string }> {
    const username = signedIn(ctx, s);
    const secret = newSecret();
    const rs = await ctx.db.execute({
      sql: `INSERT INTO _burrow_mfa (user_schema, username, secret, state, last_step, recovery, created) VALUES (?, ?, ?, 'pending', NULL, '[]', ?)
            ON CONFLICT (user_schema, username) DO UPDATE SET secret = excluded.secret, created = excluded.created WHERE state = 'pending'`,
      args: [s.name, username, secret, this.now()],
    });
    if (rs.rowsAffected === 0) throw conflict("TOTP is already on; turn it off first");
    const app = (this.deps.settings.get(ctx.env).app as { name: string }).name;
    return { secret, otpauth_url: otpauthUrl(secret, app, username) };
  }

  /** POST /<userSchema>/mfa/totp/confirm: a current code turns the pending factor on; the recovery codes, shown once. */
  async confirm(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>): Promise<{ recovery_codes: string[] }> {
    const username = signedIn(ctx, s);
    const code = normalize(codeOf(body));
    const row = await readRow(ctx, s.name, username);
    if (!row) throw conflict("no TOTP enrolment is pending; start one with POST mfa/totp");
    if (row.state === "on") throw conflict("TOTP is already on");
    const check = checkCode(row.secret, code, null, this.now());
    if (!check.ok) throw unauthorized(REASONS.wrong);
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    const rs = await ctx.db.execute({
      sql: `UPDATE _burrow_mfa SET state = 'on', last_step = ?, recovery = ? WHERE user_schema = ? AND username = ? AND state = 'pending' AND secret = ?`,
      args: [check.step, JSON.stringify(codes.map(sha256)), s.name, username, row.secret],
    });
    if (rs.rowsAffected !== 1) throw conflict("the enrolment changed meanwhile; start again");
    return { recovery_codes: codes };
  }

  /**
   * DELETE /<userSchema>/mfa/totp: a current code (or an unused recovery code) turns TOTP off; a pending enrolment
   * is dropped without one. 409 when there is none.
   */
  async disable(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>): Promise<void> {
    const username = signedIn(ctx, s);
    const row = await readRow(ctx, s.name, username);
    if (!row) throw conflict("TOTP is off");
    if (row.state === "on") {
      const code = codeOf(body);
      const outcome = await this.budgeted(ctx, s, username, () => this.useCode(ctx, s.name, username, row, code));
      if (outcome !== "ok") throw unauthorized(REASONS[outcome]);
    }
    await resetMfa(ctx, s.name, username);
  }

  /**
   * Check a code within the user's failed-login budget and the second factor's own one (which a correct password
   * does not refill): an attempt is taken from both before the check, a right code gives both back.
   */
  private async budgeted(ctx: ApiContext, s: CompiledSchema, username: string, check: () => Promise<Outcome>): Promise<Outcome> {
    const limits = this.deps.settings.get(ctx.env).rateLimits as RateLimits;
    const own = `${ctx.env}|mfa|${s.name}|${username}`;
    const r = await this.deps.limiter.hit(own, limits.failedLoginsPerAccount, limits.failedLoginWindowMinutes * 60_000);
    if (!r.ok) throw tooManyRequests(r.retryAfter);
    await this.deps.accounts.takeLoginAttempt(ctx, s, username);
    const outcome = await check();
    if (outcome === "ok") {
      await this.deps.limiter.reset(own);
      await this.deps.accounts.resetLoginAttempts(ctx, s, username);
    }
    return outcome;
  }

  /**
   * Take a code: a 6-digit TOTP code of a step after the last one accepted (that step becomes the last), or an
   * unused recovery code (removed). Compare-and-set updates make two requests with the same code agree on one.
   */
  private async useCode(ctx: ApiContext, schema: string, username: string, row: Row, typed: string): Promise<Outcome> {
    const code = normalize(typed);
    if (/^\d{6}$/.test(code)) {
      const check = checkCode(row.secret, code, row.lastStep, this.now());
      if (!check.ok) return check.reason;
      const rs = await ctx.db.execute({
        sql: `UPDATE _burrow_mfa SET last_step = ? WHERE user_schema = ? AND username = ? AND state = 'on' AND secret = ?
                AND (last_step IS NULL OR last_step < ?)`,
        args: [check.step, schema, username, row.secret, check.step],
      });
      return rs.rowsAffected === 1 ? "ok" : "used";
    }
    // A used recovery code stays in the list, marked with "-", so that a second use says so.
    const digest = sha256(code);
    let current = row;
    for (let tries = 0; tries < 3; tries++) {
      const at = current.recovery.indexOf(digest);
      if (at < 0) return current.recovery.includes(`-${digest}`) ? "used" : "wrong";
      const next = current.recovery.with(at, `-${digest}`);
      const rs = await ctx.db.execute({
        sql: `UPDATE _burrow_mfa SET recovery = ? WHERE user_schema = ? AND username = ? AND state = 'on' AND recovery = ?`,
        args: [JSON.stringify(next), schema, username, current.recoveryText],
      });
      if (rs.rowsAffected === 1) return "ok";
      // Another code was taken meanwhile: look again.
      const again = await readRow(ctx, schema, username);
      if (again?.state !== "on") return "wrong";
      current = again;
    }
    return "used";
  }
}

/** The username of the caller signed in to `s`, else 401. */
function signedIn(ctx: ApiContext, s: CompiledSchema): string {
  const p = ctx.principal;
  if (p.kind !== "user" || p.schema !== s.name) throw unauthorized();
  return p.username;
}
