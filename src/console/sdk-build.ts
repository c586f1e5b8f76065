// Builds the client library served at /_sdk/: static/sdk/index.ts bundled by Bun into ONE minified ES module
// without dependencies (burrow.js), beside its hand-written declarations (burrow.d.ts). The server calls it on
// first use when it runs from source; scripts/build.ts calls it to write the sdk/ folder the binary embeds.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ConsoleFile } from "./console-build.ts";

const SDK_DIR = join(import.meta.dir, "../../static/sdk");

export async function buildSdk(): Promise<ConsoleFile[]> {
  const r = await Bun.build({ entrypoints: [join(SDK_DIR, "index.ts")], minify: true, target: "browser", format: "esm" });
  if (!r.success || r.outputs.length !== 1)
    throw new Error(`building the client library failed: ${r.logs.map((l) => l.message).join("; ") || `${r.outputs.length} outputs`}`);
  const js = new Uint8Array(await r.outputs[0]!.arrayBuffer());
  const dts = new Uint8Array(readFileSync(join(SDK_DIR, "burrow.d.ts")));
  return [
    { name: "burrow.js", type: "text/javascript;charset=utf-8", body: js },
    { name: "burrow.d.ts", type: "application/typescript;charset=utf-8", body: dts },
  ];
}
