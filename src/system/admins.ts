// Admin accounts and their bearer tokens for /_admin/api. Tokens are random; only their SHA-256 is stored.

import type { Client } from "@libsql/core/api";
import { hashPassword, verifyNothing, verifyPassword } from "../auth/passwords.ts";

const ADMIN_TOKEN_TTL_S = 12 * 3600;

interface Admin {
  id: string;
  email: string;
}

function sha256(s: string): string {
  return new Bun.CryptoHasher("sha256").update(s).digest("hex");
}

export class Admins {
  constructor(private readonly db: Client) {}

  /** Create the admin, or set a new password for an existing one. */
  async upsert(email: string, password: string): Promise<"created" | "updated"> {
    const hash = await hashPassword(password);
    const now = Date.now();
    const rs = await this.db.execute({
      sql: `INSERT INTO admins (id, email, password_hash, created, updated) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(email) DO UPDATE SET password_hash = excluded.password_hash, updated = excluded.updated
            RETURNING created = updated AS fresh`,
      args: [crypto.randomUUID(), email.toLowerCase(), hash, now, now],
    });
    return rs.rows[0]?.fresh ? "created" : "updated";
  }

  async count(): Promise<number> {
    const rs = await this.db.execute(`SELECT count(*) AS n FROM admins`);
    return Number(rs.rows[0]!.n);
  }

  /** Check credentials; on success issue a token. Unknown emails cost the same time as wrong passwords. */
  async login(email: unknown, password: unknown): Promise<{ token: string; expires_in: number } | null> {
    if (typeof email !== "string" || typeof password !== "string" || email.length > 254 || password.length > 1024) return null;
    const rs = await this.db.execute({ sql: `SELECT id, password_hash FROM admins WHERE email = ?`, args: [email.toLowerCase()] });
    const row = rs.rows[0];
    const ok = row ? await verifyPassword(password, row.password_hash as string) : await verifyNothing(password);
    if (!ok || !row) return null;
    const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const now = Date.now();
    await this.db.batch(
      [
        { sql: `DELETE FROM admin_tokens WHERE expires < ?`, args: [now] },
        { sql: `INSERT INTO admin_tokens (token_hash, admin_id, expires) VALUES (?, ?, ?)`, args: [sha256(token), row.id as string, now + ADMIN_TOKEN_TTL_S * 1000] },
      ],
      "write",
    );
    return { token, expires_in: ADMIN_TOKEN_TTL_S };
  }

  /** The admin a bearer token belongs to, or null when unknown or expired. */
  async authenticate(token: string): Promise<Admin | null> {
    if (!token || token.length > 200) return null;
    const rs = await this.db.execute({
      sql: `SELECT a.id, a.email FROM admin_tokens t JOIN admins a ON a.id = t.admin_id WHERE t.token_hash = ? AND t.expires > ?`,
      args: [sha256(token), Date.now()],
    });
    const r = rs.rows[0];
    return r ? { id: r.id as string, email: r.email as string } : null;
  }
}
