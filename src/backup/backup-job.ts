// One backup, as the backup worker runs it: freeze the writers for an instant (the host does that), pin a read
// snapshot of system.db, development.db and production.db inside it (snapshot.ts), thaw, and write one tar file
// straight from the live files: each database file and the part of its WAL that belongs to the snapshot
// (`<name>-wal`, folded in by restore), the local files/, and manifest.json (sizes and SHA-256 of every member)
// last. The snapshots are held until the file is complete and on disk. Written as <out>.partial and renamed when
// complete, so a backup file is always whole.

import { closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Database } from "bun:sqlite";
import { holdDrain } from "./drain-hold.ts";
import { DATABASES, FORMAT, FORMAT_VERSION, MANIFEST, type Manifest, type ManifestMember } from "./manifest.ts";
import { FLUSH_EVERY, checkpointAhead, openForSnapshot, pin, unpin, type PinnedDb } from "./snapshot.ts";
import { TarWriter } from "./tar.ts";
import type { StoreLocation } from "../db/open-store.ts";

/** Bounds the walk of files/ (one directory per upload). */
const MAX_FILES = 5_000_000;

export interface BackupJobInput {
  dataDir: string;
  /** The backup file to write. */
  out: string;
  id: string;
  burrowVersion: string;
  /** The databases are on a libSQL server (remote-backup-job.ts copies them); absent or url null: files in dataDir. */
  store?: StoreLocation;
}

export interface BackupJobResult {
  id: string;
  file: string;
  size: number;
  created: number;
  durationMs: number;
  /** How long writers were held off, ms. */
  freezeMs: number;
  files: number;
}

export interface BackupJobHooks {
  /** Hold every writer off; resolves with the instant (ms since 1970) once they are. */
  freeze(): Promise<number>;
  /** Let the writers go again. */
  thaw(): void;
  progress(done: number, total: number, phase: string): void;
}

/** Regular files under files/ (relative names, sorted), without the stores' temp files. */
export function listStoredFiles(root: string): { rel: string; size: number }[] {
  const out: { rel: string; size: number }[] = [];
  if (!existsSync(root)) return out;
  const stack = [""];
  while (stack.length) {
    const rel = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(join(root, rel));
    } catch {
      continue; // removed meanwhile (an upload's directory is removed with its file)
    }
    for (const n of names.sort()) {
      if (n.startsWith(".~")) continue;
      const r = rel ? `${rel}/${n}` : n;
      let st;
      try {
        st = lstatSync(join(root, r));
      } catch {
        continue;
      }
      if (st.isDirectory()) stack.push(r);
      else if (st.isFile()) out.push({ rel: r, size: st.size });
      if (out.length > MAX_FILES) throw new Error(`files/ holds more than ${MAX_FILES} files`);
    }
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** A database as it goes into the archive: its file, and the bytes of its WAL that belong to the backup (0: none). */
export interface ArchivedDb {
  name: string;
  path: string;
  walBytes: number;
}

/**
 * Writes the backup file `partial`: each database (and its WAL part), the local files/ of `dataDir`, and the
 * manifest last; flushed to disk before it returns.
 */
export function writeArchive(
  partial: string,
  head: { id: string; created: number; burrowVersion: string },
  dbs: readonly ArchivedDb[],
  dataDir: string,
  hooks: Pick<BackupJobHooks, "progress">,
): { files: number; total: number } {
  const stored = listStoredFiles(join(dataDir, "files"));
  const total = dbs.reduce((n, p) => n + statSync(p.path).size + p.walBytes, 0) + stored.reduce((n, f) => n + f.size, 0);
  let done = 0;
  const progress = (phase: string) => (n: number) => hooks.progress((done += n), Math.max(total, done), phase);
  const fd = openSync(partial, "w");
  const members: ManifestMember[] = [];
  let files = 0;
  try {
    const tar = new TarWriter(fd, FLUSH_EVERY);
    for (const p of dbs) {
      members.push({ name: p.name, ...tar.addFile(p.name, p.path, { progress: progress(`copying ${p.name}`) }) });
      if (p.walBytes > 0)
        members.push({
          name: `${p.name}-wal`,
          ...tar.addFile(`${p.name}-wal`, `${p.path}-wal`, { length: p.walBytes, progress: progress(`copying ${p.name}`) }),
        });
    }
    for (const f of stored) {
      try {
        members.push({
          name: `files/${f.rel}`,
          ...tar.addFile(`files/${f.rel}`, join(dataDir, "files", f.rel), { progress: progress("copying files/") }),
        });
        files++;
      } catch (e) {
        // Gone since the listing: an upload that was discarded (a file of the snapshot cannot go: drain-hold.ts).
        if ((e as { code?: string }).code !== "ENOENT") throw e;
      }
    }
    const manifest: Manifest = {
      format: FORMAT,
      formatVersion: FORMAT_VERSION,
      id: head.id,
      created: head.created,
      burrowVersion: head.burrowVersion,
      members,
    };
    tar.addBytes(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 1)));
    tar.finish();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { files, total };
}

/** Puts the finished archive in its place (renamed: a backup file is always whole) and answers the job's result. */
export function publishArchive(
  partial: string,
  out: string,
  hooks: Pick<BackupJobHooks, "progress">,
  r: Omit<BackupJobResult, "file" | "size">,
): BackupJobResult {
  renameSync(partial, out);
  hooks.progress(1, 1, "done");
  return { ...r, file: out, size: statSync(out).size };
}

export async function runBackupJob(input: BackupJobInput, hooks: BackupJobHooks): Promise<BackupJobResult> {
  const started = Date.now();
  const { dataDir, out, id } = input;
  for (const name of DATABASES) {
    if (!existsSync(join(dataDir, name))) throw new Error(`${dataDir} has no ${name}: not a Burrow data directory`);
  }
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial`;
  const release = holdDrain(dataDir, id);
  const conns: { name: string; path: string; reader: Database; checker: Database }[] = [];
  let pinned: PinnedDb[] = [];
  try {
    for (const name of DATABASES) {
      const path = join(dataDir, name);
      const reader = openForSnapshot(path);
      const checker = openForSnapshot(path);
      conns.push({ name, path, reader, checker });
      checkpointAhead(checker);
    }
    const frozenAt = performance.now();
    const created = await hooks.freeze();
    try {
      pinned = conns.map((c) => pin(c.name, c.path, c.reader, c.checker));
    } finally {
      hooks.thaw();
    }
    const freezeMs = Math.round(performance.now() - frozenAt);
    for (const c of conns) c.checker.close();

    const { files } = writeArchive(
      partial,
      { id, created, burrowVersion: input.burrowVersion },
      pinned.map((p) => ({ name: p.name, path: p.path, walBytes: p.walBytes })),
      dataDir,
      hooks,
    );
    for (const p of pinned.splice(0)) unpin(p);
    return publishArchive(partial, out, hooks, { id, created, durationMs: Date.now() - started, freezeMs, files });
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    for (const p of pinned) {
      try {
        unpin(p);
      } catch {}
    }
    for (const c of conns) {
      try {
        c.reader.close();
        c.checker.close();
      } catch {}
    }
    release();
  }
}
