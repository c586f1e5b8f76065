// Copies a live WAL-mode SQLite database as it was at one instant, while writers go on (runs on the backup worker).
//
// bun:sqlite exposes neither sqlite3_backup nor sqlite_dbpage, and VACUUM INTO cannot run inside a transaction, so
// it cannot be pinned to the instant the other databases are. Instead: while every writer is held off (the caller
// freezes them), a connection opens a read transaction (the snapshot) and a second one asks for a NOOP checkpoint,
// which reports the WAL's frame count (`log`) and how many are already in the database file (`checkpointed`).
// The read transaction then keeps both files safe to copy without any lock that writers wait for:
// - checkpointers never copy frames past an open reader's snapshot into the database file, and frames up to it
//   are the snapshot's own pages (a page read half-written is replaced by its WAL frame when the copy is replayed);
// - the WAL is not restarted (overwritten from the start) while a reader uses it.
// When every frame was already checkpointed, the database file alone is the snapshot (no WAL is copied: the reader
// then blocks checkpoints from writing the file at all). Otherwise the first `log` frames are copied after it.
// Opening the copy replays those frames (SQLite's WAL recovery; restore does it), and journal_mode=DELETE folds
// them in, leaving one self-contained database file. While the snapshot is held, the server's own checkpoints have
// nothing left to copy, so they make no fsync that would wait behind the backup's writes.

import { Database } from "bun:sqlite";

const WAL_HEADER = 32;
const FRAME_HEADER = 24;
/**
 * Written data is flushed every this many bytes: a backlog of gigabytes of dirty pages would make the server's own
 * fsyncs (its WAL checkpoints) wait behind it on file systems that order data and metadata (ext4).
 */
export const FLUSH_EVERY = 16 * 1024 * 1024;

export interface PinnedDb {
  name: string;
  path: string;
  reader: Database;
  /** WAL bytes that belong to the snapshot (0: the database file alone is the snapshot). */
  walBytes: number;
}

/** Opens a connection that will hold the snapshot; done before the freeze, so the freeze stays short. */
export function openForSnapshot(path: string): Database {
  const db = new Database(path, { readwrite: true, create: false });
  db.run("PRAGMA busy_timeout = 5000");
  return db;
}

/** Checkpoint what can be checkpointed now (on the second connection, the checker), so that the checkpoint inside the freeze has little left to do. */
export function checkpointAhead(db: Database): void {
  db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
}

/** Inside the freeze: start the read transaction and learn how much of the WAL it covers. */
export function pin(name: string, path: string, reader: Database, checker: Database): PinnedDb {
  reader.run("BEGIN");
  reader.query("SELECT count(*) FROM sqlite_master").get();
  const pageSize = Number((reader.query("PRAGMA page_size").get() as { page_size: number }).page_size);
  // NOOP reports without copying anything (no I/O while writers wait); an SQLite without NOOP runs PASSIVE instead.
  const ck = checker.query("PRAGMA wal_checkpoint(NOOP)").get() as { busy: number; log: number; checkpointed: number };
  const log = Number(ck.log);
  const walBytes = log > 0 && Number(ck.checkpointed) < log ? WAL_HEADER + log * (FRAME_HEADER + pageSize) : 0;
  return { name, path, reader, walBytes };
}

/** Ends a pinned snapshot (after its files were copied). */
export function unpin(p: PinnedDb): void {
  try {
    if (p.reader.inTransaction) p.reader.run("ROLLBACK");
  } finally {
    p.reader.close();
  }
}

/** Folds a copied WAL (`<path>-wal`, if any) into the database file, leaving one self-contained file. */
export function foldWal(path: string): void {
  const db = new Database(path, { readwrite: true, create: false });
  try {
    const mode = db.query("PRAGMA journal_mode=DELETE").get() as { journal_mode: string };
    if (mode.journal_mode !== "delete") throw new Error(`${path}: could not fold its WAL in (journal_mode ${mode.journal_mode})`);
  } finally {
    db.close();
  }
}
