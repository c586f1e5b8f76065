// The `burrow` command: serve, admin create, keys, schema apply|export, types, code deploy, deploy, backup, restore,
// export, import, health, version. `--help` on each.
// Configuration and start-up errors print one line and exit with code 2; failed operations exit with code 1,
// also in one line (the stack only at --log-level debug).

import { ConfigError, configHelp, loadConfig } from "./config.ts";
import { ApiError } from "./errors.ts";
import { parseArgs } from "./cli/args.ts";
import { adminCreate, codeDeploy, deploy, keys, schemaApply, schemaExport } from "./cli/commands.ts";
import { health } from "./cli/health.ts";
import { serve } from "./cli/serve.ts";
import { exportCommand, importCommand } from "./cli/transfer-commands.ts";
import { typesCommand } from "./cli/types-command.ts";
import { backup, restore } from "./cli/backup-commands.ts";
import { VERSION } from "./version.ts";
import { storeRequestsSettled } from "./db/open-store.ts";

interface Command {
  usage: string;
  summary: string;
  values?: string[];
  booleans?: string[];
  /** Value flags that may be given more than once (their values are joined with commas). */
  repeatable?: string[];
  /** The process stays alive after run() resolves (the server). */
  keepsRunning?: boolean;
  run(config: ReturnType<typeof loadConfig>, positionals: string[], flags: Record<string, string | boolean>): Promise<void>;
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: "burrow serve [options]",
    summary: "serve the API, the admin API and the files",
    keepsRunning: true,
    run: (c) => serve(c),
  },
  "admin create": {
    usage: "burrow admin create --email <address> --password <password> [--role owner|editor|viewer] [options]",
    summary:
      "create an admin (an owner unless --role says otherwise), or set a new password for an existing one (its role stays unless --role is given)",
    values: ["--email", "--password", "--role"],
    run: (c, _p, f) => adminCreate(c, f),
  },
  keys: {
    usage: "burrow keys [--json] [options]",
    summary: "print both environments' public and private API keys",
    booleans: ["--json"],
    run: (c, _p, f) => keys(c, f),
  },
  "schema apply": {
    usage: "burrow schema apply <file.json|dir> [--dry-run] [--force] [options]",
    summary: "create or update development schemas from definitions; prints the plan; --force allows destructive changes",
    booleans: ["--dry-run", "--force"],
    run: (c, p, f) => schemaApply(c, p[0], f),
  },
  "schema export": {
    usage: "burrow schema export [--version N] [--out dir] [options]",
    summary: "print the schema definitions of development (or of production version N) as JSON",
    values: ["--version", "--out"],
    run: (c, _p, f) => schemaExport(c, f),
  },
  types: {
    usage: "burrow types [--version N] [--out file] [options]",
    summary:
      "print (or write to --out) the TypeScript declarations of development's schemas and methods (or of production version N), as GET /_sdk/types.d.ts answers them",
    values: ["--version", "--out"],
    run: (c, _p, f) => typesCommand(c, f),
  },
  "code deploy": {
    usage: "burrow code deploy <file|dir> [options]",
    summary: "bundle custom code (a file, or a directory with index.ts/index.js) and store it as development's code",
    run: (c, p) => codeDeploy(c, p[0]),
  },
  deploy: {
    usage: "burrow deploy [--version N] [--dry-run] [--force] [options]",
    summary: "snapshot development schemas as production version N and migrate production.db additively",
    values: ["--version"],
    booleans: ["--dry-run", "--force"],
    run: (c, _p, f) => deploy(c, f),
  },
  health: {
    usage: "burrow health [--url URL] [options]",
    summary: "exit 0 when GET /_health answers 200 (the server of --http / BURROW_HTTP unless --url is given); for container health checks",
    values: ["--url"],
    run: (c, _p, f) => health(c, f),
  },
  export: {
    usage: "burrow export --out <dir> [--env development|production] [--schema s ...] [--with-password-hashes] [options]",
    summary:
      "write each schema's objects as <schema>.jsonl (as the API returns them), schemas.json and manifest.json; --with-password-hashes adds users' stored password hashes (keep such an export secret)",
    values: ["--out", "--env", "--schema"],
    booleans: ["--with-password-hashes"],
    repeatable: ["--schema"],
    run: (c, _p, f) => exportCommand(c, f),
  },
  import: {
    usage:
      "burrow import <dir|file> | --from-parse <serverURL> --parse-app-id <id> --parse-master-key <key> [--mongo-export <_User file or dir>] [--env development|production] [--schema s] [--format jsonl|csv|parse] [--batch-size 2000] [--max-errors 1000] [--report file] [--restart] [--live] [--hooks] [options]",
    summary:
      "import an export, CSV files, a Parse Server export or a running Parse Server (--from-parse: schema, objects, relations, files, users, roles, installations) in batches; resumes after an interruption; rejected rows go to a report",
    values: [
      "--env",
      "--schema",
      "--format",
      "--batch-size",
      "--max-errors",
      "--report",
      "--from-parse",
      "--parse-app-id",
      "--parse-master-key",
      "--mongo-export",
    ],
    booleans: ["--restart", "--live", "--hooks"],
    run: (c, p, f) => importCommand(c, p[0], f),
  },
  backup: {
    usage: "burrow backup [--out file] [options]",
    summary:
      "one file with system.db, development.db, production.db and files/ as they were at one instant, also while a server runs (on --store: copied from the libSQL server); into <dir>/backups/ (keeping the newest backups.keep) unless --out",
    values: ["--out"],
    run: (c, _p, f) => backup(c, f),
  },
  restore: {
    usage: "burrow restore <file> [--keep-old] [--force] [options]",
    summary:
      "check a backup (checksums, integrity_check) and only then swap it in as the data directory --dir (stopped server, or a new directory); --keep-old keeps the previous directory aside. With --store: copy it onto the libSQL server's namespaces (every node stopped; --force replaces namespaces that hold data)",
    booleans: ["--keep-old", "--force"],
    run: (c, p, f) => restore(c, p[0], f),
  },
  version: {
    usage: "burrow version",
    summary: "print the version (also burrow --version)",
    run: async () => void process.stdout.write(`burrow ${VERSION}\n`),
  },
};

function usage(): string {
  const lines = ["Burrow: a self-hosted mobile and web backend in one executable.", "", "Commands:"];
  for (const c of Object.values(COMMANDS)) lines.push(`  ${c.usage}`, `      ${c.summary}`);
  lines.push("", configHelp());
  return lines.join("\n");
}

/** Runs a command; resolves to its exit code, or null when it keeps running (serve). */
export async function main(argv: string[]): Promise<number | null> {
  const words = argv.filter((a) => !a.startsWith("-"));
  const name = words.length >= 2 && COMMANDS[`${words[0]} ${words[1]}`] ? `${words[0]} ${words[1]}` : (words[0] ?? "");
  const command = COMMANDS[name];
  if (name === "version" || (name === "" && (argv[0] === "--version" || argv[0] === "-v"))) {
    process.stdout.write(`burrow ${VERSION}\n`);
    return 0;
  }
  try {
    if (!command) {
      if (name === "" || name === "help" || argv.includes("--help") || argv.includes("-h")) {
        process.stdout.write(`${usage()}\n`);
        return name === "" && !argv.includes("--help") && !argv.includes("-h") ? 2 : 0;
      }
      throw new ConfigError(`unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(", ")})`);
    }
    const rest = [...argv];
    for (const w of name.split(" ")) rest.splice(rest.indexOf(w), 1);
    const args = parseArgs(rest, command);
    if (args.flags["--help"]) {
      process.stdout.write(`${command.usage}\n  ${command.summary}\n\n${configHelp()}\n`);
      return 0;
    }
    const config = loadConfig(args.flags, process.env);
    await command.run(config, args.positionals, args.flags);
    return command.keepsRunning ? null : 0;
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`burrow: ${e.message}\n`);
      return 2;
    }
    if (e instanceof ApiError) {
      process.stderr.write(`burrow: ${e.message}\n`);
      return 1;
    }
    const debug = /--log-level[= ]debug/.test(argv.join(" ")) || process.env.BURROW_LOG_LEVEL === "debug";
    process.stderr.write(`burrow: ${debug ? ((e as Error)?.stack ?? String(e)) : ((e as Error)?.message ?? String(e)).split("\n")[0]}\n`);
    return 1;
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code !== null) {
    await storeRequestsSettled();
    process.exit(code);
  }
}
