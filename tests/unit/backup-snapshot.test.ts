// The snapshot protocol on real SQLite files (src/backup/snapshot.ts through the backup job): a backup holds exactly
// the commits made before its instant, those still in the WAL included, and none made while it copies, also when a
// checkpoint runs meanwhile; restore folds the WAL part in.

import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runBackupJob } from "../../src/backup/backup-job.ts";
import { restoreBackup } from "../../src/backup/restore.ts";
import { readTar } from "../../src/backup/tar.ts";
import { tempDir } from "../helpers/app.ts";

const dir = tempDir("burrow-snapshot-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function open(path: string): Database {
  const db = new Database(path, { create: true });
  db.run("PRAGMA journal_mode=WAL");
  db.run("PRAGMA wal_autocheckpoint=0");
  return db;
}

test("a backup holds the commits before its instant (WAL part included) and none made while it copies", async () => {
  const data = join(dir, "data");
  mkdirSync(data);
  const dbs = Object.fromEntries(["system.db", "development.db", "production.db"].map((n) => [n, open(join(data, n))]));
  const dev = dbs["development.db"]!;
  dev.run("CREATE TABLE t (n INTEGER PRIMARY KEY, pad TEXT)");
  const insert = (from: number, to: number) => {
    const q = dev.prepare("INSERT INTO t VALUES (?, hex(randomblob(500)))");
    dev.transaction(() => {
      for (let n = from; n <= to; n++) q.run(n);
    })();
  };
  insert(1, 100);
  let during = false;
  const out = join(dir, "b.tar");
  const r = await runBackupJob(
    { dataDir: data, out, id: "burrow-20260101T000000Z-0001", burrowVersion: "test" },
    {
      // Before the instant, after the job's own early checkpoint: these commits are only in the WAL.
      freeze: async () => (insert(101, 200), Date.now()),
      thaw: () => {},
      progress: () => {
        if (during) return;
        during = true;
        insert(201, 300); // after the instant
        dev.query("PRAGMA wal_checkpoint(PASSIVE)").get(); // may copy only up to the snapshot
      },
    },
  );
  expect(r.size).toBeGreaterThan(0);
  expect(during).toBe(true);
  const names = readTar(out, () => null).map((m) => m.name);
  expect(names).toEqual(["system.db", "development.db", "development.db-wal", "production.db", "manifest.json"]);
  const target = join(dir, "restored");
  restoreBackup(out, target);
  const copy = new Database(join(target, "development.db"), { readonly: true });
  expect(copy.query("SELECT count(*) AS c, max(n) AS m FROM t").get()).toEqual({ c: 200, m: 200 });
  expect((copy.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("delete");
  copy.close();
  for (const db of Object.values(dbs)) db.close();
  // The live database went on: all 300.
  const live = new Database(join(data, "development.db"), { readonly: true });
  expect(live.query("SELECT count(*) AS c FROM t").get()).toEqual({ c: 300 });
  live.close();
});
