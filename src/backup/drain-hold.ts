// While a backup copies files/, files must not leave it: a file deleted after the backup's instant is still
// referenced by the databases the backup holds. A backup (in this process or another one, such as the CLI next to
// a running server) marks itself with <data dir>/backups/.hold-<id>; the file trash is not emptied while a mark
// younger than HOLD_MAX_AGE_MS exists (an older one is left by a backup that died, and is ignored).

import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HOLD_MAX_AGE_MS = 6 * 3600_000;
const PREFIX = ".hold-";

export function backupsDir(dataDir: string): string {
  return join(dataDir, "backups");
}

/** Marks a backup as running; returns the function that removes the mark. */
export function holdDrain(dataDir: string, id: string): () => void {
  const dir = backupsDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${PREFIX}${id}`);
  try {
    writeFileSync(path, `${process.pid}\n`);
  } catch (e) {
    // A mark that could not be written (a full disk) must not stay: it would hold the trash for HOLD_MAX_AGE_MS.
    rmSync(path, { force: true });
    throw e;
  }
  return () => rmSync(path, { force: true });
}

/** Whether a running backup asks the trash to wait. */
export function drainHeld(dataDir: string, now = Date.now()): boolean {
  const dir = backupsDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  for (const n of names) {
    if (!n.startsWith(PREFIX)) continue;
    try {
      if (now - statSync(join(dir, n)).mtimeMs < HOLD_MAX_AGE_MS) return true;
    } catch {}
  }
  return false;
}
