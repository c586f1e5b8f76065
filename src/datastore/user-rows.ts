// The rows accounts read and write in an environment's database: a user schema's row (its JSON, password
// hash, email field) and the temporary passwords of forgot-password (_burrow_temp_passwords). Implements the
// UserRows port that src/auth/accounts.ts declares; no access control here (accounts decides who may do what).

import { q } from "../db/sql.ts";
import type { UserRows } from "../auth/accounts.ts";
import type { ApiContext } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { fullViewer, objectSql } from "./viewer.ts";
import { EMAIL_VERIFIED } from "../schema/definition.ts";

export const TEMP_PASSWORDS_DDL = `CREATE TABLE IF NOT EXISTS _burrow_temp_passwords (user_schema TEXT NOT NULL, username TEXT NOT NULL, hash TEXT NOT NULL, expires INTEGER NOT NULL, PRIMARY KEY (user_schema, username)) STRICT`;

const byKey = (s: CompiledSchema) => `WHERE ${q(s.pk)} = ?`;

/** The user's own object (every field: accounts answer it to that user only, or use it to tell that it exists). */
const own = (ctx: ApiContext, s: CompiledSchema, qualifier: "t" | null) => objectSql(ctx, s, qualifier, fullViewer(ctx));

export const userRows: UserRows = {
  async forLogin(ctx: ApiContext, s: CompiledSchema, username: string) {
    const j = own(ctx, s, "t");
    const rs = await ctx.db.execute({
      sql: `SELECT ${j.sql} AS j, t.${q(s.passwordField!)} AS h FROM ${s.table} AS t WHERE t.${q(s.pk)} = ?`,
      args: [...j.args, username],
    });
    const row = rs.rows[0];
    return row ? { json: row.j as string, hash: (row.h as string | null) ?? null } : null;
  },

  async json(ctx: ApiContext, s: CompiledSchema, username: string) {
    const j = own(ctx, s, "t");
    const rs = await ctx.db.execute({
      sql: `SELECT ${j.sql} AS j FROM ${s.table} AS t WHERE t.${q(s.pk)} = ?`,
      args: [...j.args, username],
    });
    return (rs.rows[0]?.j as string | undefined) ?? null;
  },

  async passwordHash(ctx: ApiContext, s: CompiledSchema, username: string) {
    const rs = await ctx.db.execute({ sql: `SELECT ${q(s.passwordField!)} AS h FROM ${s.table} ${byKey(s)}`, args: [username] });
    return (rs.rows[0]?.h as string | null | undefined) ?? null;
  },

  async email(ctx: ApiContext, s: CompiledSchema, username: string) {
    const rs = await ctx.db.execute({ sql: `SELECT ${q(s.def.user!.email!)} AS email FROM ${s.table} ${byKey(s)}`, args: [username] });
    const row = rs.rows[0];
    return row ? { email: (row.email as string | null) ?? null } : null;
  },

  async setPasswordHash(ctx: ApiContext, s: CompiledSchema, username: string, hash: string, keepFamily: string | null) {
    const j = own(ctx, s, null);
    const [updated] = await ctx.db.batch(
      [
        {
          sql: `UPDATE ${s.table} SET ${q(s.passwordField!)} = ?, "lastmoddate" = max("lastmoddate" + 1, ?) ${byKey(s)} RETURNING ${j.sql} AS j`,
          args: [hash, Date.now(), username, ...j.args],
        },
        { sql: `DELETE FROM _burrow_temp_passwords WHERE user_schema = ? AND username = ?`, args: [s.name, username] },
        // A new password ends every other session of the user in the same transaction.
        {
          sql: `DELETE FROM _burrow_sessions WHERE user_schema = ? AND username = ? AND family IS NOT ?`,
          args: [s.name, username, keepFamily],
        },
      ],
      "write",
    );
    return (updated!.rows[0]?.j as string | undefined) ?? null;
  },

  async tempPasswordHash(ctx: ApiContext, s: CompiledSchema, username: string, now: number) {
    const rs = await ctx.db.execute({
      sql: `SELECT hash FROM _burrow_temp_passwords WHERE user_schema = ? AND username = ? AND expires > ?`,
      args: [s.name, username, now],
    });
    return (rs.rows[0]?.hash as string | undefined) ?? null;
  },

  async setEmailVerified(ctx: ApiContext, s: CompiledSchema, username: string, email: string) {
    const j = own(ctx, s, null);
    const rs = await ctx.db.execute({
      sql: `UPDATE ${s.table} SET ${q(EMAIL_VERIFIED)} = 1, "lastmoddate" = max("lastmoddate" + 1, ?) ${byKey(s)} AND ${q(s.def.user!.email!)} = ? RETURNING ${j.sql} AS j`,
      args: [Date.now(), username, email, ...j.args],
    });
    return (rs.rows[0]?.j as string | undefined) ?? null;
  },

  async setTempPasswordHash(ctx: ApiContext, s: CompiledSchema, username: string, hash: string, expires: number) {
    await ctx.db.execute({
      sql: `INSERT INTO _burrow_temp_passwords (user_schema, username, hash, expires) VALUES (?, ?, ?, ?)
            ON CONFLICT(user_schema, username) DO UPDATE SET hash = excluded.hash, expires = excluded.expires`,
      args: [s.name, username, hash, expires],
    });
  },
};
