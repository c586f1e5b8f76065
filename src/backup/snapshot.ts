// Copies a live WAL-mode SQLite database as it was at one instant, while writers go on (runs on the backup worker).
//
// bun:sqlite exposes neither sqlite3_backup nor sqlite_dbpage, and VACUUM INTO cannot run inside a transaction, so
// it cannot be pinned to the instant the other databases are. Instead: while every writer is held off (the caller
// freezes them), a connection opens a read transaction (the snapshot) and a second one runs a PASSIVE checkpoint,
// which reports the WAL's frame count (`log`) and how many are already in the database file (`checkpointed`).
// The read transaction then keeps both files safe to copy without any lock that writers wait for:
// - checkpointers never copy frames past an open reader's snapshot into the database file, and frames up to it
//   are the snapshot's own pages (a page read half-written is replaced by its WAL frame when the copy is replayed);
// - the WAL is not restarted (overwritten from the start) while a reader uses it.
// When every frame was already checkpointed, the database file alone is the snapshot (no WAL is copied: the reader
// then blocks checkpoints from writing the file at all). Otherwise the first `log` frames are copied after it.
// Opening the copy replays those frames (SQLite's WAL recovery), and journal_mode=DELETE folds them in, leaving
// one self-contained database file.

import { Database } from "bun:sqlite";
import { closeSync, fstatSync, openSync, readSync, writeSync, fsyncSync, existsSync } from "node:fs";

const WAL_HEADER = 32;
const FRAME_HEADER = 24;
const CHUNK = 4 * 1024 * 1024;

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
  const ck = checker.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
  const log = Number(ck.log);
  const walBytes = log > 0 && Number(ck.checkpointed) < log ? WAL_HEADER + log * (FRAME_HEADER + pageSize) : 0;
  return { name, path, reader, walBytes };
}

/** Copies `length` bytes (or the whole file) of `from` to a new file `to`; `progress` gets bytes copied. */
export function copyBytes(from: string, to: string, length: number | null, progress?: (n: number) => void): number {
  const src = openSync(from, "r");
  const dst = openSync(to, "wx");
  try {
    const total = length ?? fstatSync(src).size;
    const buf = Buffer.allocUnsafe(CHUNK);
    let done = 0;
    while (done < total) {
      const n = readSync(src, buf, 0, Math.min(CHUNK, total - done), done);
      if (n === 0) break;
      let off = 0;
      while (off < n) off += writeSync(dst, buf, off, n - off, done + off);
      done += n;
      progress?.(n);
    }
    if (done < total) throw new Error(`${from} is shorter than its snapshot (${done} of ${total} bytes)`);
    fsyncSync(dst);
    return done;
  } finally {
    closeSync(src);
    closeSync(dst);
  }
}

/** Copies a pinned database (and its WAL prefix) to `to` / `to-wal`, then ends the read transaction. */
export function copyPinned(p: PinnedDb, to: string, progress?: (n: number) => void): void {
  try {
    copyBytes(p.path, to, null, progress);
    if (p.walBytes > 0) {
      if (!existsSync(`${p.path}-wal`)) throw new Error(`${p.name}: its WAL file disappeared during the backup`);
      copyBytes(`${p.path}-wal`, `${to}-wal`, p.walBytes, progress);
    }
  } finally {
    if (p.reader.inTransaction) p.reader.run("ROLLBACK");
    p.reader.close();
  }
}

/** Folds a copied WAL into the database file and checks it; throws when the copy is not a sound database. */
export function materialize(path: string): void {
  const db = new Database(path, { readwrite: true, create: false });
  try {
    const mode = db.query("PRAGMA journal_mode=DELETE").get() as { journal_mode: string };
    if (mode.journal_mode !== "delete") throw new Error(`${path}: could not fold its WAL in (journal_mode ${mode.journal_mode})`);
    const rows = db.query("PRAGMA quick_check").all() as { quick_check: string }[];
    if (rows.length !== 1 || rows[0]!.quick_check !== "ok") throw new Error(`${path}: the copy failed its check: ${rows.slice(0, 3).map((r) => r.quick_check).join("; ")}`);
  } finally {
    db.close();
  }
}
