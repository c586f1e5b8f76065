// `burrow backup` and `burrow restore`. A backup works next to a running server (it freezes writers for an instant
// through SQLite's own locks, or the libSQL server's with --store) and goes into <dir>/backups/ (with the newest
// backups.keep kept) or to --out; restore needs the server stopped, or a new directory (with --store: every node
// stopped, and --force to replace namespaces that hold data). Both draw a progress bar on a terminal.

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Config, ConfigError } from "../config.ts";
import type { Client } from "@libsql/core/api";
import { openClient } from "../db/open-client.ts";
import { openStore } from "../db/open-store.ts";
import { Backups, type BackupSettings } from "../backup/backups.ts";
import { DATABASES, newBackupId } from "../backup/manifest.ts";
import { runBackupWorker } from "../backup/run-backup.ts";
import { RestoreRefused, restoreBackup } from "../backup/restore.ts";
import { restoreToStore } from "../backup/restore-to-store.ts";
import { Settings } from "../system/settings.ts";
import { VERSION } from "../version.ts";
import { formatBytes, progressBar } from "./progress.ts";

const out = (s: string) => process.stdout.write(`${s}\n`);

export async function backup(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  let clients: Client[];
  let closeStore = () => {};
  if (config.store.url) {
    const store = await openStore(config.store);
    clients = [store.system, store.development, store.production];
    closeStore = store.close;
  } else {
    for (const name of DATABASES) {
      if (!existsSync(join(config.dir, name))) throw new ConfigError(`${config.dir} has no ${name}: not a Burrow data directory (--dir)`);
    }
    clients = DATABASES.map((n) => openClient(join(config.dir, n)));
    closeStore = () => {
      for (const c of clients) c.close();
    };
  }
  const store = config.store.url ? { store: config.store } : {};
  const bar = progressBar();
  const started = Date.now();
  try {
    const target = flags["--out"];
    if (typeof target === "string") {
      const file = resolve(target);
      if (existsSync(file)) throw new ConfigError(`${file} exists; choose a new file for --out`);
      const r = await runBackupWorker(
        { dataDir: config.dir, out: file, id: newBackupId(started), burrowVersion: VERSION, ...store },
        clients,
        (p) => bar.update(p.done, p.total, p.phase),
      );
      bar.finish(`backup: ${formatBytes(r.size)} in ${(r.durationMs / 1000).toFixed(1)} s (writes held for ${r.freezeMs} ms)`);
      out(file);
      return;
    }
    const settings = new Settings(clients[0]!);
    await settings.load();
    const backups = new Backups({
      dataDir: config.dir,
      version: VERSION,
      clients: () => clients,
      settings: () => settings.get("production").backups as unknown as BackupSettings,
      upload: () => () => Promise.reject(new Error("not uploaded from the CLI")),
      ...store,
    });
    const info = await backups.create({ s3: false, onProgress: (p) => bar.update(p.done, p.total, p.phase) });
    bar.finish(`backup: ${formatBytes(info.size)} in ${((info.durationMs ?? 0) / 1000).toFixed(1)} s, ${info.id}`);
    out(join(config.dir, info.file));
  } finally {
    closeStore();
  }
}

export async function restore(config: Config, file: string | undefined, flags: Record<string, string | boolean>): Promise<void> {
  if (!file) throw new ConfigError("restore needs the backup file: burrow restore <file> [--dir D]");
  const bar = progressBar();
  const started = Date.now();
  if (config.store.url) return restoreOntoStore(config, file, flags, bar, started);
  if (flags["--force"] === true)
    throw new ConfigError(
      "--force replaces namespaces on a libSQL server (--store); a data directory is swapped whole (the previous one is deleted unless --keep-old)",
    );
  let r;
  try {
    r = restoreBackup(resolve(file), config.dir, { keepOld: flags["--keep-old"] === true, progress: (d, t, p) => bar.update(d, t, p) });
  } catch (e) {
    if (e instanceof RestoreRefused) {
      bar.finish("restore refused; nothing was changed");
      throw new Error(`cannot restore ${file}: ${e.message}`);
    }
    throw e;
  }
  bar.finish(
    `restore: ${r.databases} databases and ${r.files} files checked and restored in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  out(`restored ${r.manifest.id} (taken ${new Date(r.manifest.created).toISOString()}) into ${config.dir}`);
  if (r.previous) out(`the previous data directory is kept at ${r.previous}`);
}

async function restoreOntoStore(
  config: Config,
  file: string,
  flags: Record<string, string | boolean>,
  bar: ReturnType<typeof progressBar>,
  started: number,
): Promise<void> {
  if (flags["--keep-old"] === true)
    throw new ConfigError(
      "--keep-old keeps a data directory aside; with --store, take a backup of the server first (burrow backup --store ...)",
    );
  let r;
  try {
    r = await restoreToStore(resolve(file), config.store, { force: flags["--force"] === true, progress: (d, t, p) => bar.update(d, t, p) });
  } catch (e) {
    if (e instanceof RestoreRefused) {
      bar.finish("restore refused; nothing was changed");
      throw new Error(`cannot restore ${file}: ${e.message}`);
    }
    throw e;
  }
  bar.finish(
    `restore: ${r.rows} rows in 3 databases and ${r.files} files checked and restored in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  out(
    `restored ${r.manifest.id} (taken ${new Date(r.manifest.created).toISOString()}) onto ${config.store.url} (${r.namespaces.join(", ")})`,
  );
}
