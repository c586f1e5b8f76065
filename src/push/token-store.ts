// Registered device tokens and the expired-token list of one environment, in that environment's database:
// register (keep or overwrite the user link), remove, tokens per user, and expiring a token a provider
// refused (it leaves the registry and joins the expired list with the time).

import type { Client, InStatement } from "@libsql/core/api";
import type { TokenType } from "./tokens.ts";

export const PUSH_TOKENS_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_push_tokens (type TEXT NOT NULL, token TEXT NOT NULL, user TEXT, created INTEGER NOT NULL,
     PRIMARY KEY (type, token)) STRICT, WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS _burrow_push_tokens_user ON _burrow_push_tokens (user)`,
  `CREATE TABLE IF NOT EXISTS _burrow_push_expired (type TEXT NOT NULL, token TEXT NOT NULL, expired INTEGER NOT NULL, reason TEXT NOT NULL,
     PRIMARY KEY (type, token)) STRICT, WITHOUT ROWID`,
];

/** The statements that move a refused token from the registry to the expired list (the queue runs them too). */
export function expireStatements(type: string, token: string, reason: string, now: number): InStatement[] {
  return [
    { sql: `DELETE FROM _burrow_push_tokens WHERE type = ? AND token = ?`, args: [type, token] },
    {
      sql: `INSERT INTO _burrow_push_expired (type, token, expired, reason) VALUES (?, ?, ?, ?)
            ON CONFLICT (type, token) DO UPDATE SET expired = excluded.expired, reason = excluded.reason`,
      args: [type, token, now, reason.slice(0, 200)],
    },
  ];
}

/** The statements that register a token (see TokenStore.register). */
function registerStatements(type: TokenType, token: string, user: string | null, overwrite: boolean, now: number): InStatement[] {
  return [
    {
      sql: `INSERT INTO _burrow_push_tokens (type, token, user, created) VALUES (?, ?, ?, ?)
            ON CONFLICT (type, token) DO UPDATE SET user = ${overwrite ? "excluded.user" : "coalesce(user, excluded.user)"}`,
      args: [type, token, user, now],
    },
    // A token registered again is alive again.
    { sql: `DELETE FROM _burrow_push_expired WHERE type = ? AND token = ?`, args: [type, token] },
  ];
}

export class TokenStore {
  constructor(private readonly db: Client) {}

  /** Register a token; `overwrite` replaces an existing user link (PUT), otherwise an existing link stays (POST). */
  async register(type: TokenType, token: string, user: string | null, overwrite: boolean): Promise<void> {
    await this.db.batch(registerStatements(type, token, user, overwrite, Date.now()), "write");
  }

  /** Register many tokens in one write batch, as `register` would each (a later duplicate in `list` wins when overwriting). */
  async registerMany(list: readonly { type: TokenType; token: string; user: string | null }[], overwrite: boolean): Promise<void> {
    if (list.length === 0) return;
    const now = Date.now();
    await this.db.batch(
      list.flatMap((t) => registerStatements(t.type, t.token, t.user, overwrite, now)),
      "write",
    );
  }

  /** Remove a token; whether it was registered. */
  async remove(type: TokenType, token: string): Promise<boolean> {
    const rs = await this.db.execute({ sql: `DELETE FROM _burrow_push_tokens WHERE type = ? AND token = ?`, args: [type, token] });
    return rs.rowsAffected > 0;
  }

  /** The tokens of each user (users without tokens get an empty list). */
  async ofUsers(users: readonly string[]): Promise<Record<string, { type: TokenType; token: string; registered: number }[]>> {
    const out: Record<string, { type: TokenType; token: string; registered: number }[]> = Object.create(null);
    for (const u of users) out[u] = [];
    if (users.length === 0) return out;
    const rs = await this.db.execute({
      sql: `SELECT type, token, user, created FROM _burrow_push_tokens WHERE user IN (SELECT value FROM json_each(?)) ORDER BY created, token`,
      args: [JSON.stringify(users)],
    });
    for (const r of rs.rows)
      out[r.user as string]!.push({ type: r.type as TokenType, token: r.token as string, registered: Number(r.created) });
    return out;
  }

  /** A token a provider refused for good: out of the registry, into the expired list. */
  async expire(type: TokenType, token: string, reason: string): Promise<void> {
    await this.db.batch(expireStatements(type, token, reason, Date.now()), "write");
  }

  /** The expired list, oldest first; `clear` empties what it returned. */
  async expired(clear: boolean): Promise<{ type: TokenType; token: string; expired: number }[]> {
    const rs = await this.db.execute(`SELECT type, token, expired FROM _burrow_push_expired ORDER BY expired, token`);
    const list = rs.rows.map((r) => ({ type: r.type as TokenType, token: r.token as string, expired: Number(r.expired) }));
    if (clear && list.length) {
      const maxTime = list[list.length - 1]!.expired;
      await this.db.execute({ sql: `DELETE FROM _burrow_push_expired WHERE expired <= ?`, args: [maxTime] });
    }
    return list;
  }

  async count(): Promise<number> {
    const rs = await this.db.execute(`SELECT count(*) AS n FROM _burrow_push_tokens`);
    return Number(rs.rows[0]!.n);
  }
}
