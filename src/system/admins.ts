// Admin accounts, their roles (src/system/admin-roles.ts) and their bearer tokens for /_admin/api. Tokens are
// random, expire after 12 hours, and only their SHA-256 is stored. The last owner can be neither removed nor
// demoted (checked in the same statement that would do it); a new password revokes the admin's other tokens.

import type { Client, Row } from "@libsql/core/api";
import { hashPassword, verifyNothing, verifyPassword } from "../auth/passwords.ts";
import { isEmail } from "../config.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import { ROLES, type Role, isRole, withArticle } from "./admin-roles.ts";

const ADMIN_TOKEN_TTL_S = 12 * 3600;
export const ADMIN_PASSWORD_MIN = 8;
export const ADMIN_PASSWORD_MAX = 1024;

export interface Admin {
  id: string;
  email: string;
  role: Role;
}

/** The admin a bearer token belongs to, with the token's expiry (ms) and digest (to end or keep this session). */
export interface AdminSession extends Admin {
  expires: number;
  tokenHash: string;
}

/** An admin as the admin API lists it (times in ms); never the password hash. */
export interface AdminRecord extends Admin {
  created: number;
  updated: number;
}

/** Why an email cannot be an admin's, or null. */
export function adminEmailProblem(email: unknown): string | null {
  return typeof email === "string" && isEmail(email) ? null : "email must be an email address (at most 254 characters)";
}

/** Why a password cannot be an admin's, or null. */
export function adminPasswordProblem(password: unknown): string | null {
  if (typeof password !== "string" || password.length < ADMIN_PASSWORD_MIN || password.length > ADMIN_PASSWORD_MAX)
    return `password must be ${ADMIN_PASSWORD_MIN} to ${ADMIN_PASSWORD_MAX} characters`;
  return null;
}

function roleProblem(role: unknown): string | null {
  return isRole(role) ? null : `role must be one of ${ROLES.join(", ")}`;
}

function check(problem: string | null): void {
  if (problem) throw badRequest(problem);
}

function sha256(s: string): string {
  return new Bun.CryptoHasher("sha256").update(s).digest("hex");
}

const COLUMNS = `id, email, role, created, updated`;
/** True for a row whose removal or demotion would leave no owner. */
const LAST_OWNER = `(role = 'owner' AND (SELECT count(*) FROM admins WHERE role = 'owner') <= 1)`;
const LAST_OWNER_HINT = "make another admin an owner first";

/** A stored role that is not one (edited by hand) counts as the least. */
const roleOf = (v: unknown): Role => (isRole(v) ? v : "viewer");

function record(r: Row): AdminRecord {
  return { id: r.id as string, email: r.email as string, role: roleOf(r.role), created: Number(r.created), updated: Number(r.updated) };
}

export class Admins {
  constructor(private readonly db: Client) {}

  /**
   * Create the admin (an owner unless `role` says otherwise), or set a new password for an existing one, which
   * keeps its role unless `role` is given. A password the admin already has changes nothing (its tokens stay).
   */
  async upsert(email: string, password: string, role?: Role): Promise<"created" | "updated"> {
    check(adminEmailProblem(email));
    check(adminPasswordProblem(password));
    if (role !== undefined) check(roleProblem(role));
    const address = email.toLowerCase();
    for (;;) {
      const rs = await this.db.execute({ sql: `SELECT id, password_hash FROM admins WHERE email = ?`, args: [address] });
      const row = rs.rows[0];
      if (row) {
        const same = await verifyPassword(password, row.password_hash as string);
        await this.update(row.id as string, { role, password: same ? undefined : password });
        return "updated";
      }
      const hash = await hashPassword(password);
      const now = Date.now();
      const made = await this.db.execute({
        sql: `INSERT INTO admins (id, email, password_hash, role, created, updated) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(email) DO NOTHING RETURNING id`,
        args: [crypto.randomUUID(), address, hash, role ?? "owner", now, now],
      });
      if (made.rows.length) return "created";
      // Another process made it at the same moment: update that one.
    }
  }

  /** A new admin; 400 for a bad email, password or role, 409 when the email is taken. */
  async create(email: unknown, password: unknown, role: unknown): Promise<AdminRecord> {
    check(adminEmailProblem(email));
    check(adminPasswordProblem(password));
    check(roleProblem(role));
    const address = (email as string).toLowerCase();
    const hash = await hashPassword(password as string);
    const now = Date.now();
    const rs = await this.db.execute({
      sql: `INSERT INTO admins (id, email, password_hash, role, created, updated) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(email) DO NOTHING RETURNING ${COLUMNS}`,
      args: [crypto.randomUUID(), address, hash, role as Role, now, now],
    });
    if (!rs.rows[0]) throw conflict(`an admin with email ${address} already exists`);
    return record(rs.rows[0]);
  }

  /**
   * Change an admin's role and/or password. A new password revokes the admin's tokens but `keepTokenHash` (the
   * caller's own session when admins change their own password). 404 for an unknown id, 409 for demoting the
   * last owner.
   */
  async update(id: string, changes: { role?: unknown; password?: unknown }, keepTokenHash = ""): Promise<AdminRecord> {
    if (changes.role !== undefined) check(roleProblem(changes.role));
    if (changes.password !== undefined) check(adminPasswordProblem(changes.password));
    const role = (changes.role as Role | undefined) ?? null;
    const hash = changes.password === undefined ? null : await hashPassword(changes.password as string);
    if (role === null && hash === null) {
      const current = await this.get(id);
      if (!current) throw notFound(`no admin has id "${id.slice(0, 64)}"`);
      return current;
    }
    const [updated] = await this.db.batch(
      [
        {
          sql: `UPDATE admins SET role = coalesce(?, role), password_hash = coalesce(?, password_hash), updated = max(created, ?)
                WHERE id = ? AND NOT (coalesce(?, 'owner') <> 'owner' AND ${LAST_OWNER}) RETURNING ${COLUMNS}`,
          args: [role, hash, Date.now(), id, role],
        },
        ...(hash === null
          ? []
          : [
              {
                sql: `DELETE FROM admin_tokens WHERE admin_id = ? AND token_hash <> ? AND EXISTS (SELECT 1 FROM admins WHERE id = ? AND password_hash = ?)`,
                args: [id, keepTokenHash, id, hash],
              },
            ]),
      ],
      "write",
    );
    const row = updated!.rows[0];
    if (row) return record(row);
    const left = await this.get(id);
    if (left) throw conflict(`${left.email} is the last owner and cannot become ${withArticle(role!)}: ${LAST_OWNER_HINT}`);
    throw notFound(`no admin has id "${id.slice(0, 64)}"`);
  }

  /** Remove an admin and its tokens; 404 for an unknown id, 409 for the last owner. */
  async remove(id: string): Promise<void> {
    const [removed] = await this.db.batch(
      [
        { sql: `DELETE FROM admins WHERE id = ? AND NOT ${LAST_OWNER} RETURNING id`, args: [id] },
        { sql: `DELETE FROM admin_tokens WHERE admin_id = ? AND NOT EXISTS (SELECT 1 FROM admins WHERE id = ?)`, args: [id, id] },
      ],
      "write",
    );
    if (removed!.rows.length) return;
    const left = await this.get(id);
    if (left) throw conflict(`${left.email} is the last owner and cannot be removed: ${LAST_OWNER_HINT}`);
    throw notFound(`no admin has id "${id.slice(0, 64)}"`);
  }

  async get(id: string): Promise<AdminRecord | null> {
    const rs = await this.db.execute({ sql: `SELECT ${COLUMNS} FROM admins WHERE id = ?`, args: [id] });
    return rs.rows[0] ? record(rs.rows[0]) : null;
  }

  /** Every admin, oldest first. */
  async list(): Promise<AdminRecord[]> {
    const rs = await this.db.execute(`SELECT ${COLUMNS} FROM admins ORDER BY created, email`);
    return rs.rows.map(record);
  }

  async count(): Promise<number> {
    const rs = await this.db.execute(`SELECT count(*) AS n FROM admins`);
    return Number(rs.rows[0]!.n);
  }

  /** Check credentials; on success issue a token. Unknown emails cost the same time as wrong passwords. */
  async login(email: unknown, password: unknown): Promise<{ token: string; expires_in: number } | null> {
    if (typeof email !== "string" || typeof password !== "string" || email.length > 254 || password.length > ADMIN_PASSWORD_MAX)
      return null;
    const rs = await this.db.execute({ sql: `SELECT id, password_hash FROM admins WHERE email = ?`, args: [email.toLowerCase()] });
    const row = rs.rows[0];
    const ok = row ? await verifyPassword(password, row.password_hash as string) : await verifyNothing(password);
    if (!ok || !row) return null;
    const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const now = Date.now();
    await this.db.batch(
      [
        { sql: `DELETE FROM admin_tokens WHERE expires < ?`, args: [now] },
        {
          sql: `INSERT INTO admin_tokens (token_hash, admin_id, expires) VALUES (?, ?, ?)`,
          args: [sha256(token), row.id as string, now + ADMIN_TOKEN_TTL_S * 1000],
        },
      ],
      "write",
    );
    return { token, expires_in: ADMIN_TOKEN_TTL_S };
  }

  /** The admin a bearer token belongs to, with its role as it is now; null when unknown or expired. */
  async authenticate(token: string): Promise<AdminSession | null> {
    if (!token || token.length > 200) return null;
    const tokenHash = sha256(token);
    const rs = await this.db.execute({
      sql: `SELECT a.id, a.email, a.role, t.expires FROM admin_tokens t JOIN admins a ON a.id = t.admin_id WHERE t.token_hash = ? AND t.expires > ?`,
      args: [tokenHash, Date.now()],
    });
    const r = rs.rows[0];
    return r ? { id: r.id as string, email: r.email as string, role: roleOf(r.role), expires: Number(r.expires), tokenHash } : null;
  }

  /** End one session (its token stops working). */
  async logout(tokenHash: string): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM admin_tokens WHERE token_hash = ?`, args: [tokenHash] });
  }
}
