// `burrow types`: the TypeScript declarations of development (or production version N) as GET /_sdk/types.d.ts
// answers them, written to --out or printed. Opens the data directory like the other offline commands.

import { writeFileSync } from "node:fs";
import { type Config, ConfigError } from "../config.ts";
import { notFound } from "../errors.ts";
import { openBurrow } from "../open-burrow.ts";
import { generateTypes } from "../sdk/types-gen.ts";

export async function typesCommand(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  const raw = flags["--version"];
  const version = raw === undefined ? 0 : Number(raw);
  if (typeof raw === "boolean" || !Number.isSafeInteger(version) || version < 0) throw new ConfigError(`invalid --version "${raw}"`);
  const out = flags["--out"];
  if (out !== undefined && (typeof out !== "string" || out === "")) throw new ConfigError("--out needs a file name");
  const burrow = await openBurrow(config);
  try {
    const set = version === 0 ? burrow.catalog.development() : burrow.catalog.production(version);
    if (!set) throw notFound(`API version ${version} is not deployed`);
    const code = version === 0 ? burrow.code.development() : burrow.code.production(version);
    const text = generateTypes({ set, methods: code?.methods.map((m) => m.name) ?? [], server: burrow.version }, new Date());
    if (typeof out === "string") {
      writeFileSync(out, text);
      process.stdout.write(`wrote the declarations of ${set.schemas.size} schema(s) to ${out}\n`);
    } else process.stdout.write(text);
  } finally {
    burrow.close();
  }
}
