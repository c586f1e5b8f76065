// Custom code's cache shared by every node on one store: entries are rows of the system database (per
// environment, with their expiry), so a value set by a method on one node is read by a method on another.

import type { Client } from "@libsql/core/api";
import type { EnvName } from "../request-context.ts";
import { type CodeCache, MAX_TTL_MS, checkEntry } from "./code-cache.ts";
import { badRequest } from "../errors.ts";

export const STORE_CODE_CACHE_DDL = `CREATE TABLE IF NOT EXISTS _burrow_code_cache (env TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, expires INTEGER NOT NULL,
  PRIMARY KEY (env, key)) STRICT, WITHOUT ROWID`;

export class StoreCodeCache implements CodeCache {
  constructor(
    private readonly db: Client,
    private readonly now: () => number = Date.now,
  ) {}

  async get(env: EnvName, key: string): Promise<string | null> {
    checkEntry(key);
    const rs = await this.db.execute({
      sql: `SELECT value FROM _burrow_code_cache WHERE env = ? AND key = ? AND expires > ?`,
      args: [env, key, this.now()],
    });
    return (rs.rows[0]?.value as string | undefined) ?? null;
  }

  async set(env: EnvName, key: string, value: string, ttlMs: number): Promise<void> {
    checkEntry(key, value);
    if (typeof ttlMs !== "number" || Number.isNaN(ttlMs)) throw badRequest("cache: ttlMs must be a number of milliseconds");
    const ttl = ttlMs <= 0 || ttlMs > MAX_TTL_MS ? MAX_TTL_MS : ttlMs;
    await this.db.execute({
      sql: `INSERT INTO _burrow_code_cache (env, key, value, expires) VALUES (?, ?, ?, ?) ON CONFLICT (env, key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
      args: [env, key, value, this.now() + ttl],
    });
  }

  async delete(env: EnvName, key: string): Promise<boolean> {
    checkEntry(key);
    const rs = await this.db.execute({
      sql: `DELETE FROM _burrow_code_cache WHERE env = ? AND key = ? RETURNING expires`,
      args: [env, key],
    });
    return rs.rows.length > 0 && Number(rs.rows[0]!.expires) > this.now();
  }

  /** Remove expired entries (maintenance, one node at a time). */
  async sweep(): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_code_cache WHERE expires <= ?`, args: [this.now()] });
  }
}
