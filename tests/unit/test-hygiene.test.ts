// Every test asserts something that can fail: a static read of each test file finds the body of every `test(...)`
// and requires an `expect` in it, directly or through a helper of the file (or an imported helper) that expects;
// and no assertion only checks that a module constant exists.

import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const TESTS = join(import.meta.dir, "..");

function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(test|contract)\.ts$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** The text from the `{` at or after `from` to its matching `}`, skipping strings, template text and comments. */
function block(src: string, from: number): string | null {
  const open = src.indexOf("{", from);
  if (open < 0) return null;
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      for (i++; i < src.length && src[i] !== c; i++) if (src[i] === "\\") i++;
    } else if (c === "/" && src[i + 1] === "/") {
      i = src.indexOf("\n", i);
      if (i < 0) return null;
    } else if (c === "/" && src[i + 1] === "*") {
      i = src.indexOf("*/", i) + 1;
    } else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return src.slice(open, i + 1);
  }
  return null;
}

/**
 * Names of functions in `src` whose bodies call expect (directly). A definition's body is its line and the lines
 * after it up to and including the first one indented no deeper than the definition (its closing line).
 */
function assertingHelpers(src: string): Set<string> {
  const out = new Set<string>();
  const lines = src.split("\n");
  const indent = (l: string) => l.length - l.trimStart().length;
  lines.forEach((line, i) => {
    const m = /^\s*(?:export\s+)?(?:async\s+)?(?:function\s+(\w+)\s*[(<]|(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?(?:\(|\w+\s*=>))/.exec(
      line,
    );
    if (!m) return;
    let end = i;
    if (!/[;,]\s*$/.test(line) || /[{(]\s*$/.test(line))
      for (end = i + 1; end < lines.length && (lines[end]!.trim() === "" || indent(lines[end]!) > indent(line)); end++);
    if (/\bexpect[(.]/.test(lines.slice(i, end + 1).join("\n"))) out.add((m[1] ?? m[2])!);
  });
  return out;
}

/** Helpers imported from other test files (tests/helpers/...) that call expect. */
function importedAssertingHelpers(file: string, src: string): Set<string> {
  const out = new Set<string>();
  for (const m of src.matchAll(/import\s*\{([^}]*)\}\s*from\s*"(\.[^"]+)"/g)) {
    const spec = m[2]!;
    const path = resolve(dirname(file), /\.tsx?$/.test(spec) ? spec : `${spec}.ts`);
    if (!path.startsWith(TESTS) || !existsSync(path)) continue;
    const helpers = assertingHelpers(readFileSync(path, "utf8"));
    for (const name of m[1]!.split(",").map(
      (s) =>
        s
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)
          .pop()!,
    ))
      if (helpers.has(name)) out.add(name);
  }
  return out;
}

/** Tests of a file without an assertion: their names. */
function testsWithoutExpect(file: string, src = readFileSync(file, "utf8")): string[] {
  const helpers = new Set([...assertingHelpers(src), ...importedAssertingHelpers(file, src)]);
  const calls = [...helpers].map((h) => new RegExp(`\\b${h}\\s*\\(`));
  const missing: string[] = [];
  for (const m of src.matchAll(/\b(?:test|it)(?:\.(?:if|skipIf|only|serial)\([^)]*\))?\(\s*(["'`])((?:(?!\1).)*)\1\s*,/g)) {
    const body = block(src, m.index! + m[0].length);
    if (body === null) continue;
    if (/\bexpect[(.]/.test(body) || calls.some((c) => c.test(body))) continue;
    missing.push(m[2]!);
  }
  return missing;
}

test("every test body expects something (directly or through an asserting helper)", () => {
  const found = testFiles(TESTS).flatMap((f) => testsWithoutExpect(f).map((name) => `${f.slice(TESTS.length + 1)}: ${name}`));
  expect(found).toEqual([]);
});

test("no assertion only checks that a module constant is defined", () => {
  const trivial = testFiles(TESTS).flatMap((f) =>
    [...readFileSync(f, "utf8").matchAll(/expect\(([A-Z][A-Z0-9_]*(?:\.\w+)*)\)\.(?:toBeDefined|toBeTruthy|not\.toBeUndefined)\(\)/g)].map(
      (m) => `${f.slice(TESTS.length + 1)}: ${m[0]}`,
    ),
  );
  expect(trivial).toEqual([]);
});

test("the checks find what they look for", () => {
  // Spelled so that this file's own scan does not take the sample's tests for its own.
  const T = ["te", "st"].join("");
  const src = `import { test, expect } from "bun:test";
const ok = (x: number) => expect(x).toBe(1);
${T}("asserts", () => { expect(1).toBe(1); });
${T}("through a helper", () => { ok(1); });
${T}("asserts nothing", async () => { const s = "{"; await Promise.resolve(s); });`;
  expect(testsWithoutExpect(join(TESTS, "unit", "sample.test.ts"), src)).toEqual(["asserts nothing"]);
  expect(testsWithoutExpect(join(TESTS, "unit", "sample.test.ts"), src.replace("expect(1).toBe(1)", "void 1"))).toEqual([
    "asserts",
    "asserts nothing",
  ]);
});
