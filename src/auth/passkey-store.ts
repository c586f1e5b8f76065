// The rows of passkeys in an environment's database: each user's registered credentials (_burrow_passkeys: the
// credential id, public key, signature counter, label and times) and the pending challenges of registrations and
// logins (_burrow_passkey_challenges), which every node sharing the store sees. A challenge is taken by deleting
// it, so it works once; expired ones are swept when new ones are stored. Only SQL here: src/auth/passkeys.ts runs
// the ceremonies.

import type { Client } from "@libsql/core/api";

export const PASSKEYS_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_passkeys (id TEXT PRIMARY KEY NOT NULL, user_schema TEXT NOT NULL, username TEXT NOT NULL, user_handle TEXT NOT NULL, public_key TEXT NOT NULL, counter INTEGER NOT NULL, transports TEXT NOT NULL, name TEXT NOT NULL, created INTEGER NOT NULL, last_used INTEGER) STRICT`,
  `CREATE INDEX IF NOT EXISTS _burrow_passkeys_user ON _burrow_passkeys (user_schema, username)`,
  `CREATE TABLE IF NOT EXISTS _burrow_passkey_challenges (id TEXT PRIMARY KEY NOT NULL, user_schema TEXT NOT NULL, username TEXT, challenge TEXT NOT NULL, purpose TEXT NOT NULL, rp_id TEXT NOT NULL, origins TEXT NOT NULL, user_handle TEXT, expires INTEGER NOT NULL) STRICT`,
  `CREATE INDEX IF NOT EXISTS _burrow_passkey_challenges_challenge ON _burrow_passkey_challenges (challenge)`,
  `CREATE INDEX IF NOT EXISTS _burrow_passkey_challenges_expires ON _burrow_passkey_challenges (expires)`,
];

export type ChallengePurpose = "register" | "login";

/** The relying party a ceremony runs for: its id (a domain) and the origins its pages may have. */
export interface RelyingParty {
  id: string;
  origins: string[];
}

/** A pending challenge as stored. */
export interface StoredChallenge {
  id: string;
  schema: string;
  /** The user it was issued for; null for a login with a discoverable credential. */
  username: string | null;
  challenge: string;
  purpose: ChallengePurpose;
  rp: RelyingParty;
  /** Registration: the WebAuthn user handle the new credential is created under. */
  userHandle: string | null;
  expires: number;
}

/** A registered passkey as stored (the public key is the COSE key, base64url). */
export interface StoredPasskey {
  id: string;
  username: string;
  userHandle: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  created: number;
  lastUsed: number | null;
}

/** A passkey as answers show it: never its key. */
export interface PasskeyInfo {
  id: string;
  name: string;
  created: string;
  lastUsed: string | null;
}

export function infoOf(p: Pick<StoredPasskey, "id" | "name" | "created" | "lastUsed">): PasskeyInfo {
  return {
    id: p.id,
    name: p.name,
    created: new Date(p.created).toISOString(),
    lastUsed: p.lastUsed === null ? null : new Date(p.lastUsed).toISOString(),
  };
}

const PASSKEY_COLUMNS = "id, username, user_handle, public_key, counter, transports, name, created, last_used";

function passkeyOf(r: Record<string, unknown>): StoredPasskey {
  return {
    id: r.id as string,
    username: r.username as string,
    userHandle: r.user_handle as string,
    publicKey: r.public_key as string,
    counter: Number(r.counter),
    transports: JSON.parse(r.transports as string) as string[],
    name: r.name as string,
    created: Number(r.created),
    lastUsed: r.last_used === null ? null : Number(r.last_used),
  };
}

function challengeOf(r: Record<string, unknown>): StoredChallenge {
  return {
    id: r.id as string,
    schema: r.user_schema as string,
    username: (r.username as string | null) ?? null,
    challenge: r.challenge as string,
    purpose: r.purpose as ChallengePurpose,
    rp: { id: r.rp_id as string, origins: JSON.parse(r.origins as string) as string[] },
    userHandle: (r.user_handle as string | null) ?? null,
    expires: Number(r.expires),
  };
}

const CHALLENGE_COLUMNS = "id, user_schema, username, challenge, purpose, rp_id, origins, user_handle, expires";

export const passkeyStore = {
  /** Store a challenge, sweeping the expired ones in the same transaction. */
  async putChallenge(db: Client, c: StoredChallenge, now: number): Promise<void> {
    await db.batch(
      [
        { sql: "DELETE FROM _burrow_passkey_challenges WHERE expires <= ?", args: [now] },
        {
          sql: `INSERT INTO _burrow_passkey_challenges (${CHALLENGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          args: [c.id, c.schema, c.username, c.challenge, c.purpose, c.rp.id, JSON.stringify(c.rp.origins), c.userHandle, c.expires],
        },
      ],
      "write",
    );
  },

  /** Take (delete) a login challenge by its id: it is answered once, expired or not; null when there is none. */
  async takeLoginChallenge(db: Client, schema: string, id: string): Promise<StoredChallenge | null> {
    const rs = await db.execute({
      sql: `DELETE FROM _burrow_passkey_challenges WHERE id = ? AND user_schema = ? AND purpose = 'login' RETURNING ${CHALLENGE_COLUMNS}`,
      args: [id, schema],
    });
    return rs.rows[0] ? challengeOf(rs.rows[0] as Record<string, unknown>) : null;
  },

  /** Take (delete) a user's registration challenge by the challenge the browser signed; null when there is none. */
  async takeRegisterChallenge(db: Client, schema: string, username: string, challenge: string): Promise<StoredChallenge | null> {
    const rs = await db.execute({
      sql: `DELETE FROM _burrow_passkey_challenges WHERE challenge = ? AND user_schema = ? AND username = ? AND purpose = 'register' RETURNING ${CHALLENGE_COLUMNS}`,
      args: [challenge, schema, username],
    });
    return rs.rows[0] ? challengeOf(rs.rows[0] as Record<string, unknown>) : null;
  },

  /** A user's passkeys, oldest first. */
  async ofUser(db: Client, schema: string, username: string): Promise<StoredPasskey[]> {
    const rs = await db.execute({
      sql: `SELECT ${PASSKEY_COLUMNS} FROM _burrow_passkeys WHERE user_schema = ? AND username = ? ORDER BY created, id`,
      args: [schema, username],
    });
    return rs.rows.map((r) => passkeyOf(r as Record<string, unknown>));
  },

  async byId(db: Client, schema: string, id: string): Promise<StoredPasskey | null> {
    const rs = await db.execute({
      sql: `SELECT ${PASSKEY_COLUMNS} FROM _burrow_passkeys WHERE id = ? AND user_schema = ?`,
      args: [id, schema],
    });
    return rs.rows[0] ? passkeyOf(rs.rows[0] as Record<string, unknown>) : null;
  },

  /** Store a new passkey; false when its credential id is already registered (to anyone). */
  async add(db: Client, schema: string, p: StoredPasskey): Promise<boolean> {
    const rs = await db.execute({
      sql: `INSERT INTO _burrow_passkeys (user_schema, ${PASSKEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
      args: [schema, p.id, p.username, p.userHandle, p.publicKey, p.counter, JSON.stringify(p.transports), p.name, p.created, p.lastUsed],
    });
    return rs.rowsAffected === 1;
  },

  /**
   * Record a login with the counter the authenticator reported, only if it still increases on the stored one (or
   * both are 0: an authenticator without a counter), so two logins racing with one counter value cannot both pass.
   */
  async used(db: Client, id: string, counter: number, now: number): Promise<boolean> {
    const rs = await db.execute({
      sql: "UPDATE _burrow_passkeys SET counter = ?, last_used = ? WHERE id = ? AND (counter < ? OR (counter = 0 AND ? = 0))",
      args: [counter, now, id, counter, counter],
    });
    return rs.rowsAffected === 1;
  },

  /** Remove one passkey of a user; false when the user has none of that id. */
  async remove(db: Client, schema: string, username: string, id: string): Promise<boolean> {
    const rs = await db.execute({
      sql: "DELETE FROM _burrow_passkeys WHERE id = ? AND user_schema = ? AND username = ?",
      args: [id, schema, username],
    });
    return rs.rowsAffected === 1;
  },
};
