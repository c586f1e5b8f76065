// `burrow import`: the export format (definitions first in development, like `schema apply`; production only
// into existing schemas), CSV, or a Parse Server export, into one environment. Rows go in batches, each one
// transaction with its checkpoint (checkpoint.ts), so a rerun after an interruption continues where the last
// batch committed. Bad rows are rejected one by one (file, line, reason) into a report file, up to --max-errors.

import { appendFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { ApiContext } from "../../request-context.ts";
import { ConfigError } from "../../config.ts";
import type { Burrow } from "../../open-burrow.ts";
import type { InStatement } from "@libsql/core/api";
import type { BulkRow } from "../../datastore/datastore.ts";
import type { SavedFile } from "../../files/files.ts";
import { q } from "../../db/sql.ts";
import { tableName } from "../../schema/layout.ts";
import { type Checkpoint, checkpointStatement, clearCheckpoint, ensureCheckpointTable, readCheckpoint, sourceId } from "./checkpoint.ts";
import { type ParseReport, installationRows, looksLikeParse, parseReportLines, parseSources } from "./parse-import.ts";
import { formatInstallationReport, importInstallations } from "./parse-installations.ts";
import { Progress } from "./progress.ts";
import type { Source, SourceRecord } from "./sources.ts";
import { type ImportFormat, csvSources, detectFormat, jsonlSources } from "./file-sources.ts";
import { type ParsePullOptions, parseLiveSources } from "./parse-live.ts";

export type { ImportFormat } from "./file-sources.ts";

export interface ImportOptions {
  input: string;
  format?: ImportFormat;
  schema?: string;
  batchSize: number;
  maxErrors: number;
  restart: boolean;
  report?: string;
  /** Test hook: the process kills itself (SIGKILL) after this many committed batches. */
  crashAfterBatches?: number;
  /** Write the rows to the change log, so live streams get them as creates (--live). */
  live?: boolean;
  /** Run the custom code's beforeCreate on each row and queue its after-hooks (--hooks). */
  hooks?: boolean;
  /** Pull from a running Parse Server instead of reading `input` (--from-parse). */
  fromParse?: ParsePullOptions;
}

export interface ImportSummary {
  imported: number;
  rejected: number;
  skippedDone: string[];
  stopped: boolean;
  /** Ctrl-C or SIGTERM ended it after the last committed batch. */
  interrupted: boolean;
  reportFile: string | null;
  seconds: number;
}

const say = (s: string) => process.stderr.write(`${s}\n`);

/** The context the import writes in: the server itself on development (inferring unless --no-infer) or production's newest version. */
function contextFor(s: Burrow, env: "development" | "production"): ApiContext {
  const fileBase = () => s.config.filesUrl ?? s.config.publicUrl ?? "";
  if (env === "development")
    return {
      env,
      version: 0,
      db: s.envDbs.development,
      schemas: s.catalog.development(),
      infer: s.config.infer,
      principal: { kind: "system" },
      fileBase,
    };
  const latest = s.catalog.latestVersion();
  const schemas = latest === null ? undefined : s.catalog.production(latest);
  if (!schemas) throw new ConfigError("production has no deployed version yet; deploy first (burrow deploy)");
  return { env, version: schemas.version, db: s.envDbs.production, schemas, infer: false, principal: { kind: "system" }, fileBase };
}

function reportPath(s: Burrow, opts: ImportOptions): string {
  if (opts.report) return resolve(opts.report);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return join(s.config.dir, "import-reports", `import-${stamp}.txt`);
}

export async function importData(s: Burrow, env: "development" | "production", opts: ImportOptions): Promise<ImportSummary> {
  const input = opts.fromParse ? opts.fromParse.url : resolve(opts.input);
  let isDir = false;
  try {
    if (!opts.fromParse) isDir = statSync(input).isDirectory();
  } catch {
    throw new ConfigError(`cannot read ${opts.input}`);
  }
  const format = opts.fromParse ? "parse" : (opts.format ?? detectFormat(input, isDir, isDir ? readdirSync(input) : []));
  const ctx = () => contextFor(s, env);
  ctx(); // production without a deploy fails here, before anything is read
  const db = s.envDbs[env];
  await ensureCheckpointTable(db);
  // A bigger page cache for this process's connection: B-tree and R*Tree pages of a large import stay in memory.
  // (Not on a libSQL server: there it would be one of the server's connections, held by no one in particular.)
  if (!s.config.store.url) await db.execute("PRAGMA cache_size = -262144");
  // Geo indexes an interrupted import left without their newest points are completed first.
  for (const name of ctx().schemas.schemas.keys()) await s.data.finishImport(ctx(), name);
  let parseReport: ParseReport | null = null;
  /** Parse's `_Installation` objects become push tokens once the classes are in (not with --schema). */
  let installations: (() => Promise<string[]>) | null = null;
  let sources: Source[];
  if (format === "jsonl") sources = await jsonlSources(s, env, input, isDir, opts.schema);
  else if (format === "csv") sources = await csvSources(s, ctx, input, isDir, opts.schema);
  else {
    if (!opts.fromParse && isDir && !looksLikeParse(input) && !readdirSync(input).some((n) => n.endsWith(".json")))
      throw new ConfigError(`${opts.input}: no Parse class files (.json)`);
    const parse = opts.fromParse
      ? await parseLiveSources(s, env, opts.fromParse, opts.schema)
      : await (async () => {
          const p = await parseSources(input, opts.schema);
          return { ...p, installations: p.installations.length && opts.schema === undefined ? installationRows(p.installations) : null };
        })();
    ({ sources, report: parseReport } = parse);
    const rows = parse.installations;
    if (rows) installations = async () => formatInstallationReport(await importInstallations(s.push.tokens(env), rows, parse.userKeyOf));
    for (const [cls, schema] of parseReport.classes) say(`class ${cls} -> schema ${schema}`);
    for (const c of parseReport.skipped) say(`class ${c}: skipped (Parse's own state, nothing to import)`);
  }
  if (sources.length === 0 && !installations)
    throw new ConfigError(`nothing to import in ${opts.input}${opts.schema ? ` for schema ${opts.schema}` : ""}`);

  const sizeOf = (src: Source) => (src.remote ? { size: src.remote.total, mtime: 0 } : statOf(src.path));
  const totalBytes = sources.reduce((n, src) => n + sizeOf(src).size, 0);
  const progress = new Progress(totalBytes);
  const report = reportPath(s, opts);
  let reportOpen = false;
  const summary: ImportSummary = {
    imported: 0,
    rejected: 0,
    skippedDone: [],
    stopped: false,
    interrupted: false,
    reportFile: null,
    seconds: 0,
  };
  const perSchema = new Map<string, number>();
  // Users imported with a password (hash) and without, per user schema, for the summary.
  const passwords = new Map<string, { with: number; without: number }>();
  const countPasswords = (schema: string, rows: readonly BulkRow[], rejected: readonly { line: number }[]) => {
    const field = ctx().schemas.schemas.get(schema)?.passwordField;
    if (!field) return;
    const refused = new Set(rejected.map((r) => r.line));
    const n = passwords.get(schema) ?? { with: 0, without: 0 };
    passwords.set(schema, n);
    for (const r of rows) if (!refused.has(r.line)) r.body[field] === undefined || r.body[field] === null ? n.without++ : n.with++;
  };
  let bytesBefore = 0;
  let batches = 0;
  let interrupted = false;
  const onSigint = () => void (interrupted = true);
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  try {
    for (const src of sources) {
      const id = sourceId(src.schema, src.path);
      const stamp = src.remote ? { size: 0, mtime: 0 } : statOf(src.path);
      const st = sizeOf(src);
      if (opts.restart) await db.execute(clearCheckpoint(id));
      const prior = await readCheckpoint(db, id);
      if (prior && (prior.size !== stamp.size || prior.mtime !== stamp.mtime))
        throw new ConfigError(
          `${src.file} changed since its import into ${src.schema} began (checkpoint at ${src.unit} ${prior.line}); rerun with --restart to import it from the start`,
        );
      if (prior?.done) {
        summary.skippedDone.push(`${src.file} -> ${src.schema}`);
        say(
          `${src.file}: already imported into ${src.schema} (${prior.imported} rows, ${prior.rejected} rejected); --restart imports it again`,
        );
        bytesBefore += st.size;
        continue;
      }
      if (prior) say(`${src.file}: resuming after ${src.unit} ${prior.line} (${prior.imported} rows imported before)`);
      const cp: Checkpoint = prior ?? { line: 0, imported: 0, rejected: 0, done: false, cursor: null, ...stamp };
      let rows: BulkRow[] = [];
      let bad: { line: number; reason: string }[] = [];
      let lastLine = cp.line;
      let lastCursor = cp.cursor ?? null;
      /** Files a live pull stored for the rows of this batch: tied to their objects in the batch, dropped if refused. */
      let files = new Map<BulkRow, SavedFile[]>();

      const writeRejections = (list: { line: number; reason: string }[]) => {
        if (list.length === 0) return;
        if (!reportOpen) {
          mkdirSync(dirname(report), { recursive: true });
          if (!existsSync(report)) writeFileSync(report, `# burrow import ${input} (${format}, ${env}) ${new Date().toISOString()}\n`);
          reportOpen = true;
          summary.reportFile = report;
        }
        appendFileSync(report, list.map((r) => `${src.file} ${src.unit} ${r.line}: ${r.reason}\n`).join(""));
      };

      const flush = async (done: boolean, bytes: number) => {
        // The line (what resuming needs) commits with the batch; the counts follow in a small second statement.
        const at: Checkpoint = { ...cp, line: lastLine, cursor: lastCursor, done };
        let rejected = bad;
        let inserted = 0;
        if (rows.length) {
          const fileRows = src.remote ? fileRowStatements(src.schema, src.remote.pk, files) : [];
          const result = await s.data
            .importRows(
              ctx(),
              src.schema,
              rows,
              src.declared,
              [...fileRows, checkpointStatement(id, at)],
              opts.live === true,
              opts.hooks === true,
            )
            .catch(async (e) => {
              await s.files.discard(env, [...files.values()].flat());
              throw e;
            });
          inserted = result.inserted;
          rejected = [...bad, ...result.rejected].sort((a, b) => a.line - b.line);
          countPasswords(src.schema, rows, result.rejected);
          const refused = new Set(result.rejected.map((r) => r.line));
          await s.files.discard(
            env,
            [...files].filter(([r]) => refused.has(r.line)).flatMap(([, f]) => f),
          );
        }
        await db.execute(checkpointStatement(id, { ...at, imported: cp.imported + inserted, rejected: cp.rejected + rejected.length }));
        cp.line = lastLine;
        cp.cursor = lastCursor;
        cp.imported += inserted;
        cp.rejected += rejected.length;
        summary.imported += inserted;
        summary.rejected += rejected.length;
        perSchema.set(src.schema, (perSchema.get(src.schema) ?? 0) + inserted);
        writeRejections(rejected);
        rows = [];
        bad = [];
        files = new Map();
        batches++;
        progress.update(bytesBefore + bytes, summary.imported, summary.rejected, src.file);
        if (opts.crashAfterBatches !== undefined && batches >= opts.crashAfterBatches) process.kill(process.pid, "SIGKILL");
        if (summary.rejected > opts.maxErrors) summary.stopped = true;
        // A turn of the event loop between batches, so Ctrl-C and SIGTERM are seen (their handlers are macrotasks).
        await new Promise((r) => setImmediate(r));
      };

      let bytes = 0;
      for await (const chunk of src.records({ line: cp.line, cursor: cp.cursor ?? null })) {
        bytes = chunk.bytes;
        for (const r of chunk.records as SourceRecord[]) {
          if (r.line <= cp.line) continue;
          lastLine = r.line;
          if (r.cursor !== undefined) lastCursor = r.cursor;
          if ("error" in r) bad.push({ line: r.line, reason: r.error });
          else {
            const row = { line: r.line, body: r.body };
            rows.push(row);
            if (r.files?.length) files.set(row, r.files);
          }
          if (rows.length + bad.length >= opts.batchSize) {
            await flush(false, bytes);
            if (summary.stopped || interrupted) break;
          }
        }
        if (summary.stopped || interrupted) break;
      }
      if (summary.stopped || interrupted) break;
      await flush(true, bytes);
      bytesBefore += st.size;
      if (summary.stopped) break;
    }
  } finally {
    for (const src of sources) await s.data.finishImport(ctx(), src.schema).catch(() => {});
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    progress.finish();
  }
  const installed = installations && !summary.stopped && !interrupted ? await installations() : [];
  summary.seconds = progress.seconds();
  const rate = Math.round(summary.imported / Math.max(0.001, summary.seconds));
  const where = [...perSchema]
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  say(
    `imported ${summary.imported} row(s)${where ? ` (${where})` : ""} in ${summary.seconds.toFixed(1)} s (${rate} rows/s); ${summary.rejected} rejected${summary.reportFile ? `, listed in ${summary.reportFile}` : ""}`,
  );
  for (const [schema, n] of passwords) {
    if (n.with)
      say(
        `${n.with} user(s) of ${schema} imported with their password hash: they sign in with the password they had${parseReport ? " (Parse's bcrypt hashes are checked as argon2id ones are)" : ""}`,
      );
    if (n.without)
      say(
        `${n.without} user(s) of ${schema} imported without a password${parseReport ? " (the dashboard's JSON has no password hashes; mongoexport's has)" : ""}: each sets one through forgotPassword, or an admin sets it (PUT /_admin/api/users/${env}/${schema}/<username>/password)`,
      );
  }
  if (parseReport) for (const line of [...installed, ...parseReportLines(parseReport)]) say(line);
  summary.interrupted = interrupted;
  return summary;
}

function statOf(path: string): { size: number; mtime: number } {
  const st = statSync(path);
  return { size: st.size, mtime: Math.trunc(st.mtimeMs) };
}

/**
 * The `_burrow_files` rows of files a live pull stored, in the batch's transaction after its inserts: each only when
 * its object was inserted holding that file (a duplicate key leaves the existing object and no row).
 */
function fileRowStatements(schema: string, pk: string, files: ReadonlyMap<BulkRow, SavedFile[]>): InStatement[] {
  const out: InStatement[] = [];
  for (const [row, list] of files) {
    const key = String(row.body[pk]);
    for (const f of list)
      out.push({
        sql: `INSERT INTO _burrow_files (key, store, schema, object, field, url, content_type, filename, size, etag, created)
              SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM ${q(tableName(schema))} WHERE ${q(pk)} = ? AND ${q(f.field)} = ?)`,
        args: [
          f.key,
          f.store,
          schema,
          key,
          f.field,
          f.url,
          f.meta.contentType,
          f.meta.filename,
          f.meta.size,
          f.meta.etag,
          f.meta.created,
          key,
          f.url,
        ],
      });
  }
  return out;
}
