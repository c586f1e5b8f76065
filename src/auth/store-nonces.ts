// Replay protection shared by every node on one store: a signature's first use is an INSERT into the system
// database, refused when another node (or this one) recorded it first. Signatures arriving while one INSERT is in
// flight go together in the next one (group commit), so a busy node pays one round trip per batch, not per request.
// This node's own replays are refused from memory without a round trip.

import type { Client } from "@libsql/core/api";
import { MemoryNonceCache, type NonceCache } from "./nonces.ts";

export const STORE_NONCES_DDL = `CREATE TABLE IF NOT EXISTS _burrow_nonces (h TEXT PRIMARY KEY, expires INTEGER NOT NULL) STRICT, WITHOUT ROWID`;

/** Most signatures per INSERT (two arguments each, well under SQLite's bound-parameter limit). */
const BATCH = 400;

interface Pending {
  h: string;
  expiresAt: number;
  resolve(first: boolean): void;
  reject(e: unknown): void;
}

export class StoreNonceCache implements NonceCache {
  private readonly local: MemoryNonceCache;
  private pending: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly db: Client,
    private readonly now: () => number = Date.now,
  ) {
    this.local = new MemoryNonceCache(now);
  }

  firstUse(key: string, expiresAt: number): boolean | Promise<boolean> {
    if (!this.local.firstUse(key, expiresAt)) return false;
    const h = new Bun.CryptoHasher("sha256").update(key).digest("base64");
    return new Promise<boolean>((resolve, reject) => {
      this.pending.push({ h, expiresAt, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, BATCH);
        try {
          const rs = await this.db.execute({
            sql: `INSERT INTO _burrow_nonces (h, expires) VALUES ${batch.map(() => "(?, ?)").join(", ")} ON CONFLICT DO NOTHING RETURNING h`,
            args: batch.flatMap((p) => [p.h, p.expiresAt]),
          });
          const inserted = new Set(rs.rows.map((r) => r.h as string));
          for (const p of batch) p.resolve(inserted.has(p.h));
        } catch (e) {
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Forget signatures whose window has passed (maintenance, one node at a time). */
  async sweep(): Promise<void> {
    await this.db.execute({ sql: `DELETE FROM _burrow_nonces WHERE expires <= ?`, args: [this.now()] });
  }
}
