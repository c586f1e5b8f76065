// Six-digit codes mailed to a user (a passwordless sign-in, or the proof of an email address): one per user and
// purpose at a time, valid 10 minutes, used once; five wrong tries void it. Stored as an HMAC of the code under a
// per-code random salt, compared in constant time; the table lives in the environment's database, so every node
// sees it.

import type { Client } from "@libsql/core/api";
import { timingSafeEqual } from "node:crypto";

export const EMAIL_CODES_DDL = `CREATE TABLE IF NOT EXISTS _burrow_email_codes (user_schema TEXT NOT NULL, username TEXT NOT NULL,
  purpose TEXT NOT NULL, salt TEXT NOT NULL, digest TEXT NOT NULL, email TEXT NOT NULL, expires INTEGER NOT NULL, tries INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_schema, username, purpose)) STRICT, WITHOUT ROWID`;

export type CodePurpose = "login" | "verify";

export const CODE_TTL_MS = 10 * 60_000;
export const MAX_TRIES = 5;

/** A uniformly random 6-digit code (000000-999999). */
export function sixDigits(): string {
  const limit = 4_294_000_000; // a multiple of 10^6 below 2^32: no modulo bias
  for (;;) {
    const [n] = crypto.getRandomValues(new Uint32Array(1));
    if (n! < limit) return String(n! % 1_000_000).padStart(6, "0");
  }
}

function digestOf(salt: string, code: string): string {
  return new Bun.CryptoHasher("sha256", salt).update(code).digest("hex");
}

/** Why a code was refused. */
export type CodeRefusal = "unknown" | "expired" | "wrong" | "voided";

export class EmailCodes {
  constructor(private readonly now: () => number = Date.now) {}

  /** A new code for the user and purpose (replacing any earlier one), to be sent to `email`. */
  async issue(db: Client, schema: string, username: string, purpose: CodePurpose, email: string): Promise<string> {
    const code = sixDigits();
    const salt = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
    await db.execute({
      sql: `INSERT INTO _burrow_email_codes (user_schema, username, purpose, salt, digest, email, expires, tries) VALUES (?, ?, ?, ?, ?, ?, ?, 0)
            ON CONFLICT (user_schema, username, purpose) DO UPDATE SET salt = excluded.salt, digest = excluded.digest, email = excluded.email,
              expires = excluded.expires, tries = 0`,
      args: [schema, username, purpose, salt, digestOf(salt, code), email, this.now() + CODE_TTL_MS],
    });
    return code;
  }

  /**
   * Use a code: the address it was sent to when right (the code is gone), else why not. A wrong code counts a try;
   * the fifth wrong try voids the code.
   */
  async use(db: Client, schema: string, username: string, purpose: CodePurpose, code: string): Promise<{ email: string } | CodeRefusal> {
    const rs = await db.execute({
      sql: `SELECT salt, digest, email, expires, tries FROM _burrow_email_codes WHERE user_schema = ? AND username = ? AND purpose = ?`,
      args: [schema, username, purpose],
    });
    const r = rs.rows[0];
    const key = [schema, username, purpose];
    if (!r) return "unknown";
    if (Number(r.expires) <= this.now()) {
      await db.execute({ sql: `DELETE FROM _burrow_email_codes WHERE user_schema = ? AND username = ? AND purpose = ?`, args: key });
      return "expired";
    }
    const given = Buffer.from(digestOf(r.salt as string, /^\d{6}$/.test(code) ? code : "-"));
    const stored = Buffer.from(r.digest as string);
    if (given.length === stored.length && timingSafeEqual(given, stored)) {
      // Single use: only the request whose DELETE removed the row may go on.
      const del = await db.execute({
        sql: `DELETE FROM _burrow_email_codes WHERE user_schema = ? AND username = ? AND purpose = ? AND digest = ?`,
        args: [...key, r.digest as string],
      });
      return del.rowsAffected === 1 ? { email: r.email as string } : "unknown";
    }
    if (Number(r.tries) + 1 >= MAX_TRIES) {
      await db.execute({ sql: `DELETE FROM _burrow_email_codes WHERE user_schema = ? AND username = ? AND purpose = ?`, args: key });
      return "voided";
    }
    await db.execute({
      sql: `UPDATE _burrow_email_codes SET tries = tries + 1 WHERE user_schema = ? AND username = ? AND purpose = ?`,
      args: key,
    });
    return "wrong";
  }
}
