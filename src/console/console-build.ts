// Builds the admin console (static/console/index.html and what it imports) with Bun's HTML bundler into memory:
// hashed JS and CSS chunks addressed under /_admin/. The server calls it on first use when it runs from source;
// scripts/build.ts calls it to write dist/console/, which the compiled binary embeds.

import { join } from "node:path";

export interface ConsoleFile {
  /** The file's name under /_admin/ ("index.html", "chunk-<hash>.js"). */
  name: string;
  type: string;
  body: Uint8Array<ArrayBuffer>;
}

export const CONSOLE_ENTRY = join(import.meta.dir, "../../static/console/index.html");
export const CONSOLE_PUBLIC_PATH = "/_admin/";

export async function buildConsole(entry = CONSOLE_ENTRY): Promise<ConsoleFile[]> {
  const r = await Bun.build({ entrypoints: [entry], minify: true, publicPath: CONSOLE_PUBLIC_PATH, target: "browser" });
  if (!r.success) throw new Error(`building the console failed: ${r.logs.map((l) => l.message).join("; ")}`);
  return Promise.all(
    r.outputs.map(async (o) => ({ name: o.path.replace(/^\.\//, ""), type: o.type, body: new Uint8Array(await o.arrayBuffer()) })),
  );
}
