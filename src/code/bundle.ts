// Preparing an uploaded bundle for the sandbox: JavaScript runs as sent (so QuickJS's line numbers are the
// author's), TypeScript is transpiled by Bun's transpiler (a syntax error answers its line). A bundle is one ES
// module: imports are refused with a pointer to `burrow code deploy`, which bundles a directory into one file.

import { CodeError } from "./code-error.ts";

/** Largest bundle accepted (source as uploaded). */
export const MAX_BUNDLE_BYTES = 4 * 1024 * 1024;

export type BundleLanguage = "js" | "ts" | "auto";

const js = new Bun.Transpiler({ loader: "js" });
const ts = new Bun.Transpiler({ loader: "ts" });

interface BuildMessageLike {
  message?: string;
  line?: number;
}

function syntaxError(e: unknown): CodeError {
  const m = e as BuildMessageLike;
  // Bun reports 0-based lines.
  const line = typeof m?.line === "number" ? m.line + 1 : undefined;
  return new CodeError("compile", `SyntaxError: ${String(m?.message ?? e)}`, line);
}

/**
 * The JavaScript the sandbox runs for `source`: as is when it parses as JavaScript (or `lang` says js), else
 * transpiled from TypeScript. Throws CodeError("compile") with the line for syntax errors and for imports.
 */
export function prepareBundle(source: string, lang: BundleLanguage = "auto"): { js: string; language: "js" | "ts" } {
  if (Buffer.byteLength(source) > MAX_BUNDLE_BYTES)
    throw new CodeError("compile", `the bundle is larger than ${MAX_BUNDLE_BYTES / 1024 / 1024} MB`);
  if (source.trim() === "") throw new CodeError("compile", "the bundle is empty: send one ES module that exports `methods`");
  let language: "js" | "ts" = lang === "ts" ? "ts" : "js";
  let out = source;
  if (lang !== "ts") {
    try {
      checkImports(js.scan(source).imports);
    } catch (e) {
      if (e instanceof CodeError || lang === "js") throw e instanceof CodeError ? e : syntaxError(e);
      language = "ts";
    }
  }
  if (language === "ts") {
    try {
      out = ts.transformSync(source);
    } catch (e) {
      throw syntaxError(e);
    }
    checkImports(ts.scan(out).imports);
  }
  return { js: out, language };
}

function checkImports(imports: { path: string }[]): void {
  if (imports.length)
    throw new CodeError(
      "compile",
      `the bundle imports "${imports[0]!.path}": a bundle is one module without imports; bundle your sources first (\`burrow code deploy <dir>\` does)`,
    );
}
