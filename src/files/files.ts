// Binary fields' files: saving uploads to the environment's file store, the _burrow_files rows that tie each
// file to its object and field, the trash that triggers fill when objects or fields drop files, and serving
// /_files/<env>/<id>/<name>. Deleting an object (any way, cascade included) or replacing a file trashes the
// old file in the same transaction; the trash is then emptied from the store.

import type { Client, InStatement } from "@libsql/core/api";
import { join } from "node:path";
import { ApiError, notFound } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { EnvName } from "../system/environments.ts";
import type { Settings } from "../system/settings.ts";
import { LocalFileStore } from "./local-store.ts";
import { S3FileStore } from "./s3-store.ts";
import { FILE_ANSWER_HEADERS, type FileMeta, type FileStore } from "./store.ts";
import type { Upload } from "./upload.ts";
import { drainHeld } from "../backup/drain-hold.ts";
import { FILES_PATH } from "../schema/json-sql.ts";
import { readLayouts } from "../schema/migrate.ts";
import { tableName } from "../schema/layout.ts";
import { primaryKeyOf } from "../schema/definition.ts";
import { q } from "../db/sql.ts";

export const FILES_DDL = [
  `CREATE TABLE IF NOT EXISTS _burrow_files (key TEXT PRIMARY KEY, store TEXT NOT NULL, schema TEXT NOT NULL, object TEXT NOT NULL, field TEXT NOT NULL,
     url TEXT NOT NULL, content_type TEXT NOT NULL, filename TEXT NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL, created INTEGER NOT NULL) STRICT`,
  `CREATE INDEX IF NOT EXISTS _burrow_files_owner ON _burrow_files (schema, object, field)`,
  `CREATE TABLE IF NOT EXISTS _burrow_trash (key TEXT PRIMARY KEY, store TEXT NOT NULL, since INTEGER NOT NULL) STRICT`,
];

const DRAIN_BATCH = 100;

type StoreKind = "local" | "s3";

export interface SavedFile {
  key: string;
  url: string;
  field: string;
  store: StoreKind;
  meta: FileMeta;
}

interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  prefix: string;
}

/** The path a stored file is served at (what a binary field holds): `/_files/` and the key's segments encoded. */
export function filePath(key: string): string {
  return `${FILES_PATH}${key.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * Fields written before links were made per answer hold absolute URLs (with the origin of the request that
 * uploaded the file, possibly a forged Host). Turn each into its path, the file row first (its trigger compares the
 * row's url with the field's new value, so the file stays), in transactions of 250 files; how many were changed.
 * Runs at every start and finds nothing once done.
 */
export async function storeFilePaths(db: Client): Promise<number> {
  let changed = 0;
  // Bounded: every round turns the rows it read into paths, which the query then no longer selects.
  for (;;) {
    const rs = await db.execute(
      `SELECT key, schema, object, field, url FROM _burrow_files WHERE substr(url, 1, ${FILES_PATH.length}) <> '${FILES_PATH}' LIMIT 250`,
    );
    if (rs.rows.length === 0) return changed;
    const layouts = await readLayouts(db);
    const stmts: InStatement[] = [];
    for (const r of rs.rows) {
      const path = filePath(r.key as string);
      stmts.push({ sql: `UPDATE _burrow_files SET url = ? WHERE key = ?`, args: [path, r.key as string] });
      const layout = layouts.get(r.schema as string);
      const field = r.field as string;
      if (layout?.fields[field]?.type !== "binary") continue;
      stmts.push({
        sql: `UPDATE ${q(tableName(layout.name))} SET ${q(field)} = ? WHERE ${q(primaryKeyOf(layout))} = ? AND ${q(field)} = ?`,
        args: [path, r.object as string, r.url as string],
      });
    }
    await db.batch(stmts, "write");
    changed += rs.rows.length;
  }
}

/**
 * Whether `sent` names the file a field holds (`stored`, its path): the path itself, or any absolute URL ending in
 * it (a client sends back the link it was given, whatever base it was given with).
 */
export function namesStoredFile(sent: string, stored: string | null): boolean {
  if (stored === null || sent === stored) return sent === stored;
  if (!stored.startsWith(FILES_PATH) || !sent.endsWith(stored)) return false;
  return /^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(sent.slice(0, sent.length - stored.length));
}

export class Files {
  private readonly localStore: LocalFileStore;
  private s3: { config: string; store: S3FileStore } | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly settings: Settings,
    private readonly log: Logger,
  ) {
    this.localStore = new LocalFileStore(join(dataDir, "files"));
  }

  private s3Settings(env: EnvName): S3Settings {
    return (this.settings.get(env).files as { s3: S3Settings }).s3;
  }

  /** The store of a kind; S3 is built from the environment's settings (and rebuilt when they change). */
  store(kind: StoreKind, env: EnvName): FileStore {
    if (kind === "local") return this.localStore;
    const s = this.s3Settings(env);
    if (!s.bucket || !s.accessKeyId || !s.secretAccessKey)
      throw new ApiError(503, "the S3 file store is not configured (settings files.s3)");
    const config = JSON.stringify(s);
    if (this.s3?.config !== config) {
      this.s3 = {
        config,
        store: new S3FileStore({
          endpoint: s.endpoint || undefined,
          bucket: s.bucket,
          region: s.region || undefined,
          accessKeyId: s.accessKeyId,
          secretAccessKey: s.secretAccessKey,
          prefix: s.prefix,
        }),
      };
    }
    return this.s3.store;
  }

  /** The environment's S3 store (503 when files.s3 is not configured). */
  s3Store(env: EnvName): S3FileStore {
    return this.store("s3", env) as S3FileStore;
  }

  maxBytes(env: EnvName): number {
    return (this.settings.get(env).files as { maxBytes: number }).maxBytes;
  }

  /**
   * Save an upload in the environment's configured store. The returned `url` is what the field holds: the file's
   * path (`/_files/<env>/<id>/<name>`, no origin); answers put the base of the request being answered before it.
   * `id` (32 lowercase hex) replaces the random one where saving the same file again must overwrite (an import resumed).
   */
  async save(env: EnvName, field: string, upload: Upload, id?: string): Promise<SavedFile> {
    const kind = (this.settings.get(env).files as { store: StoreKind }).store;
    const key = `${env}/${id && /^[0-9a-f]{32}$/.test(id) ? id : crypto.randomUUID().replaceAll("-", "")}/${upload.filename}`;
    const meta = await this.store(kind, env).put(key, upload.bytes, { contentType: upload.contentType, filename: upload.filename });
    return { key, url: filePath(key), field, store: kind, meta };
  }

  /**
   * The row recording a saved file. It runs right after the statement that wrote the object and only takes
   * effect when that statement changed a row (a conflicting create or a missing object leaves no row).
   */
  fileRow(schema: string, object: string, f: SavedFile): InStatement {
    return {
      sql: `INSERT INTO _burrow_files (key, store, schema, object, field, url, content_type, filename, size, etag, created)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() = 1`,
      args: [f.key, f.store, schema, object, f.field, f.url, f.meta.contentType, f.meta.filename, f.meta.size, f.meta.etag, f.meta.created],
    };
  }

  /** Remove saved bytes whose write did not happen (no orphan files). */
  async discard(env: EnvName, saved: readonly SavedFile[]): Promise<void> {
    await Promise.all(
      saved.map((f) =>
        this.store(f.store, env)
          .delete(f.key)
          .catch((e) => this.log.warn("could not discard an unused file", { key: f.key, error: String(e) })),
      ),
    );
  }

  /**
   * Delete trashed files from their stores. Failures stay in the trash for the next drain. While a backup runs
   * (drain-hold.ts) the trash waits: the check comes after taking the rows, so rows taken before a backup's instant
   * were unreferenced at that instant, and rows taken after it are put back.
   */
  async drain(env: EnvName, db: Client): Promise<number> {
    let done = 0;
    for (;;) {
      const rs = await db.execute({
        sql: `DELETE FROM _burrow_trash WHERE key IN (SELECT key FROM _burrow_trash ORDER BY since LIMIT ?) RETURNING key, store, since`,
        args: [DRAIN_BATCH],
      });
      if (rs.rows.length === 0) return done;
      if (drainHeld(this.dataDir)) {
        await db.batch(
          rs.rows.map((r) => ({
            sql: `INSERT OR IGNORE INTO _burrow_trash (key, store, since) VALUES (?, ?, ?)`,
            args: [r.key as string, r.store as string, Number(r.since)],
          })),
          "write",
        );
        return done;
      }
      const failed: InStatement[] = [];
      await Promise.all(
        rs.rows.map(async (r) => {
          try {
            await this.store(r.store as StoreKind, env).delete(r.key as string);
            done++;
          } catch (e) {
            this.log.warn("could not delete a file; it stays in the trash", { key: r.key as string, error: String(e) });
            failed.push({
              sql: `INSERT OR IGNORE INTO _burrow_trash (key, store, since) VALUES (?, ?, ?)`,
              args: [r.key as string, r.store as string, Number(r.since) + 60_000],
            });
          }
        }),
      );
      if (failed.length) {
        await db.batch(failed, "write");
        return done;
      }
      if (rs.rows.length < DRAIN_BATCH) return done;
    }
  }

  /** GET /_files/<env>/<id>/<name>, every answer with FILE_ANSWER_HEADERS (the route adds them to its errors). */
  async serve(env: EnvName, db: Client, key: string, request: Request): Promise<Response> {
    const rs = await db.execute({
      sql: `SELECT store, content_type, filename, size, etag, created FROM _burrow_files WHERE key = ?`,
      args: [key],
    });
    const r = rs.rows[0];
    if (!r) throw notFound("file not found");
    const meta: FileMeta = {
      contentType: r.content_type as string,
      filename: r.filename as string,
      size: Number(r.size),
      etag: r.etag as string,
      created: Number(r.created),
    };
    const answer = await this.store(r.store as StoreKind, env).serve(key, meta, request);
    for (const name in FILE_ANSWER_HEADERS) answer.headers.set(name, FILE_ANSWER_HEADERS[name]!);
    return answer;
  }
}
