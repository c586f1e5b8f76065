// Command-line parsing: positionals and --flags (`--name value`, `--name=value`, boolean `--name`).
// Flags a command does not know are an error, reported as one line (exit code 2). A repeatable flag given
// more than once keeps every value, joined with commas (`--schema a --schema b` is `a,b`).

import { BOOLEAN_FLAGS, CONFIG_FLAGS, ConfigError } from "../config.ts";

interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean>;
}

/** Parse argv given the command's own value flags and boolean flags (config flags are always known). */
export function parseArgs(
  argv: readonly string[],
  own: { values?: string[]; booleans?: string[]; repeatable?: string[] } = {},
): ParsedArgs {
  const values = new Set([...CONFIG_FLAGS].filter((f) => !BOOLEAN_FLAGS.has(f)).concat(own.values ?? []));
  const booleans = new Set([...BOOLEAN_FLAGS, "--help", "-h", ...(own.booleans ?? [])]);
  const out: ParsedArgs = { positionals: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      out.positionals.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (booleans.has(name)) {
      if (eq > 0) throw new ConfigError(`${name} takes no value`);
      out.flags[name === "-h" ? "--help" : name] = true;
    } else if (values.has(name)) {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new ConfigError(`${name} needs a value`);
      const before = out.flags[name];
      out.flags[name] = typeof before === "string" && own.repeatable?.includes(name) ? `${before},${v}` : v;
    } else {
      throw new ConfigError(`unknown option ${name} (see --help)`);
    }
  }
  return out;
}
