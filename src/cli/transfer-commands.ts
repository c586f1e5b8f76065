// The `export` and `import` commands: flags to options, the data directory opened, one summary on stderr.
// The work is in src/cli/transfer/.

import { type Config, ConfigError } from "../config.ts";
import { openBurrow } from "../open-burrow.ts";
import { exportData, pickSchemas } from "./transfer/export-data.ts";
import { type ImportFormat, importData } from "./transfer/import-data.ts";
import type { ParsePullOptions } from "./transfer/parse-live.ts";
import { Progress } from "./transfer/progress.ts";

type Flags = Record<string, string | boolean>;
type Env = "development" | "production";

function envOf(flags: Flags): Env {
  const env = flags["--env"] ?? "development";
  if (env !== "development" && env !== "production") throw new ConfigError(`--env must be development or production, not "${String(env)}"`);
  return env;
}

function intFlag(flags: Flags, name: string, fallback: number, min: number, max: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== "string" || !Number.isSafeInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

export async function exportCommand(config: Config, flags: Flags): Promise<void> {
  const out = flags["--out"];
  if (typeof out !== "string" || out === "") throw new ConfigError("export needs --out <dir>");
  const env = envOf(flags);
  const names = typeof flags["--schema"] === "string" ? flags["--schema"].split(",").filter(Boolean) : [];
  const s = await openBurrow(config);
  try {
    const version = env === "development" ? 0 : s.catalog.latestVersion();
    const set = version === null ? undefined : version === 0 ? s.catalog.development() : s.catalog.production(version);
    if (!set || version === null) throw new ConfigError("production has no deployed version yet; nothing to export");
    const schemas = pickSchemas(set.schemas, names);
    let total = 0;
    if (process.stderr.isTTY)
      for (const c of schemas) total += Number((await s.envDbs[env].execute(`SELECT count(*) AS n FROM ${c.table}`)).rows[0]!.n);
    const progress = new Progress(total);
    let rows = 0;
    const m = await exportData(
      s.envDbs[env],
      env,
      version,
      schemas,
      schemas.map((c) => c.def),
      out,
      flags["--with-password-hashes"] === true,
      (n, schema) => {
        rows += n;
        progress.update(rows, rows, 0, schema);
      },
    );
    progress.finish();
    const secs = progress.seconds();
    process.stderr.write(
      `exported ${rows} row(s) of ${schemas.length} schema(s) from ${env}${env === "production" ? ` version ${version}` : ""} to ${out} in ${secs.toFixed(1)} s (${Math.round(rows / Math.max(0.001, secs))} rows/s)\n`,
    );
    process.stdout.write(
      `${Object.entries(m.schemas)
        .map(([k, n]) => `${k}\t${n}`)
        .join("\n")}\n`,
    );
  } finally {
    s.close();
  }
}

/** --from-parse and its companions (the master key also from BURROW_PARSE_MASTER_KEY, kept out of `ps`). */
function parsePull(flags: Flags, input: string | undefined): ParsePullOptions | undefined {
  const url = flags["--from-parse"];
  const str = (name: string) => (typeof flags[name] === "string" ? (flags[name] as string) : undefined);
  if (url === undefined) {
    for (const f of ["--parse-app-id", "--parse-master-key", "--mongo-export"])
      if (flags[f] !== undefined) throw new ConfigError(`${f} goes with --from-parse <serverURL>`);
    return undefined;
  }
  if (typeof url !== "string" || url === "")
    throw new ConfigError("--from-parse needs the Parse Server's URL (with its mount path, e.g. /parse)");
  if (input !== undefined) throw new ConfigError("import reads either a file or directory, or --from-parse, not both");
  if (flags["--format"] !== undefined) throw new ConfigError("--from-parse takes no --format");
  const appId = str("--parse-app-id");
  const masterKey = str("--parse-master-key") ?? process.env.BURROW_PARSE_MASTER_KEY;
  if (!appId) throw new ConfigError("--from-parse needs --parse-app-id <the app's application id>");
  if (!masterKey) throw new ConfigError("--from-parse needs --parse-master-key <key> (or BURROW_PARSE_MASTER_KEY)");
  return { url, appId, masterKey, mongoExport: str("--mongo-export") };
}

export async function importCommand(config: Config, input: string | undefined, flags: Flags): Promise<void> {
  const fromParse = parsePull(flags, input);
  if (!input && !fromParse) throw new ConfigError("import needs a file or directory to read, or --from-parse <serverURL>");
  const format = flags["--format"];
  if (format !== undefined && format !== "jsonl" && format !== "csv" && format !== "parse")
    throw new ConfigError(`--format must be jsonl, csv or parse, not "${String(format)}"`);
  const schema = flags["--schema"];
  if (typeof schema === "string" && schema.includes(",")) throw new ConfigError("import takes one --schema");
  const crash = process.env.BURROW_IMPORT_CRASH_AFTER_BATCHES;
  const opts = {
    input: input ?? "",
    fromParse,
    format: format as ImportFormat | undefined,
    schema: typeof schema === "string" ? schema : undefined,
    batchSize: intFlag(flags, "--batch-size", 2000, 1, 10_000),
    maxErrors: intFlag(flags, "--max-errors", 1000, 0, Number.MAX_SAFE_INTEGER),
    restart: flags["--restart"] === true,
    report: typeof flags["--report"] === "string" ? flags["--report"] : undefined,
    crashAfterBatches: crash ? Number(crash) : undefined,
    live: flags["--live"] === true,
    hooks: flags["--hooks"] === true,
  };
  const env = envOf(flags);
  const s = await openBurrow(config);
  try {
    const r = await importData(s, env, opts);
    if (r.interrupted) throw new Error("interrupted: rerun the same command to continue after the last committed batch");
    if (r.stopped)
      throw new Error(
        `stopped after more than ${opts.maxErrors} rejected row(s) (--max-errors); fix them and rerun, which continues after the last committed batch`,
      );
  } finally {
    s.close();
  }
}
