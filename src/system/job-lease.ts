// Background jobs (trash drains, session and cache sweeps) that must run on one node at a time: a node runs a
// job's round only while it holds the job's lease, a row of the system database it takes over once the lease
// has run out. One node on its own store always holds every lease (MemoryJobLeases).

import type { Client } from "@libsql/core/api";

export interface JobLeases {
  /** Whether this node holds (or now takes) the lease of `job` for the next `ttlMs`. */
  claim(job: string, ttlMs: number): Promise<boolean>;
}

export class MemoryJobLeases implements JobLeases {
  async claim(): Promise<boolean> {
    return true;
  }
}

export const JOB_LEASES_DDL = `CREATE TABLE IF NOT EXISTS _burrow_job_leases (job TEXT PRIMARY KEY, holder TEXT NOT NULL, until INTEGER NOT NULL) STRICT, WITHOUT ROWID`;

export class StoreJobLeases implements JobLeases {
  /** This node, for the lease rows (random per process: a restarted node is a new holder). */
  readonly holder = crypto.randomUUID();

  constructor(
    private readonly db: Client,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(job: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const rs = await this.db.execute({
      sql: `INSERT INTO _burrow_job_leases (job, holder, until) VALUES (?, ?, ?)
            ON CONFLICT (job) DO UPDATE SET holder = excluded.holder, until = excluded.until WHERE until <= ? OR holder = excluded.holder
            RETURNING holder`,
      args: [job, this.holder, now + ttlMs, now],
    });
    return rs.rows[0]?.holder === this.holder;
  }
}
