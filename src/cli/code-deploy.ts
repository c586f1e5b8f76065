// `burrow code deploy <file|dir>`: bundle custom code sources into one ES module with Bun's bundler (a
// directory's entry is index.ts, index.js, or package.json "main"; imports of other files and packages are
// inlined) and store it as development's code, checked exactly as PUT /_admin/api/code checks an upload.

import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError } from "../config.ts";

/** The entry file of a path: the file itself, or a directory's index.ts / index.js / package.json main. */
export function entryOf(path: string): string {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new ConfigError(`code deploy: ${path} does not exist`);
  if (statSync(abs).isFile()) return abs;
  const pkg = join(abs, "package.json");
  if (existsSync(pkg)) {
    const main = (JSON.parse(readFileSync(pkg, "utf8")) as { main?: unknown }).main;
    if (typeof main === "string" && existsSync(join(abs, main))) return join(abs, main);
  }
  for (const name of ["index.ts", "index.js", "index.mjs", "src/index.ts", "src/index.js"])
    if (existsSync(join(abs, name))) return join(abs, name);
  throw new ConfigError(`code deploy: ${path} has no index.ts, index.js or package.json "main"`);
}

/** One ES module from the entry and everything it imports (not minified: errors keep readable lines). */
export async function bundleCode(path: string): Promise<string> {
  const entry = entryOf(path);
  const built = await Bun.build({ entrypoints: [entry], format: "esm", target: "browser", minify: false, sourcemap: "none" });
  if (!built.success) {
    const first = built.logs.find((l) => l.level === "error") ?? built.logs[0];
    const where = first?.position ? ` (${first.position.file}:${first.position.line})` : "";
    throw new ConfigError(`code deploy: bundling failed: ${first?.message ?? "unknown error"}${where}`);
  }
  const [output] = built.outputs;
  if (!output) throw new ConfigError("code deploy: the bundler produced nothing");
  return output.text();
}
