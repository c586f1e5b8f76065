// Source folders import only downward: every relative import under src/ (static `import ... from` and
// `export ... from`, `import type` included) must point to the importer's own layer or a lower one.

import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";

const SRC = join(import.meta.dir, "../../src");

/** Bottom to top; a file may import its own layer and the layers below. Entries are src/-relative files or folders ("x/"). */
const LAYERS: readonly (readonly string[])[] = [
  ["errors.ts", "plain-object.ts", "time-zone.ts", "on-first-use.ts", "log.ts", "version.ts", "config.ts", "net/", "db/", "os/"],
  ["schema/"],
  ["request-context.ts"],
  ["auth/"],
  ["system/"],
  ["mail/"],
  ["push/"],
  ["backup/"],
  ["files/"],
  ["datastore/"],
  ["live/"],
  ["social/"],
  ["code/"],
  ["console/"],
  ["sdk/"],
  ["http/"],
  ["cli/", "open-burrow.ts", "shared-state.ts", "main.ts"],
];

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** The layer index of a src/-relative path, or -1 when no layer names it. */
function layerOf(path: string): number {
  return LAYERS.findIndex((layer) => layer.some((entry) => (entry.endsWith("/") ? path.startsWith(entry) : path === entry)));
}

/** Drop comments so commented-out imports do not count (string contents are left alone; imports come first anyway). */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

const IMPORT_RE =
  /(?:^|[;\n])\s*(import|export)\s+(type\s+)?(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)\s+from\s*["']([^"']+)["']/g;

/** The relative imports of one file, as src/-relative paths (a missing extension resolves to `.ts`). */
function relativeImports(file: string, code: string): Import[] {
  const out: Import[] = [];
  for (const m of stripComments(code).matchAll(IMPORT_RE)) {
    const spec = m[3]!;
    if (!spec.startsWith(".")) continue;
    const target = resolve(dirname(join(SRC, file)), spec);
    const to = relative(SRC, /\.[cm]?[jt]sx?$|\.json$/.test(target) ? target : `${target}.ts`);
    if (to.startsWith("..")) continue; // outside src/ (package.json)
    const braces = /\{([^}]*)\}/.exec(m[0])?.[1];
    const allTypes = braces
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .every((s) => s.startsWith("type "));
    out.push({ from: file, to, typeOnly: m[2] !== undefined || (allTypes === true && !/[\w$]+\s*,\s*\{/.test(m[0])) });
  }
  return out;
}

const files = [...new Glob("**/*.ts").scanSync(SRC)].sort();
const imports = files.flatMap((f) => relativeImports(f, readFileSync(join(SRC, f), "utf8")));
const edge = (i: Import) => `${i.from} -> ${i.to}`;

describe("layers", () => {
  test("the parser finds multi-line, type-only and re-export imports", () => {
    const code = `import {\n  a,\n  b,\n} from "./x.ts";\nimport type { C } from "../schema/y.ts";\nexport { d } from "./z";\n// import { e } from "../http/no.ts";\n`;
    expect(relativeImports("files/f.ts", code)).toEqual([
      { from: "files/f.ts", to: "files/x.ts", typeOnly: false },
      { from: "files/f.ts", to: "schema/y.ts", typeOnly: true },
      { from: "files/f.ts", to: "files/z.ts", typeOnly: false },
    ]);
  });

  test("every source file belongs to a layer", () => {
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  test("no import points to a higher layer", () => {
    const upward = imports.filter((i) => layerOf(i.to) > layerOf(i.from)).map(edge);
    expect(upward).toEqual([]);
  });
});
