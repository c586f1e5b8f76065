// Links between users and provider accounts, in each environment's database (_burrow_social_links): one row per
// (user schema, provider, provider user id), naming the user and keeping the credential later calls need (the
// Graph token, the OAuth 1.0a token and secret). At most one account per provider and user; an account links to
// one user per user schema. Credentials never leave this table except towards their provider.

import type { Client, InStatement } from "@libsql/core/api";
import type { ApiContext } from "../request-context.ts";

export const SOCIAL_LINKS_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_social_links (user_schema TEXT NOT NULL, provider TEXT NOT NULL, provider_id TEXT NOT NULL, username TEXT NOT NULL,
     credentials TEXT NOT NULL, linked INTEGER NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (user_schema, provider, provider_id)) STRICT, WITHOUT ROWID`,
  `CREATE UNIQUE INDEX IF NOT EXISTS _burrow_social_links_user ON _burrow_social_links (user_schema, username, provider)`,
];

export type Credentials = Record<string, string>;

export interface LinkRow {
  providerId: string;
  username: string;
  credentials: Credentials;
}

const db = (ctx: ApiContext): Client => ctx.db;

function credentialsOf(text: unknown): Credentials {
  try {
    const v = JSON.parse(String(text));
    return typeof v === "object" && v !== null ? (v as Credentials) : {};
  } catch {
    return {};
  }
}

export class SocialLinks {
  /** The user linked to a provider account, or null. */
  async byAccount(ctx: ApiContext, schema: string, provider: string, providerId: string): Promise<LinkRow | null> {
    const rs = await db(ctx).execute({
      sql: `SELECT username, credentials FROM _burrow_social_links WHERE user_schema = ? AND provider = ? AND provider_id = ?`,
      args: [schema, provider, providerId],
    });
    const row = rs.rows[0];
    return row ? { providerId, username: row.username as string, credentials: credentialsOf(row.credentials) } : null;
  }

  /** The user's account of a provider, or null. */
  async byUser(ctx: ApiContext, schema: string, provider: string, username: string): Promise<LinkRow | null> {
    const rs = await db(ctx).execute({
      sql: `SELECT provider_id, credentials FROM _burrow_social_links WHERE user_schema = ? AND username = ? AND provider = ?`,
      args: [schema, username, provider],
    });
    const row = rs.rows[0];
    return row ? { providerId: row.provider_id as string, username, credentials: credentialsOf(row.credentials) } : null;
  }

  /** The providers a user is linked to. */
  async providersOf(ctx: ApiContext, schema: string, username: string): Promise<string[]> {
    const rs = await db(ctx).execute({
      sql: `SELECT provider FROM _burrow_social_links WHERE user_schema = ? AND username = ? ORDER BY provider`,
      args: [schema, username],
    });
    return rs.rows.map((r) => r.provider as string);
  }

  /**
   * The link of a user created in the same transaction: inserted only when the statement before it changed a row
   * (the user's insert, which does nothing on a taken key). An account already linked fails the transaction.
   */
  insertAfterCreate(schema: string, provider: string, providerId: string, username: string, credentials: Credentials): InStatement {
    const now = Date.now();
    return {
      sql: `INSERT INTO _burrow_social_links (user_schema, provider, provider_id, username, credentials, linked, used) SELECT ?, ?, ?, ?, ?, ?, ? WHERE changes() = 1`,
      args: [schema, provider, providerId, username, JSON.stringify(credentials), now, now],
    };
  }

  /**
   * Link an account to a user, replacing the user's earlier account of that provider. False (and nothing changed)
   * when the account is linked to another user.
   */
  async link(
    ctx: ApiContext,
    schema: string,
    provider: string,
    providerId: string,
    username: string,
    credentials: Credentials,
  ): Promise<boolean> {
    const now = Date.now();
    const results = await db(ctx)
      .batch(
        [
          {
            sql: `DELETE FROM _burrow_social_links WHERE user_schema = ? AND provider = ? AND username = ? AND provider_id <> ?
                  AND NOT EXISTS (SELECT 1 FROM _burrow_social_links WHERE user_schema = ? AND provider = ? AND provider_id = ? AND username <> ?)`,
            args: [schema, provider, username, providerId, schema, provider, providerId, username],
          },
          {
            sql: `INSERT INTO _burrow_social_links (user_schema, provider, provider_id, username, credentials, linked, used) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_schema, provider, provider_id) DO UPDATE SET credentials = excluded.credentials, used = excluded.used WHERE username = excluded.username
                RETURNING username`,
            args: [schema, provider, providerId, username, JSON.stringify(credentials), now, now],
          },
        ],
        "write",
      )
      .catch((e: { code?: string }) => {
        if (e.code === "SQLITE_CONSTRAINT") return null; // linked to another user, found by the other unique index
        throw e;
      });
    return results !== null && results[1]!.rows.length === 1;
  }

  /** Keep the credential of the latest login (the one later user-info and post calls use). */
  async touch(ctx: ApiContext, schema: string, provider: string, providerId: string, credentials: Credentials): Promise<void> {
    await db(ctx).execute({
      sql: `UPDATE _burrow_social_links SET credentials = ?, used = ? WHERE user_schema = ? AND provider = ? AND provider_id = ?`,
      args: [JSON.stringify(credentials), Date.now(), schema, provider, providerId],
    });
  }

  /** Forget a link whose user no longer exists (its user schema was dropped and made again). */
  async removeAccount(ctx: ApiContext, schema: string, provider: string, providerId: string): Promise<void> {
    await db(ctx).execute({
      sql: `DELETE FROM _burrow_social_links WHERE user_schema = ? AND provider = ? AND provider_id = ?`,
      args: [schema, provider, providerId],
    });
  }

  /** Remove the user's account of a provider; false when there was none. */
  async unlink(ctx: ApiContext, schema: string, provider: string, username: string): Promise<boolean> {
    const rs = await db(ctx).execute({
      sql: `DELETE FROM _burrow_social_links WHERE user_schema = ? AND username = ? AND provider = ?`,
      args: [schema, username, provider],
    });
    return rs.rowsAffected > 0;
  }
}
