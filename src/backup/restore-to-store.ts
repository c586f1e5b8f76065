// Restores a backup file (of either store) onto a libSQL server: the archive is unpacked and checked as for a data
// directory (restore.ts: sizes, SHA-256, WAL folded in, integrity_check), then each database is copied row by row
// into its namespace (logical-copy.ts) inside one write transaction per namespace, all three committed at the end,
// so a failure part-way leaves the server as it was. Namespaces holding data are replaced only with `force`. The
// backup's files/ go to the node's data directory (the local file store). Every node must be stopped: a node that
// writes meanwhile makes the server end the restore's transaction (nothing is changed then).

import { resetStatements } from "../schema/change-log.ts";
import { Database } from "bun:sqlite";
import type { Transaction } from "@libsql/core/api";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_NAMES, NAMESPACE_TABLE, namespaceOf, openStore, type StoreLocation } from "../db/open-store.ts";
import { fileReader, remoteReader, remoteWriter } from "./copy-sides.ts";
import { copyDatabase, countRows, dropStatements, readSchema, type SchemaObject } from "./logical-copy.ts";
import type { Manifest } from "./manifest.ts";
import { RestoreRefused, checkBackupFile, stamp, unpackAndCheck } from "./restore.ts";

export interface StoreRestoreResult {
  manifest: Manifest;
  /** The namespaces written. */
  namespaces: string[];
  rows: number;
  files: number;
}

/** A transaction's stream on the server expires when idle for 10 s; the finished ones are kept busy meanwhile. */
const KEEPALIVE_MS = 2_000;

const serverOnly = (table: string) => table === NAMESPACE_TABLE;

export async function restoreToStore(
  file: string,
  location: StoreLocation,
  opts: { force?: boolean; progress?: (done: number, total: number, phase: string) => void; now?: number } = {},
): Promise<StoreRestoreResult> {
  checkBackupFile(file);
  const progress = opts.progress ?? (() => {});
  mkdirSync(location.dir, { recursive: true });
  const staging = join(location.dir, `.restore-${stamp(opts.now ?? Date.now())}-${process.pid}`);
  const filesDir = join(location.dir, "files");
  let store: Awaited<ReturnType<typeof openStore>> | null = null;
  const locals: Database[] = [];
  const txs: Transaction[] = [];
  let keepalive: Timer | undefined;
  try {
    mkdirSync(staging, { recursive: true });
    const manifest = unpackAndCheck(file, staging, progress);
    const files = manifest.members.filter((m) => m.name.startsWith("files/")).length;
    if (files > 0 && !opts.force && existsSync(filesDir) && readdirSync(filesDir).length > 0) {
      throw new RestoreRefused(`${filesDir} holds files; pass --force to replace them with the backup's`);
    }
    store = await openStore(location);
    const s = store;
    // Nothing is written before every namespace was looked at.
    const current = [];
    for (const name of DATABASE_NAMES) {
      const schema = await readSchema(remoteReader(s[name]));
      if (!opts.force && schema.some((o) => (o.type === "table" || o.type === "virtual") && !serverOnly(o.name))) {
        throw new RestoreRefused(
          `namespace "${namespaceOf(location, name)}" on ${location.url} holds data; pass --force to replace it with the backup`,
        );
      }
      current.push(schema);
    }
    for (const name of DATABASE_NAMES) {
      const db = new Database(join(staging, `${name}.db`), { readonly: true, safeIntegers: true });
      locals.push(db);
    }
    const schemas: SchemaObject[][] = [];
    let total = 0;
    for (const db of locals) {
      const schema = await readSchema(fileReader(db), serverOnly);
      schemas.push(schema);
      total += await countRows(fileReader(db), schema);
    }
    let done = 0;
    const finished: Transaction[] = [];
    keepalive = setInterval(() => {
      for (const tx of finished) tx.execute("SELECT 1").catch(() => {});
    }, KEEPALIVE_MS);
    for (const [i, name] of DATABASE_NAMES.entries()) {
      const tx = await s[name].transaction("write");
      txs.push(tx);
      const w = remoteWriter(tx);
      for (const sql of dropStatements(current[i]!, serverOnly)) await w.exec(sql);
      await copyDatabase(fileReader(locals[i]!), w, {
        schema: schemas[i],
        progress: (n) => progress((done += n), Math.max(total, done), `restoring ${name}.db (rows)`),
      });
      // Live streams resuming from an id they saw before the restore get a reset (src/schema/change-log.ts).
      if (name !== "system") for (const st of resetStatements(opts.now ?? Date.now())) await tx.execute(st);
      finished.push(tx);
    }
    clearInterval(keepalive);
    for (const tx of txs) await tx.commit();
    if (files > 0) {
      const old = `${filesDir}.pre-restore-${process.pid}`;
      if (existsSync(filesDir)) renameSync(filesDir, old);
      renameSync(join(staging, "files"), filesDir);
      rmSync(old, { recursive: true, force: true });
    }
    return { manifest, namespaces: DATABASE_NAMES.map((n) => namespaceOf(location, n)), rows: done, files };
  } catch (e) {
    if (/TRANSACTION_TIMEOUT|transaction timed out/i.test(String((e as Error)?.message))) {
      throw new RestoreRefused(
        `another client wrote to ${location.url} during the restore (is a node still running? stop every node first); nothing was changed`,
      );
    }
    throw e;
  } finally {
    clearInterval(keepalive);
    for (const tx of txs) tx.close();
    for (const db of locals) db.close();
    store?.close();
    rmSync(staging, { recursive: true, force: true });
  }
}
