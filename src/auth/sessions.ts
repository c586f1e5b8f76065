// OAuth 2.0 MAC sessions of an environment: access tokens (1 hour) with their MAC keys, refresh tokens that
// rotate on every use (reusing a rotated one revokes its whole family), logout and single-session revocation.
// Only SHA-256 digests of tokens are stored; the MAC key is stored, since verifying needs it.

import type { Client, InStatement } from "@libsql/core/api";

export const ACCESS_TTL_S = 3600;
export const REFRESH_TTL_S = 365 * 24 * 3600;

export const SESSIONS_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_sessions (id TEXT PRIMARY KEY, mac_key TEXT NOT NULL, user_schema TEXT NOT NULL, username TEXT NOT NULL, family TEXT NOT NULL, expires INTEGER NOT NULL, created INTEGER NOT NULL) STRICT`,
  `CREATE INDEX IF NOT EXISTS _burrow_sessions_user ON _burrow_sessions (user_schema, username)`,
  `CREATE INDEX IF NOT EXISTS _burrow_sessions_family ON _burrow_sessions (family)`,
  `CREATE TABLE IF NOT EXISTS _burrow_refresh (id TEXT PRIMARY KEY, family TEXT NOT NULL, user_schema TEXT NOT NULL, username TEXT NOT NULL, expires INTEGER NOT NULL, used INTEGER) STRICT`,
  `CREATE INDEX IF NOT EXISTS _burrow_refresh_family ON _burrow_refresh (family)`,
  `CREATE INDEX IF NOT EXISTS _burrow_refresh_user ON _burrow_refresh (user_schema, username)`,
];

export interface Session {
  macKey: string;
  schema: string;
  username: string;
  family: string;
  expires: number;
}

export interface Tokens {
  access_token: string;
  mac_key: string;
  refresh_token: string;
  expires_in: number;
}

const ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** 32 random alphanumerics (behaviour.md §11.21), from a CSPRNG without modulo bias. */
export function randomToken(length = 32): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < 248 && out.length < length) out += ALPHANUM[b % 62];
    }
  }
  return out;
}

export function digest(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

export class Sessions {
  constructor(private readonly db: Client) {}

  private issueStatements(schema: string, username: string, family: string, now: number): { tokens: Tokens; stmts: InStatement[] } {
    const tokens: Tokens = { access_token: randomToken(), mac_key: randomToken(), refresh_token: randomToken(), expires_in: ACCESS_TTL_S };
    return {
      tokens,
      stmts: [
        { sql: `INSERT INTO _burrow_sessions (id, mac_key, user_schema, username, family, expires, created) VALUES (?, ?, ?, ?, ?, ?, ?)`, args: [digest(tokens.access_token), tokens.mac_key, schema, username, family, now + ACCESS_TTL_S * 1000, now] },
        { sql: `INSERT INTO _burrow_refresh (id, family, user_schema, username, expires, used) VALUES (?, ?, ?, ?, ?, NULL)`, args: [digest(tokens.refresh_token), family, schema, username, now + REFRESH_TTL_S * 1000] },
      ],
    };
  }

  /** A new session (new refresh family). `single` revokes every other session of the user first. */
  async issue(schema: string, username: string, single: boolean): Promise<Tokens> {
    const now = Date.now();
    const { tokens, stmts } = this.issueStatements(schema, username, crypto.randomUUID(), now);
    await this.db.batch([...(single ? this.revokeUserStatements(schema, username) : []), { sql: `DELETE FROM _burrow_sessions WHERE expires < ?`, args: [now] }, ...stmts], "write");
    return tokens;
  }

  /** The live session of an access token, or null when unknown, expired or revoked. */
  async lookup(accessToken: string): Promise<Session | null> {
    if (accessToken.length === 0 || accessToken.length > 256) return null;
    const rs = await this.db.execute({ sql: `SELECT mac_key, user_schema, username, family, expires FROM _burrow_sessions WHERE id = ?`, args: [digest(accessToken)] });
    const r = rs.rows[0];
    if (!r || Number(r.expires) <= Date.now()) return null;
    return { macKey: r.mac_key as string, schema: r.user_schema as string, username: r.username as string, family: r.family as string, expires: Number(r.expires) };
  }

  /**
   * Exchange a refresh token for a new token set in the same family. The old refresh token and the family's
   * access tokens stop working. Presenting a refresh token that was already used revokes the whole family.
   */
  async refresh(refreshToken: string): Promise<{ tokens: Tokens; schema: string; username: string } | "reused" | null> {
    if (refreshToken.length === 0 || refreshToken.length > 256) return null;
    const id = digest(refreshToken);
    const tx = await this.db.transaction("write");
    try {
      const rs = await tx.execute({ sql: `SELECT family, user_schema, username, expires, used FROM _burrow_refresh WHERE id = ?`, args: [id] });
      const r = rs.rows[0];
      const now = Date.now();
      if (!r || Number(r.expires) <= now) return null;
      const family = r.family as string;
      if (r.used !== null) {
        await tx.batch(this.revokeFamilyStatements(family));
        await tx.commit();
        return "reused";
      }
      const { tokens, stmts } = this.issueStatements(r.user_schema as string, r.username as string, family, now);
      await tx.batch([
        { sql: `UPDATE _burrow_refresh SET used = ? WHERE id = ?`, args: [now, id] },
        { sql: `DELETE FROM _burrow_sessions WHERE family = ?`, args: [family] },
        ...stmts,
      ]);
      await tx.commit();
      return { tokens, schema: r.user_schema as string, username: r.username as string };
    } finally {
      tx.close();
    }
  }

  private revokeFamilyStatements(family: string): InStatement[] {
    return [
      { sql: `DELETE FROM _burrow_sessions WHERE family = ?`, args: [family] },
      { sql: `DELETE FROM _burrow_refresh WHERE family = ?`, args: [family] },
    ];
  }

  private revokeUserStatements(schema: string, username: string): InStatement[] {
    return [
      { sql: `DELETE FROM _burrow_sessions WHERE user_schema = ? AND username = ?`, args: [schema, username] },
      { sql: `DELETE FROM _burrow_refresh WHERE user_schema = ? AND username = ?`, args: [schema, username] },
    ];
  }

  async revokeFamily(family: string): Promise<void> {
    await this.db.batch(this.revokeFamilyStatements(family), "write");
  }

  async revokeUser(schema: string, username: string): Promise<void> {
    await this.db.batch(this.revokeUserStatements(schema, username), "write");
  }
}
