// OAuth 2.0 MAC sessions of an environment, bearer sessions (the access token alone authenticates; no MAC key),
// and the cookie sessions of the legacy /login (the cookie holds an access token; its MAC key and refresh token go
// unused). The kind is in the mac_key column: a MAC key, "" for a cookie session, "-" for a bearer session. A login starts a session ("family"): one row holding
// the current access token, MAC key and refresh token (as SHA-256 digests, except the MAC key, which verifying
// needs). Tokens start with the family id, so a refresh is one UPDATE; presenting any older refresh token of the
// family (it was rotated away) revokes the family. Access tokens live an hour, refresh tokens a year.

import { timingSafeEqual } from "node:crypto";
import type { Client } from "@libsql/core/api";
import { constantTimeEquals, type MacSigner, macSigner } from "./mac.ts";

const ACCESS_TTL_S = 3600;
const REFRESH_TTL_S = 365 * 24 * 3600;
const FAMILY_LENGTH = 16;
const SECRET_LENGTH = 32;

export const SESSIONS_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_sessions (family TEXT PRIMARY KEY, access TEXT NOT NULL, mac_key TEXT NOT NULL, refresh TEXT NOT NULL,
     user_schema TEXT NOT NULL, username TEXT NOT NULL, expires INTEGER NOT NULL, refresh_expires INTEGER NOT NULL, created INTEGER NOT NULL) STRICT, WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS _burrow_sessions_user ON _burrow_sessions (user_schema, username)`,
];

/** What a session's access token is: a MAC id, a bearer token, or a legacy /login cookie. Never another of them. */
export type SessionKind = "mac" | "bearer" | "cookie";

/** The mac_key column of a bearer session (a MAC key is alphanumeric, a cookie session's is ""). */
const BEARER_MARK = "-";

export interface Session {
  /** Signs with the session's MAC key (keyed once per cached session). */
  sign: MacSigner;
  schema: string;
  username: string;
  family: string;
  expires: number;
  /** A cookie session of the legacy /login: its token is never a MAC id, and a MAC session's is never a cookie. */
  cookie: boolean;
  kind: SessionKind;
}

const kindOfKey = (macKey: string): SessionKind => (macKey === "" ? "cookie" : macKey === BEARER_MARK ? "bearer" : "mac");

export interface Tokens {
  access_token: string;
  mac_key: string;
  refresh_token: string;
  expires_in: number;
}

const ALPHANUM_CODES = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"].map((c) => c.charCodeAt(0));

/** Random alphanumerics (docs/api/users.md#tokens), from a CSPRNG without modulo bias. */
export function randomToken(length = SECRET_LENGTH): string {
  const codes: number[] = [];
  while (codes.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length + 16));
    for (let i = 0; i < bytes.length && codes.length < length; i++) if (bytes[i]! < 248) codes.push(ALPHANUM_CODES[bytes[i]! % 62]!);
  }
  return String.fromCharCode(...codes);
}

function digest(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

/** Compare a token with a stored digest in constant time. */
function matches(token: string, stored: string): boolean {
  const a = Buffer.from(digest(token));
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The family id of a well-formed token (48 alphanumerics), else null. */
export function familyOf(token: string): string | null {
  if (token.length !== FAMILY_LENGTH + SECRET_LENGTH) return null;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122))) return null;
  }
  return token.slice(0, FAMILY_LENGTH);
}

/**
 * Live sessions are cached in memory for a few seconds so signed requests skip a lookup. Revocations made by
 * this process apply at once; another node's revocations apply within this time (on a store shared by several
 * nodes services.ts passes SHARED_SESSION_CACHE_MS, so a logout on one node holds on all within a second).
 */
const SESSION_CACHE_MS = 10_000;
export const SHARED_SESSION_CACHE_MS = 500;
const SESSION_CACHE_MAX = 50_000;

export class Sessions {
  /** family -> the access token last verified for it, its session, and until when the entry may be used. */
  private readonly cache = new Map<string, { token: string; session: Session; until: number }>();

  constructor(
    private readonly db: Client,
    private readonly cacheMs = SESSION_CACHE_MS,
  ) {}

  private forgetUser(schema: string, username: string): void {
    this.forgetUsers(schema, [username]);
  }

  /** Drop the cached sessions of a user schema's users (the schema was dropped). */
  forgetSchema(schema: string): void {
    for (const [family, e] of this.cache) if (e.session.schema === schema) this.cache.delete(family);
  }

  /** Drop the cached sessions of these users but `keepFamily`'s (they were deleted, or their sessions ended in the database by another path). */
  forgetUsers(schema: string, usernames: readonly string[], keepFamily: string | null = null): void {
    if (this.cache.size === 0 || usernames.length === 0) return;
    const gone = new Set(usernames);
    for (const [family, e] of this.cache)
      if (family !== keepFamily && e.session.schema === schema && gone.has(e.session.username)) this.cache.delete(family);
  }

  private newTokens(family: string): Tokens {
    return {
      access_token: family + randomToken(),
      mac_key: randomToken(),
      refresh_token: family + randomToken(),
      expires_in: ACCESS_TTL_S,
    };
  }

  /**
   * A new session. `single` revokes every other session of the user first. A cookie session (legacy /login)
   * stores no MAC key (its token never verifies as a MAC id, since a MAC id travels in clear in every signed
   * request) and no usable refresh token: it ends with its access token and is swept then.
   */
  async issue(schema: string, username: string, single: boolean, kind: SessionKind = "mac"): Promise<Tokens> {
    const cookie = kind === "cookie";
    const now = Date.now();
    const family = randomToken(FAMILY_LENGTH);
    const tokens = this.newTokens(family);
    await this.db.batch(
      [
        ...(single ? [{ sql: `DELETE FROM _burrow_sessions WHERE user_schema = ? AND username = ?`, args: [schema, username] }] : []),
        {
          sql: `INSERT INTO _burrow_sessions (family, access, mac_key, refresh, user_schema, username, expires, refresh_expires, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          args: [
            family,
            digest(tokens.access_token),
            cookie ? "" : kind === "bearer" ? BEARER_MARK : tokens.mac_key,
            digest(tokens.refresh_token),
            schema,
            username,
            now + ACCESS_TTL_S * 1000,
            now + (cookie ? ACCESS_TTL_S : REFRESH_TTL_S) * 1000,
            now,
          ],
        },
      ],
      "write",
    );
    if (single) this.forgetUser(schema, username);
    return tokens;
  }

  /** The live session of an access token, or null when unknown, expired, rotated away or revoked. */
  lookup(accessToken: string): Session | null | Promise<Session | null> {
    const family = familyOf(accessToken);
    if (!family) return null;
    const now = Date.now();
    const hit = this.cache.get(family);
    // Synchronous on a hit: most signed requests never wait for the store.
    if (hit && hit.until > now && constantTimeEquals(hit.token, accessToken)) return hit.session.expires > now ? hit.session : null;
    return this.load(family, accessToken, now);
  }

  /**
   * Why lookup refused an access token: "expired" when it is still its family's current token and the refresh
   * token works (refreshing helps), else "invalid" (unknown, rotated away, logged out, or the refresh token
   * expired too: only a new login helps). Asked only after a refusal, so valid tokens never pay for it.
   */
  async whyRefused(accessToken: string): Promise<"expired" | "invalid"> {
    const family = familyOf(accessToken);
    if (!family) return "invalid";
    const rs = await this.db.execute({
      sql: `SELECT access, refresh_expires FROM _burrow_sessions WHERE family = ? AND mac_key <> ''`,
      args: [family],
    });
    const r = rs.rows[0];
    return r && Number(r.refresh_expires) > Date.now() && matches(accessToken, r.access as string) ? "expired" : "invalid";
  }

  private async load(family: string, accessToken: string, now: number): Promise<Session | null> {
    const rs = await this.db.execute({
      sql: `SELECT access, mac_key, user_schema, username, expires FROM _burrow_sessions WHERE family = ?`,
      args: [family],
    });
    const r = rs.rows[0];
    if (!r || Number(r.expires) <= now || !matches(accessToken, r.access as string)) return null;
    const macKey = r.mac_key as string;
    const session = {
      sign: macSigner(macKey),
      schema: r.user_schema as string,
      username: r.username as string,
      family,
      expires: Number(r.expires),
      cookie: macKey === "",
      kind: kindOfKey(macKey),
    };
    if (this.cache.size >= SESSION_CACHE_MAX) this.cache.clear();
    this.cache.set(family, { token: accessToken, session, until: now + this.cacheMs });
    return session;
  }

  /**
   * Exchange the family's current refresh token for a new token set (one UPDATE). The old access token stops
   * working. Presenting a refresh token of the family that is no longer current revokes the whole family.
   */
  async refresh(
    refreshToken: string,
    kind?: "mac" | "bearer",
  ): Promise<{ tokens: Tokens; schema: string; username: string; kind: SessionKind } | "reused" | null> {
    const family = familyOf(refreshToken);
    if (!family) return null;
    const now = Date.now();
    const tokens = this.newTokens(family);
    // The session keeps its kind unless the refresh asks for the other one (token_type).
    const key = kind === undefined ? `CASE WHEN mac_key = '${BEARER_MARK}' THEN '${BEARER_MARK}' ELSE ? END` : "?";
    const rs = await this.db.execute({
      sql: `UPDATE _burrow_sessions SET access = ?, mac_key = ${key}, refresh = ?, expires = ? WHERE family = ? AND refresh = ? AND refresh_expires > ? AND mac_key <> '' RETURNING user_schema, username, mac_key`,
      args: [
        digest(tokens.access_token),
        kind === "bearer" ? BEARER_MARK : tokens.mac_key,
        digest(tokens.refresh_token),
        now + ACCESS_TTL_S * 1000,
        family,
        digest(refreshToken),
        now,
      ],
    });
    this.cache.delete(family);
    const r = rs.rows[0];
    if (r) return { tokens, schema: r.user_schema as string, username: r.username as string, kind: kindOfKey(r.mac_key as string) };
    const live = await this.db.execute({
      sql: `SELECT 1 FROM _burrow_sessions WHERE family = ? AND refresh_expires > ?`,
      args: [family, now],
    });
    if (live.rows.length === 0) return null;
    await this.revokeFamily(family);
    return "reused";
  }

  /** Remove sessions whose refresh token has expired (maintenance). */
  async sweep(now = Date.now()): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_sessions WHERE refresh_expires < ?`, args: [now] });
  }

  async revokeFamily(family: string): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_sessions WHERE family = ?`, args: [family] });
    this.cache.delete(family);
  }

  async revokeUser(schema: string, username: string): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_sessions WHERE user_schema = ? AND username = ?`, args: [schema, username] });
    this.forgetUser(schema, username);
  }
}
