// The backups of a data directory: make one (backup-job.ts on a worker, run-backup.ts; remote-backup-job.ts when the
// databases are on a libSQL server), list them with size and time, find, delete, keep only the newest N, and upload
// one to the S3 file store. Backups live in <data dir>/backups/<id>.tar, each with <id>.json beside it
// ({id, file, size, created, durationMs, s3?}).

import type { Client } from "@libsql/core/api";
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { ApiError, conflict, notFound } from "../errors.ts";
import { diskFullError, isDiskFull } from "../db/disk-full.ts";
import type { StoreLocation } from "../db/open-store.ts";
import { HOLD_MAX_AGE_MS, backupsDir } from "./drain-hold.ts";
import { BACKUP_ID, newBackupId } from "./manifest.ts";
import { runBackupWorker, type Progress } from "./run-backup.ts";

/** A backup as the admin API shows it. `file` is relative to the data directory. */
export interface BackupInfo {
  id: string;
  file: string;
  size: number;
  /** The instant the backup holds (ms since 1970). */
  created: number;
  /** null for a backup file put there by hand (no record of how long it took). */
  durationMs: number | null;
  /** Present when the backup was uploaded to the S3 file store (error: the upload failed; the file is kept here). */
  s3?: { key: string; error?: string };
}

export interface BackupSettings {
  every: number;
  keep: number;
  s3: boolean;
}

/** Uploads a backup file to the S3 store; resolves with the object's key. */
export type S3Upload = (name: string, path: string) => Promise<string>;

export class Backups {
  readonly dir: string;
  #running: { id: string; progress: Progress | null; done: Promise<BackupInfo> } | null = null;

  constructor(
    private readonly opts: {
      dataDir: string;
      version: string;
      /** system, development, production: the writers a backup holds off for its instant. */
      clients: () => readonly Client[];
      settings: () => BackupSettings;
      upload: () => S3Upload;
      now?: () => number;
      /** Where the databases are: on a libSQL server (url set) a backup copies them row by row (remote-backup-job.ts). */
      store?: StoreLocation;
    },
  ) {
    this.dir = backupsDir(opts.dataDir);
  }

  /** The backup being made now, with its progress. */
  get running(): { id: string; progress: Progress | null } | null {
    return this.#running && { id: this.#running.id, progress: this.#running.progress };
  }

  /** Makes a backup now (one at a time: 409 while one runs); uploads it when asked; then keeps the newest `keep`. */
  async create(opts: { s3?: boolean; onProgress?: (p: Progress) => void } = {}): Promise<BackupInfo> {
    if (this.#running) throw conflict(`a backup is being made (${this.#running.id}); try again when it is done`);
    const id = newBackupId(this.opts.now?.() ?? Date.now());
    const state: { id: string; progress: Progress | null; done: Promise<BackupInfo> } = {
      id,
      progress: null,
      done: null as unknown as Promise<BackupInfo>,
    };
    state.done = (async () => {
      const out = join(this.dir, `${id}.tar`);
      let result;
      try {
        result = await runBackupWorker(
          {
            dataDir: this.opts.dataDir,
            out,
            id,
            burrowVersion: this.opts.version,
            ...(this.opts.store?.url ? { store: this.opts.store } : {}),
          },
          this.opts.clients(),
          (p) => {
            state.progress = p;
            opts.onProgress?.(p);
          },
        );
      } catch (e) {
        // The job removed its partial file; a full disk is the one 507 of every write (db/disk-full.ts).
        if (isDiskFull(e)) throw diskFullError(e);
        throw new ApiError(500, `the backup failed: ${(e as Error).message}`, { cause: e });
      }
      const info: BackupInfo = { id, file: `backups/${id}.tar`, size: result.size, created: result.created, durationMs: result.durationMs };
      try {
        this.#record(info);
      } catch (e) {
        // No record, no backup: a .tar without its .json is not left to look like one made by hand.
        rmSync(out, { force: true });
        rmSync(join(this.dir, `${id}.json.tmp`), { force: true });
        throw e;
      }
      if (opts.s3 ?? this.opts.settings().s3) {
        const key = `backups/${id}.tar`;
        try {
          info.s3 = { key: await this.opts.upload()(`${id}.tar`, out) };
        } catch (e) {
          info.s3 = { key, error: (e as Error).message.split("\n")[0]!.slice(0, 300) };
        }
        this.#record(info);
      }
      this.prune(this.opts.settings().keep);
      return info;
    })();
    this.#running = state;
    try {
      return await state.done;
    } finally {
      this.#running = null;
    }
  }

  #record(info: BackupInfo): void {
    const path = join(this.dir, `${info.id}.json`);
    writeFileSync(`${path}.tmp`, `${JSON.stringify(info)}\n`);
    renameSync(`${path}.tmp`, path);
  }

  /** Every backup in backups/, newest first. */
  list(): BackupInfo[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: BackupInfo[] = [];
    for (const n of names) {
      const id = n.endsWith(".tar") ? n.slice(0, -4) : "";
      if (!BACKUP_ID.test(id)) continue;
      const info = this.#read(id);
      if (info) out.push(info);
    }
    return out.sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
  }

  #read(id: string): BackupInfo | null {
    const tar = join(this.dir, `${id}.tar`);
    let size: number;
    let mtime: number;
    try {
      const st = statSync(tar);
      size = st.size;
      mtime = st.mtimeMs;
    } catch {
      return null;
    }
    try {
      const rec = JSON.parse(readFileSync(join(this.dir, `${id}.json`), "utf8")) as BackupInfo;
      return {
        id,
        file: `backups/${id}.tar`,
        size,
        created: rec.created,
        durationMs: rec.durationMs ?? null,
        ...(rec.s3 ? { s3: rec.s3 } : {}),
      };
    } catch {
      return { id, file: `backups/${id}.tar`, size, created: Math.round(mtime), durationMs: null };
    }
  }

  /** One backup, or 404 (an id that is not a backup's is 404 too, never a path). */
  get(id: string): BackupInfo {
    const info = BACKUP_ID.test(id) ? this.#read(id) : null;
    if (!info) throw notFound(`no backup "${id.slice(0, 64)}"`);
    return info;
  }

  /** The backup file's path on disk. */
  path(id: string): string {
    return join(this.opts.dataDir, this.get(id).file);
  }

  remove(id: string): void {
    if (this.#running?.id === id) throw conflict("that backup is being made");
    this.get(id);
    rmSync(join(this.dir, `${id}.tar`), { force: true });
    rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  /** Deletes all but the newest `keep` backups; answers the ids removed. S3 copies are left to the bucket's own rules. */
  prune(keep: number): string[] {
    const removed: string[] = [];
    for (const b of this.list().slice(Math.max(1, keep))) {
      rmSync(join(this.dir, `${b.id}.tar`), { force: true });
      rmSync(join(this.dir, `${b.id}.json`), { force: true });
      removed.push(b.id);
    }
    return removed;
  }

  /** Leftovers of a backup that died (its temp directory, partial file and drain mark), once older than a running backup can be. */
  cleanLeftovers(now = Date.now()): void {
    if (!existsSync(this.dir)) return;
    for (const n of readdirSync(this.dir)) {
      if (!(n.startsWith(".tmp-burrow-") || n.startsWith(".hold-burrow-") || (n.startsWith("burrow-") && n.endsWith(".tar.partial"))))
        continue;
      try {
        if (now - statSync(join(this.dir, n)).mtimeMs > HOLD_MAX_AGE_MS) rmSync(join(this.dir, n), { recursive: true, force: true });
      } catch {}
    }
  }
}
