// The client library's files (/_sdk/burrow.js and burrow.d.ts) as the server sends them: each with a strong ETag
// and its gzip and brotli encodings (console-assets.ts). From the compiled binary they come from its embedded sdk/
// folder; from source they are built on first use (sdk-build.ts).

import { type ConsoleAsset, embeddedFiles, toAsset } from "./console-assets.ts";
import { buildSdk } from "./sdk-build.ts";

const TYPES: Record<string, string> = {
  "burrow.js": "text/javascript;charset=utf-8",
  "burrow.d.ts": "application/typescript;charset=utf-8",
};

let loading: Promise<Map<string, ConsoleAsset>> | null = null;

/** The library's files by name, loaded once per process. */
export function sdkAssets(): Promise<Map<string, ConsoleAsset>> {
  if (!loading) {
    const p = (async () => {
      const files = (await embeddedFiles("sdk")) ?? (await buildSdk());
      // An embedded file's type comes from its extension, which says nothing good about ".d.ts": set both here.
      return new Map(files.map((f) => [f.name, toAsset({ ...f, type: TYPES[f.name] ?? f.type })]));
    })();
    p.catch(() => {
      if (loading === p) loading = null;
    });
    loading = p;
  }
  return loading;
}
