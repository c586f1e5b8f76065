// Restores a backup file into a data directory with no server on it (its lock, burrow.lock, is taken) or into a new
// one. Nothing is swapped in before everything is checked: the archive is unpacked into a staging directory next to
// the target, every member's size and SHA-256 is compared with the manifest, each database's WAL part is folded in,
// and each database passes PRAGMA integrity_check. Then the target is renamed aside, the staging directory renamed into its place, the old
// backups/ moved over, and the old directory removed (or kept with keepOld). A failure before the swap leaves the
// target as it was; a failed swap puts the old directory back.

import { Database } from "bun:sqlite";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DirectoryInUse, lockDataDir, type DirLock } from "../db/dir-lock.ts";
import { DATABASES, MANIFEST, checkMembers, isMemberName, parseManifest, type Manifest } from "./manifest.ts";
import { TarError, readTar } from "./tar.ts";
import { foldWal } from "./snapshot.ts";
import { resetStatements } from "../schema/change-log.ts";

const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/** A restore that was refused; the target was not changed. */
export class RestoreRefused extends Error {}

export interface RestoreResult {
  manifest: Manifest;
  databases: number;
  files: number;
  /** Where the previous data directory was kept (keepOld), else null. */
  previous: string | null;
}

function integrity(path: string): string | null {
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const rows = db.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
    return rows.length === 1 && rows[0]!.integrity_check === "ok"
      ? null
      : rows
          .slice(0, 3)
          .map((r) => r.integrity_check)
          .join("; ");
  } catch (e) {
    return (e as Error).message;
  } finally {
    db?.close();
  }
}

/**
 * Tell live streams the data went back in time: the change log's ids jump past any given before and a reset row
 * follows (src/schema/change-log.ts), so a client resuming from an id it saw before gets `reset`, not a replay.
 */
function markRestored(path: string, now: number): void {
  const db = new Database(path);
  try {
    db.transaction(() => {
      for (const s of resetStatements(now)) db.query(s.sql).run(...s.args);
    })();
  } finally {
    db.close();
  }
}

export function stamp(now: number): string {
  return new Date(now)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** Refuses a backup path that is not a readable file. */
export function checkBackupFile(file: string): void {
  try {
    if (!statSync(file).isFile()) throw new RestoreRefused(`${file} is not a file`);
  } catch (e) {
    if (e instanceof RestoreRefused) throw e;
    throw new RestoreRefused(`cannot read ${file}`);
  }
}

/** Unpacks and checks `file` into `staging`; throws RestoreRefused naming what is wrong. */
export function unpackAndCheck(file: string, staging: string, progress?: (done: number, total: number, phase: string) => void): Manifest {
  const total = statSync(file).size;
  let done = 0;
  let manifestText: string | null = null;
  let read;
  try {
    read = readTar(
      file,
      (m) => {
        if (m.name === MANIFEST) {
          if (m.size > MAX_MANIFEST_BYTES) throw new RestoreRefused("its manifest is too large");
          const parts: Uint8Array[] = [];
          return {
            write: (c) => void parts.push(Uint8Array.from(c)),
            close: () => void (manifestText = Buffer.concat(parts).toString("utf8")),
          };
        }
        if (!isMemberName(m.name))
          throw new RestoreRefused(`it holds ${JSON.stringify(m.name.slice(0, 200))}, which is not part of a Burrow backup`);
        const path = join(staging, m.name);
        mkdirSync(dirname(path), { recursive: true });
        const fd = openSync(path, "wx");
        let pos = 0;
        return {
          write: (c) => {
            let off = 0;
            while (off < c.length) off += writeSync(fd, c, off, c.length - off, pos + off);
            pos += c.length;
          },
          close: () => {
            fsyncSync(fd);
            closeSync(fd);
          },
        };
      },
      { progress: (n) => progress?.((done += n), total, "checking the backup") },
    );
  } catch (e) {
    if (e instanceof TarError) throw new RestoreRefused(`it is not a whole tar file: ${e.message}`);
    if ((e as { code?: string }).code === "EEXIST") throw new RestoreRefused("it holds a member twice");
    throw e;
  }
  if (manifestText === null) throw new RestoreRefused("it has no manifest.json (not a Burrow backup, or cut short)");
  let manifest: Manifest;
  try {
    manifest = parseManifest(manifestText);
  } catch (e) {
    throw new RestoreRefused((e as Error).message);
  }
  const problems = checkMembers(manifest, read);
  if (problems.length)
    throw new RestoreRefused(problems.slice(0, 3).join("; ") + (problems.length > 3 ? ` (and ${problems.length - 3} more)` : ""));
  for (const name of DATABASES) {
    progress?.(done, total, `integrity_check ${name}`);
    try {
      // The backup's WAL part (<name>-wal, beside the database as SQLite expects it) is replayed and folded in.
      foldWal(join(staging, name));
    } catch (e) {
      throw new RestoreRefused(`${name} cannot be opened: ${(e as Error).message}`);
    }
    if (existsSync(join(staging, `${name}-wal`))) throw new RestoreRefused(`${name}: its WAL could not be folded in`);
    const bad = integrity(join(staging, name));
    if (bad) throw new RestoreRefused(`${name} fails PRAGMA integrity_check: ${bad}`);
  }
  return manifest;
}

export function restoreBackup(
  file: string,
  target: string,
  opts: { keepOld?: boolean; progress?: (done: number, total: number, phase: string) => void; now?: number } = {},
): RestoreResult {
  checkBackupFile(file);
  const exists = existsSync(target);
  if (exists && !statSync(target).isDirectory()) throw new RestoreRefused(`${target} is not a directory`);
  if (exists && !existsSync(join(target, "system.db")) && readdirSync(target).some((n) => n !== "burrow.lock" && n !== "backups")) {
    throw new RestoreRefused(
      `${target} is neither empty nor a Burrow data directory; restore into a new or empty directory, or a data directory`,
    );
  }
  let oldLock: DirLock | null = null;
  if (exists) {
    try {
      oldLock = lockDataDir(target);
    } catch (e) {
      if (e instanceof DirectoryInUse)
        throw new RestoreRefused(
          `the data directory ${target} is in use by a running burrow serve; stop it first (or restore into another --dir)`,
        );
      throw e;
    }
  }
  const parent = dirname(target);
  const now = opts.now ?? Date.now();
  const staging = join(parent, `.${basename(target)}.restore-${stamp(now)}-${process.pid}`);
  let newLock: DirLock | null = null;
  try {
    mkdirSync(staging, { recursive: true });
    const manifest = unpackAndCheck(file, staging, opts.progress);
    for (const name of ["development.db", "production.db"]) markRestored(join(staging, name), now);
    // From here the staging directory is a whole data directory; lock it so no server starts on it mid-swap.
    newLock = lockDataDir(staging);
    let previous: string | null = null;
    if (exists) {
      previous = join(parent, `.${basename(target)}.pre-restore-${stamp(now)}`);
      renameSync(target, previous);
      try {
        renameSync(staging, target);
      } catch (e) {
        renameSync(previous, target);
        throw e;
      }
      // Backups are not part of a backup: the ones already there stay with the directory.
      if (existsSync(join(previous, "backups"))) {
        try {
          renameSync(join(previous, "backups"), join(target, "backups"));
        } catch {}
      }
      if (!opts.keepOld) {
        rmSync(previous, { recursive: true, force: true });
        previous = null;
      }
    } else renameSync(staging, target);
    const files = manifest.members.filter((m) => m.name.startsWith("files/")).length;
    return { manifest, databases: DATABASES.length, files, previous };
  } finally {
    newLock?.release();
    oldLock?.release();
    rmSync(staging, { recursive: true, force: true });
  }
}
