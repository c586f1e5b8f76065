// Import checkpoints: per input file and target schema, the last line whose batch committed, kept in the
// environment's database and written in the same transaction as that batch, so a batch and its checkpoint
// commit together and a rerun after any interruption continues right after it, with nothing twice. A live pull keeps
// its cursor (the last objectId read) beside the line.

import type { Client, InStatement } from "@libsql/core/api";

const CHECKPOINT_DDL = `CREATE TABLE IF NOT EXISTS _burrow_imports (
  source TEXT PRIMARY KEY NOT NULL, line INTEGER NOT NULL, imported INTEGER NOT NULL, rejected INTEGER NOT NULL,
  done INTEGER NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, updated INTEGER NOT NULL, cursor TEXT)`;

/** The checkpoint table, with the cursor column added to one made before it existed. */
export async function ensureCheckpointTable(db: Client): Promise<void> {
  await db.execute(CHECKPOINT_DDL);
  const cols = await db.execute("SELECT name FROM pragma_table_info('_burrow_imports')");
  if (!cols.rows.some((r) => r.name === "cursor")) await db.execute("ALTER TABLE _burrow_imports ADD COLUMN cursor TEXT");
}

export interface Checkpoint {
  line: number;
  imported: number;
  rejected: number;
  done: boolean;
  size: number;
  mtime: number;
  /** Where a live pull continues (the last objectId of the committed batch). */
  cursor?: string | null;
}

/** The checkpoint's identity: target schema and absolute input path. */
export const sourceId = (schema: string, path: string) => `${schema} ${path}`;

export async function readCheckpoint(db: Client, source: string): Promise<Checkpoint | null> {
  const rs = await db.execute({
    sql: `SELECT line, imported, rejected, done, size, mtime, cursor FROM _burrow_imports WHERE source = ?`,
    args: [source],
  });
  const r = rs.rows[0];
  if (!r) return null;
  return {
    line: Number(r.line),
    imported: Number(r.imported),
    rejected: Number(r.rejected),
    done: Number(r.done) === 1,
    size: Number(r.size),
    mtime: Number(r.mtime),
    cursor: r.cursor === null || r.cursor === undefined ? null : String(r.cursor),
  };
}

export function checkpointStatement(source: string, c: Checkpoint): InStatement {
  return {
    sql: `INSERT INTO _burrow_imports (source, line, imported, rejected, done, size, mtime, updated, cursor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT(source) DO UPDATE SET line = excluded.line, imported = excluded.imported, rejected = excluded.rejected,
          done = excluded.done, size = excluded.size, mtime = excluded.mtime, updated = excluded.updated, cursor = excluded.cursor`,
    args: [source, c.line, c.imported, c.rejected, c.done ? 1 : 0, c.size, c.mtime, Date.now(), c.cursor ?? null],
  };
}

export function clearCheckpoint(source: string): InStatement {
  return { sql: `DELETE FROM _burrow_imports WHERE source = ?`, args: [source] };
}
