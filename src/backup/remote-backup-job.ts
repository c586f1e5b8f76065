// One backup of databases on a libSQL server, as the backup worker runs it: a read transaction per database, each
// pinned while the host holds every writer off (one write transaction per database on the server, as for the
// embedded store, so the three snapshots are of one instant), then each database copied row by row into a local
// SQLite file (logical-copy.ts; the three at once, so no transaction's stream sits idle long enough to expire),
// and those files packed with the local files/ into the same tar format as an embedded backup (backup-job.ts):
// either kind of backup restores into a data directory or onto a server.

import { Database } from "bun:sqlite";
import type { Client, Transaction } from "@libsql/core/api";
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { DATABASE_NAMES, NAMESPACE_TABLE, openRemoteExact } from "../db/open-store.ts";
import { publishArchive, writeArchive, type BackupJobHooks, type BackupJobInput, type BackupJobResult } from "./backup-job.ts";
import { fileWriter, remoteReader } from "./copy-sides.ts";
import { holdDrain } from "./drain-hold.ts";
import { copyDatabase, countRows, readSchema, type SchemaObject } from "./logical-copy.ts";

const notCopied = (table: string) => table === NAMESPACE_TABLE;

export async function runRemoteBackupJob(input: BackupJobInput, hooks: BackupJobHooks): Promise<BackupJobResult> {
  const started = Date.now();
  const { dataDir, out, id } = input;
  const store = input.store!;
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial`;
  // Removed by Backups.cleanLeftovers if this process dies mid-way (the name starts `.tmp-burrow-`).
  const staging = join(dirname(out), `.tmp-${id}`);
  const release = holdDrain(dataDir, id);
  const clients: Client[] = DATABASE_NAMES.map((n) => openRemoteExact(store, n));
  const txs: Transaction[] = [];
  try {
    mkdirSync(staging, { recursive: true });
    for (const c of clients) txs.push(await c.transaction("read"));
    const frozenAt = performance.now();
    const created = await hooks.freeze();
    try {
      // The first read of each transaction is its snapshot.
      await Promise.all(txs.map((tx) => tx.execute("SELECT count(*) FROM sqlite_master")));
    } finally {
      hooks.thaw();
    }
    const freezeMs = Math.round(performance.now() - frozenAt);

    const readers = txs.map(remoteReader);
    const schemas: SchemaObject[][] = [];
    let total = 0;
    for (const r of readers) {
      const schema = await readSchema(r, notCopied);
      schemas.push(schema);
      total += await countRows(r, schema);
    }
    let done = 0;
    const paths = DATABASE_NAMES.map((n) => join(staging, `${n}.db`));
    await Promise.all(
      DATABASE_NAMES.map(async (n, i) => {
        const db = new Database(paths[i]!, { create: true, readwrite: true });
        try {
          db.run("PRAGMA journal_mode = OFF");
          db.run("PRAGMA synchronous = OFF");
          const w = fileWriter(db);
          await copyDatabase(readers[i]!, w, {
            schema: schemas[i],
            progress: (rows) => hooks.progress((done += rows), Math.max(total, done), `copying ${n}.db (rows)`),
          });
          w.finish();
        } finally {
          db.close();
        }
        txs[i]!.close();
      }),
    );
    const { files } = writeArchive(
      partial,
      { id, created, burrowVersion: input.burrowVersion },
      DATABASE_NAMES.map((n, i) => ({ name: `${n}.db`, path: paths[i]!, walBytes: 0 })),
      dataDir,
      hooks,
    );
    return publishArchive(partial, out, hooks, { id, created, durationMs: Date.now() - started, freezeMs, files });
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    for (const tx of txs) tx.close();
    for (const c of clients) c.close();
    rmSync(staging, { recursive: true, force: true });
    release();
  }
}
