// Rules of the house that a reader relies on (CONTRIBUTING.md): no source file over 400 lines in src/, sandbox/ and
// static/, so each stays readable in one sitting, and every one opens with a comment saying what it holds.

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";

const ROOT = join(import.meta.dir, "../..");
const MAX_LINES = 400;
const sources = ["src", "sandbox", "static"].flatMap((dir) =>
  [...new Glob("**/*.{ts,tsx,js,mjs,css}").scanSync(join(ROOT, dir))].map((f) => `${dir}/${f}`),
);

test(`no source file in src/, sandbox/ or static/ is over ${MAX_LINES} lines`, () => {
  expect(sources.length).toBeGreaterThan(100);
  const long = sources
    .map((f) => [f, readFileSync(join(ROOT, f), "utf8").trimEnd().split("\n").length] as const)
    .filter(([, n]) => n > MAX_LINES);
  expect(long).toEqual([]);
});

test("every source file opens with a comment saying what it holds", () => {
  const bare = sources.filter((f) => !/^(\/\/|\/\*)/.test(readFileSync(join(ROOT, f), "utf8")));
  expect(bare).toEqual([]);
});
