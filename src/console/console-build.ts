// Builds the server's pages with Bun's HTML bundler into memory: the admin console (static/console/, addressed
// under /_admin/), the status page (static/status/, under /_status/) and the API reference (static/docs/, under
// /_admin/docs/, with the pinned OpenAPI Explorer bundled in), each an index.html with hashed JS and CSS chunks.
// The server calls it on first use when it runs from source; scripts/build.ts calls it to write the folders the
// compiled binary embeds.

import { join } from "node:path";

export interface ConsoleFile {
  /** The file's name under the site's public path ("index.html", "chunk-<hash>.js"). */
  name: string;
  type: string;
  body: Uint8Array<ArrayBuffer>;
}

/** The pages the server serves: their folder under static/, the path their files are addressed under, a name. */
export const SITES = {
  console: { dir: "console", publicPath: "/_admin/", label: "console" },
  status: { dir: "status", publicPath: "/_status/", label: "status page" },
  docs: { dir: "docs", publicPath: "/_admin/docs/", label: "API reference" },
} as const;
export type Site = keyof typeof SITES;

export async function buildSite(site: Site): Promise<ConsoleFile[]> {
  const entry = join(import.meta.dir, "../../static", SITES[site].dir, "index.html");
  const r = await Bun.build({ entrypoints: [entry], minify: true, publicPath: SITES[site].publicPath, target: "browser" });
  if (!r.success) throw new Error(`building the ${site} page failed: ${r.logs.map((l) => l.message).join("; ")}`);
  return Promise.all(
    r.outputs.map(async (o) => ({ name: o.path.replace(/^\.\//, ""), type: o.type, body: new Uint8Array(await o.arrayBuffer()) })),
  );
}
