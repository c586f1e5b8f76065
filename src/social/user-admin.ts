// What the admin API does to one user account, as the server: set its password (as a reset does: a new argon2id
// hash, any temporary password dropped), revoke every session (MAC tokens and cookie sessions), list and remove
// its provider links (never their credentials). Here in src/social, the lowest layer that sees user rows
// (datastore), sessions (auth) and social links.

import { hashPassword } from "../auth/passwords.ts";
import type { Sessions } from "../auth/sessions.ts";
import { userRows } from "../datastore/user-rows.ts";
import type { ApiContext } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { SocialLinks } from "./social-links.ts";

/** The password rule of a user schema's password field (as creating a user applies it). */
export const USER_PASSWORD_MAX = 1024;

export interface LinkedAccount {
  /** social1, social2, aggregator or oidc:<name>. */
  provider: string;
  /** The provider's id of the account. */
  subject: string;
  /** When it was linked, and when it last signed in (ms). */
  linked: number;
  used: number;
}

/** Why a password cannot be a user's, or null. */
export function userPasswordProblem(password: unknown): string | null {
  return typeof password === "string" && password.length > 0 && password.length <= USER_PASSWORD_MAX
    ? null
    : `password must be a non-empty string of at most ${USER_PASSWORD_MAX} characters`;
}

const links = new SocialLinks();

export async function userExists(ctx: ApiContext, s: CompiledSchema, username: string): Promise<boolean> {
  return (await userRows.json(ctx, s, username)) !== null;
}

/** Set a checked password, ending every session of the user; false when there is no such user. */
export async function setUserPassword(
  ctx: ApiContext,
  sessions: Sessions,
  s: CompiledSchema,
  username: string,
  password: string,
): Promise<boolean> {
  const set = (await userRows.setPasswordHash(ctx, s, username, await hashPassword(password), null)) !== null;
  sessions.forgetUsers(s.name, [username]);
  return set;
}

/** Revoke every session of the user; how many there were. */
export async function revokeUserSessions(ctx: ApiContext, sessions: Sessions, schema: string, username: string): Promise<number> {
  const rs = await ctx.db.execute({
    sql: `SELECT count(*) AS n FROM _burrow_sessions WHERE user_schema = ? AND username = ?`,
    args: [schema, username],
  });
  await sessions.revokeUser(schema, username);
  return Number(rs.rows[0]?.n ?? 0);
}

/** The user's provider accounts, by provider. */
export async function linkedAccounts(ctx: ApiContext, schema: string, username: string): Promise<LinkedAccount[]> {
  const rs = await ctx.db.execute({
    sql: `SELECT provider, provider_id, linked, used FROM _burrow_social_links WHERE user_schema = ? AND username = ? ORDER BY provider`,
    args: [schema, username],
  });
  return rs.rows.map((r) => ({
    provider: r.provider as string,
    subject: r.provider_id as string,
    linked: Number(r.linked),
    used: Number(r.used),
  }));
}

/** Remove the user's account of a provider; false when there was none. */
export function unlinkAccount(ctx: ApiContext, schema: string, username: string, provider: string): Promise<boolean> {
  return links.unlink(ctx, schema, provider, username);
}
