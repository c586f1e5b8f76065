// One server per data directory: `serve` holds an exclusive SQLite lock (an OS-level fcntl lock) on
// `<dir>/burrow.lock` for as long as it runs. The operating system drops the lock when the process ends,
// however it ends (kill -9 included), so a stale lock never blocks a restart.

import { Database } from "bun:sqlite";
import { join } from "node:path";

export class DirectoryInUse extends Error {}

export interface DirLock {
  release(): void;
}

/** Take the data directory's lock, or throw DirectoryInUse when another process holds it. */
export function lockDataDir(dir: string): DirLock {
  const path = join(dir, "burrow.lock");
  const db = new Database(path, { create: true, readwrite: true });
  try {
    db.run("PRAGMA busy_timeout = 0");
    db.run("PRAGMA locking_mode = EXCLUSIVE");
    // An exclusive transaction that never ends: the write lock stays taken until the connection closes.
    db.run("BEGIN EXCLUSIVE");
  } catch (e) {
    db.close();
    if (/locked|busy/i.test((e as Error).message))
      throw new DirectoryInUse(
        `the data directory ${dir} is in use by another burrow serve (one server per data directory; its lock is ${path})`,
      );
    throw e;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
