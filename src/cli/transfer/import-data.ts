// `burrow import`: the export format (definitions first in development, like `schema apply`; production only
// into existing schemas), CSV, or a Parse Server export, into one environment. Rows go in batches, each one
// transaction with its checkpoint (checkpoint.ts), so a rerun after an interruption continues where the last
// batch committed. Bad rows are rejected one by one (file, line, reason) into a report file, up to --max-errors.

import { appendFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import type { ApiContext } from "../../request-context.ts";
import { ConfigError } from "../../config.ts";
import type { Burrow } from "../../open-burrow.ts";
import type { BulkRow } from "../../datastore/datastore.ts";
import { type Checkpoint, CHECKPOINT_DDL, checkpointStatement, clearCheckpoint, readCheckpoint, sourceId } from "./checkpoint.ts";
import { type ParseReport, looksLikeParse, parseSources } from "./parse-import.ts";
import { Progress } from "./progress.ts";
import { type CsvColumns, type Source, type SourceRecord, csvColumns, csvHead, csvSource, jsonlSource } from "./sources.ts";
import { EXPORT_FORMAT } from "./export-data.ts";

export type ImportFormat = "jsonl" | "csv" | "parse";

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

/** The format of an input: --format, or from the path (a directory's files, a file's extension). */
export function detectFormat(input: string, isDir: boolean, names: readonly string[]): ImportFormat {
  if (isDir) {
    if (names.includes("manifest.json") || names.includes("schemas.json")) return "jsonl";
    if (names.some((n) => /^(_User|_Role|_SCHEMA|_Join:.+)\.(json|jsonl|ndjson)$/.test(n))) return "parse";
    if (names.some((n) => n.endsWith(".csv"))) return "csv";
    if (names.some((n) => n.endsWith(".jsonl"))) return "jsonl";
    if (names.some((n) => n.endsWith(".json"))) return "parse";
    throw new ConfigError(`${input}: no .jsonl, .csv or .json files to import`);
  }
  const ext = extname(input).toLowerCase();
  if (ext === ".csv") return "csv";
  if (ext === ".jsonl" || ext === ".ndjson") return "jsonl";
  if (ext === ".json") return "parse";
  throw new ConfigError(`${input}: cannot tell the format from the extension; pass --format jsonl|csv|parse`);
}

/** The sources of the export format (or plain .jsonl files); development applies schemas.json first. */
async function jsonlSources(s: Burrow, env: string, input: string, isDir: boolean, only: string | undefined): Promise<Source[]> {
  if (!isDir) return [jsonlSource(input, only ?? basename(input, extname(input)))];
  const names = readdirSync(input);
  const manifestPath = join(input, "manifest.json");
  if (existsSync(manifestPath)) {
    const m = JSON.parse(await Bun.file(manifestPath).text()) as { format?: string };
    if (m.format !== EXPORT_FORMAT) throw new ConfigError(`${manifestPath}: not a Burrow export (format "${String(m.format)}")`);
  }
  const defsPath = join(input, "schemas.json");
  if (existsSync(defsPath)) {
    let defs = JSON.parse(await Bun.file(defsPath).text()) as { name?: string }[];
    if (!Array.isArray(defs)) throw new ConfigError(`${defsPath}: not an array of schema definitions`);
    if (only !== undefined) defs = defs.filter((d) => d.name === only);
    if (env === "development") {
      const results = await s.catalog.putMany(defs, { force: false });
      const changed = results.filter((r) => r.changed);
      for (const r of changed) for (const line of r.changes) say(line);
      if (defs.length) say(`schemas: ${changed.length} changed, ${defs.length - changed.length} unchanged`);
    } else {
      const latest = s.catalog.latestVersion();
      const have = latest === null ? undefined : s.catalog.production(latest);
      for (const d of defs)
        if (!have?.schemas.has(String(d.name)))
          throw new ConfigError(`production has no schema "${d.name}" (production imports only into deployed schemas; deploy it first)`);
    }
  }
  return names
    .filter((n) => n.endsWith(".jsonl") && !n.startsWith("."))
    .map((n) => ({ n, schema: basename(n, ".jsonl") }))
    .filter((x) => only === undefined || x.schema === only)
    .sort((a, b) => a.n.localeCompare(b.n))
    .map((x) => jsonlSource(join(input, x.n), x.schema));
}

/** CSV sources: each file's header decides its columns; development adds the columns a schema lacks. */
async function csvSources(s: Burrow, ctx: () => ApiContext, input: string, isDir: boolean, only: string | undefined): Promise<Source[]> {
  const files = isDir
    ? readdirSync(input)
        .filter((n) => n.endsWith(".csv"))
        .sort()
        .map((n) => join(input, n))
    : [input];
  const out: Source[] = [];
  for (const path of files) {
    const schema = !isDir && only !== undefined ? only : basename(path, ".csv");
    if (isDir && only !== undefined && schema !== only) continue;
    const head = await csvHead(path, 1000);
    if (head.length === 0) throw new ConfigError(`${basename(path)}: empty (a header row of field names is needed)`);
    const c = ctx();
    const existing = c.schemas.schemas.get(schema) ?? null;
    if (!existing && !c.infer)
      throw new ConfigError(
        `schema "${schema}" does not exist${c.env === "production" ? " in production (deploy it first)" : " (inference is off)"}`,
      );
    let columns: CsvColumns;
    let additions;
    try {
      ({ columns, additions } = csvColumns(head[0]!.cells, schema, existing, head.slice(1)));
    } catch (e) {
      throw new ConfigError(`${basename(path)} line 1: ${(e as Error).message}`);
    }
    if (Object.keys(additions).length) {
      if (!c.infer)
        throw new ConfigError(
          `${basename(path)}: ${Object.keys(additions).join(", ")} ${Object.keys(additions).length === 1 ? "is not a field" : "are not fields"} of schema ${schema}`,
        );
      const compiled = await s.catalog.infer(schema, additions);
      say(
        `schema ${schema}: added ${Object.entries(additions)
          .map(([n, d]) => `${n} (${d.type})`)
          .join(", ")}`,
      );
      ({ columns } = csvColumns(head[0]!.cells, schema, compiled, []));
    }
    const fixed = columns;
    out.push(csvSource(path, schema, () => fixed));
  }
  return out;
}

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
  const input = resolve(opts.input);
  let isDir: boolean;
  try {
    isDir = statSync(input).isDirectory();
  } catch {
    throw new ConfigError(`cannot read ${opts.input}`);
  }
  const format = opts.format ?? detectFormat(input, isDir, isDir ? readdirSync(input) : []);
  const ctx = () => contextFor(s, env);
  ctx(); // production without a deploy fails here, before anything is read
  const db = s.envDbs[env];
  await db.execute(CHECKPOINT_DDL);
  // A bigger page cache for this process's connection: B-tree and R*Tree pages of a large import stay in memory.
  // (Not on a libSQL server: there it would be one of the server's connections, held by no one in particular.)
  if (!s.config.store.url) await db.execute("PRAGMA cache_size = -262144");
  // Geo indexes an interrupted import left without their newest points are completed first.
  for (const name of ctx().schemas.schemas.keys()) await s.data.finishImport(ctx(), name);
  let parseReport: ParseReport | null = null;
  let sources: Source[];
  if (format === "jsonl") sources = await jsonlSources(s, env, input, isDir, opts.schema);
  else if (format === "csv") sources = await csvSources(s, ctx, input, isDir, opts.schema);
  else {
    if (isDir && !looksLikeParse(input) && !readdirSync(input).some((n) => n.endsWith(".json")))
      throw new ConfigError(`${opts.input}: no Parse class files (.json)`);
    ({ sources, report: parseReport } = await parseSources(input, opts.schema));
    for (const [cls, schema] of parseReport.classes) say(`class ${cls} -> schema ${schema}`);
    for (const c of parseReport.skipped) say(`class ${c}: skipped (Parse's own state, nothing to import)`);
  }
  if (sources.length === 0) throw new ConfigError(`nothing to import in ${opts.input}${opts.schema ? ` for schema ${opts.schema}` : ""}`);

  const totalBytes = sources.reduce((n, src) => n + statSync(src.path).size, 0);
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
      const st = statSync(src.path);
      const stamp = { size: st.size, mtime: Math.trunc(st.mtimeMs) };
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
      const cp: Checkpoint = prior ?? { line: 0, imported: 0, rejected: 0, done: false, ...stamp };
      let rows: BulkRow[] = [];
      let bad: { line: number; reason: string }[] = [];
      let lastLine = cp.line;

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
        const at: Checkpoint = { ...cp, line: lastLine, done };
        let rejected = bad;
        let inserted = 0;
        if (rows.length) {
          const result = await s.data.importRows(
            ctx(),
            src.schema,
            rows,
            src.declared,
            [checkpointStatement(id, at)],
            opts.live === true,
            opts.hooks === true,
          );
          inserted = result.inserted;
          rejected = [...bad, ...result.rejected].sort((a, b) => a.line - b.line);
          countPasswords(src.schema, rows, result.rejected);
        }
        await db.execute(checkpointStatement(id, { ...at, imported: cp.imported + inserted, rejected: cp.rejected + rejected.length }));
        cp.line = lastLine;
        cp.imported += inserted;
        cp.rejected += rejected.length;
        summary.imported += inserted;
        summary.rejected += rejected.length;
        perSchema.set(src.schema, (perSchema.get(src.schema) ?? 0) + inserted);
        writeRejections(rejected);
        rows = [];
        bad = [];
        batches++;
        progress.update(bytesBefore + bytes, summary.imported, summary.rejected, src.file);
        if (opts.crashAfterBatches !== undefined && batches >= opts.crashAfterBatches) process.kill(process.pid, "SIGKILL");
        if (summary.rejected > opts.maxErrors) summary.stopped = true;
        // A turn of the event loop between batches, so Ctrl-C and SIGTERM are seen (their handlers are macrotasks).
        await new Promise((r) => setImmediate(r));
      };

      let bytes = 0;
      for await (const chunk of src.records()) {
        bytes = chunk.bytes;
        for (const r of chunk.records as SourceRecord[]) {
          if (r.line <= cp.line) continue;
          lastLine = r.line;
          if ("error" in r) bad.push({ line: r.line, reason: r.error });
          else rows.push({ line: r.line, body: r.body });
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
  if (parseReport) {
    for (const r of parseReport.renamedFields) say(`field ${r}`);
    for (const [cls, fields] of parseReport.dropped)
      say(
        `class ${cls}: left out ${[...fields].sort().join(", ")} (access lists, auth data and Parse internals; Burrow uses schema permissions)`,
      );
    for (const n of parseReport.notes) say(n);
  }
  summary.interrupted = interrupted;
  return summary;
}
