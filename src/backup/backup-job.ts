// One backup, as the backup worker runs it: freeze the writers for an instant (the host does that), pin a read
// snapshot of system.db, development.db and production.db inside it (snapshot.ts), thaw, copy the snapshots, fold
// their WALs in, and write one tar file: the three databases, the local files/, and manifest.json (sizes and
// SHA-256 of every member) last. Written as <out>.partial and renamed when complete, so a backup file is whole.

import { closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Database } from "bun:sqlite";
import { holdDrain } from "./drain-hold.ts";
import { DATABASES, FORMAT, FORMAT_VERSION, MANIFEST, type Manifest, type ManifestMember } from "./manifest.ts";
import { checkpointAhead, copyPinned, materialize, openForSnapshot, pin, type PinnedDb } from "./snapshot.ts";
import { TarWriter } from "./tar.ts";

/** Bounds the walk of files/ (one directory per upload). */
const MAX_FILES = 5_000_000;

export interface BackupJobInput {
  dataDir: string;
  /** The backup file to write. */
  out: string;
  id: string;
  burrowVersion: string;
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

export async function runBackupJob(input: BackupJobInput, hooks: BackupJobHooks): Promise<BackupJobResult> {
  const started = Date.now();
  const { dataDir, out, id } = input;
  for (const name of DATABASES) {
    if (!existsSync(join(dataDir, name))) throw new Error(`${dataDir} has no ${name}: not a Burrow data directory`);
  }
  mkdirSync(dirname(out), { recursive: true });
  const tmp = join(dirname(out), `.tmp-${id}`);
  const partial = `${out}.partial`;
  mkdirSync(tmp);
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

    const stored = listStoredFiles(join(dataDir, "files"));
    const copyBytes = pinned.reduce((n, p) => n + statSync(p.path).size + p.walBytes, 0);
    const total = copyBytes * 2 + stored.reduce((n, f) => n + f.size, 0);
    let done = 0;
    const step = (phase: string) => (n: number) => hooks.progress((done += n), Math.max(total, done), phase);

    for (const p of pinned) copyPinned(p, join(tmp, p.name), step(`copying ${p.name}`));
    pinned = [];
    for (const name of DATABASES) materialize(join(tmp, name));

    const fd = openSync(partial, "w");
    const members: ManifestMember[] = [];
    let files = 0;
    try {
      const tar = new TarWriter(fd);
      for (const name of DATABASES) members.push({ name, ...tar.addFile(name, join(tmp, name), step("writing the backup")) });
      for (const f of stored) {
        try {
          members.push({ name: `files/${f.rel}`, ...tar.addFile(`files/${f.rel}`, join(dataDir, "files", f.rel), step("writing the backup")) });
          files++;
        } catch (e) {
          // Gone since the listing: an upload that was discarded (a file of the snapshot cannot go: drain-hold.ts).
          if ((e as { code?: string }).code !== "ENOENT") throw e;
        }
      }
      const manifest: Manifest = { format: FORMAT, formatVersion: FORMAT_VERSION, id, created, burrowVersion: input.burrowVersion, members };
      tar.addBytes(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 1)));
      tar.finish();
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, out);
    hooks.progress(total, total, "done");
    return { id, file: out, size: statSync(out).size, created, durationMs: Date.now() - started, freezeMs, files };
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    for (const p of pinned) {
      try {
        if (p.reader.inTransaction) p.reader.run("ROLLBACK");
      } catch {}
    }
    for (const c of conns) {
      try {
        c.reader.close();
        c.checker.close();
      } catch {}
    }
    rmSync(tmp, { recursive: true, force: true });
    release();
  }
}
