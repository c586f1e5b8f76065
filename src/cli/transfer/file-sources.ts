// What `burrow import` reads from files besides Parse exports: the format of an input (from --format, a directory's
// files or a file's extension), the export format's JSON Lines with its schemas.json (applied first in development,
// as `schema apply` would; production imports only into deployed schemas) and CSV files, whose header decides the
// columns (development adds the ones a schema lacks).

import { existsSync, readdirSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { ConfigError } from "../../config.ts";
import type { Burrow } from "../../open-burrow.ts";
import type { ApiContext } from "../../request-context.ts";
import { type CsvColumns, type Source, csvColumns, csvHead, csvSource, jsonlSource } from "./sources.ts";
import { EXPORT_FORMAT } from "./export-data.ts";

export type ImportFormat = "jsonl" | "csv" | "parse";

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
export async function jsonlSources(s: Burrow, env: string, input: string, isDir: boolean, only: string | undefined): Promise<Source[]> {
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
export async function csvSources(
  s: Burrow,
  ctx: () => ApiContext,
  input: string,
  isDir: boolean,
  only: string | undefined,
): Promise<Source[]> {
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
