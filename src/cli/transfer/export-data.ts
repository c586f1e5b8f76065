// `burrow export`: each schema of an environment as JSON Lines (`<schema>.jsonl`, one object per line exactly
// as the API answers it: NULL fields left out, passwords never, unless --with-password-hashes adds the stored
// hashes as `{"$hash": ...}`, which import keeps), the definitions (`schemas.json`) and a
// manifest (`manifest.json`: format, Burrow version, environment, API version, time, counts). Pages through
// each table by rowid inside one read transaction (a consistent snapshot, constant memory for any size).

import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@libsql/core/api";
import { ConfigError } from "../../config.ts";
import type { CompiledSchema } from "../../schema/compiled.ts";
import type { SchemaDef } from "../../schema/definition.ts";
import { VERSION } from "../../version.ts";
import { q } from "../../db/sql.ts";

export const EXPORT_FORMAT = "burrow-export";
export const EXPORT_FORMAT_VERSION = 1;
const PAGE = 2000;

export interface Manifest {
  format: typeof EXPORT_FORMAT;
  formatVersion: number;
  burrowVersion: string;
  env: string;
  apiVersion: number;
  exportedAt: string;
  /** Whether user objects carry their password hashes (`--with-password-hashes`). */
  passwordHashes: boolean;
  schemas: Record<string, number>;
}

/** The schemas to export: every one, or those named (each must exist). */
export function pickSchemas(all: ReadonlyMap<string, CompiledSchema>, names: readonly string[]): CompiledSchema[] {
  if (names.length === 0) return [...all.values()].sort((a, b) => a.name.localeCompare(b.name));
  return names.map((n) => {
    const s = all.get(n);
    if (!s) throw new ConfigError(`schema "${n}" does not exist (schemas: ${[...all.keys()].sort().join(", ")})`);
    return s;
  });
}

/** Write one schema's objects to `file`; the number written. `onPage` reports progress. */
async function exportSchema(
  db: Client,
  s: CompiledSchema,
  file: string,
  withHashes: boolean,
  onPage: (rows: number) => void,
): Promise<number> {
  const sink = Bun.file(file).writer({ highWaterMark: 1 << 20 });
  const hash = withHashes && s.passwordField ? s.passwordField : null;
  const sql = `SELECT t.rowid AS r, ${s.json} AS j${hash ? `, t.${q(hash)} AS p` : ""} FROM ${s.table} AS t WHERE t.rowid > ? ORDER BY t.rowid LIMIT ${PAGE}`;
  let after = -1;
  let n = 0;
  try {
    // Bounded: every page moves `after` forward past rows that exist, so the loop ends at the table's end.
    for (;;) {
      const rs = await db.execute({ sql, args: [after] });
      if (rs.rows.length === 0) break;
      let text = "";
      for (const row of rs.rows) {
        const j = row.j as string;
        // The stored hash as {"$hash": ...}, which import keeps as it is (the object's JSON ends with "}").
        text +=
          hash && typeof row.p === "string" ? `${j.slice(0, -1)},${JSON.stringify(hash)}:{"$hash":${JSON.stringify(row.p)}}}\n` : `${j}\n`;
      }
      sink.write(text);
      await sink.flush();
      after = Number(rs.rows[rs.rows.length - 1]!.r);
      n += rs.rows.length;
      onPage(rs.rows.length);
      if (rs.rows.length < PAGE) break;
    }
  } finally {
    await sink.end();
  }
  return n;
}

/**
 * Export `schemas` from `db` into `dir`. Files are written under temporary names and renamed at the end, so
 * a directory with a manifest holds a complete export.
 */
export async function exportData(
  db: Client,
  env: string,
  apiVersion: number,
  schemas: CompiledSchema[],
  defs: SchemaDef[],
  dir: string,
  withHashes: boolean,
  onPage: (rows: number, schema: string) => void,
): Promise<Manifest> {
  mkdirSync(dir, { recursive: true });
  const counts: Record<string, number> = {};
  const exportedAt = new Date().toISOString();
  const tx = await db.transaction("read");
  try {
    for (const s of schemas) {
      const tmp = join(dir, `.${s.name}.jsonl.partial`);
      counts[s.name] = await exportSchema(tx as unknown as Client, s, tmp, withHashes, (n) => onPage(n, s.name));
      renameSync(tmp, join(dir, `${s.name}.jsonl`));
    }
  } finally {
    tx.close();
  }
  await Bun.write(join(dir, "schemas.json"), `${JSON.stringify(defs, null, 2)}\n`);
  const manifest: Manifest = {
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    burrowVersion: VERSION,
    env,
    apiVersion,
    exportedAt,
    passwordHashes: withHashes,
    schemas: counts,
  };
  await Bun.write(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
