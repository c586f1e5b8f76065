// `burrow types` from source: development's declarations on stdout, --out, a deployed production version, the same
// text GET /_sdk/types.d.ts answers (header aside), an undeployed version and bad flags refused.

import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileSchema } from "../../src/schema/compiled.ts";
import { validateDefinition } from "../../src/schema/definition.ts";
import { typesBody } from "../../src/sdk/types-gen.ts";
import { tempDir } from "../helpers/app.ts";
import { runCli } from "../helpers/spawn.ts";

const dir = tempDir("burrow-cli-types-");
const data = join(dir, "data");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const note = { name: "note", fields: { text: { type: "string" }, stars: { type: "integer" }, tags: { type: "array", items: "string" } } };

test("burrow types prints development's declarations, writes --out, and reads a deployed version", async () => {
  const defs = join(dir, "note.json");
  writeFileSync(defs, JSON.stringify(note));
  expect((await runCli(["schema", "apply", defs, "--dir", data])).code).toBe(0);

  const dev = await runCli(["types", "--dir", data]);
  expect([dev.code, dev.stderr]).toEqual([0, ""]);
  expect(dev.stdout).toStartWith("// Burrow API types of development (version 0), generated ");
  expect(dev.stdout).toContain('  "stars"?: number;\n');
  expect(dev.stdout).toContain("export type MethodName = never;\n");
  // The body is the generator's over the stored schemas: the note schema beside the defaults.
  const compiled = compileSchema(validateDefinition(note));
  const alone = typesBody({ version: 0, schemas: new Map([["note", compiled]]) }, []);
  expect(dev.stdout).toContain(alone.slice(0, alone.indexOf("\n\n")));

  const file = join(dir, "burrow-types.d.ts");
  const written = await runCli(["types", "--version", "0", "--out", file, "--dir", data]);
  expect([written.code, written.stdout.trim()]).toEqual([0, `wrote the declarations of 3 schema(s) to ${file}`]);
  expect(readFileSync(file, "utf8").split("\n").slice(1)).toEqual(dev.stdout.split("\n").slice(1));

  expect((await runCli(["deploy", "--dir", data])).code).toBe(0);
  const v1 = await runCli(["types", "--version", "1", "--dir", data]);
  expect(v1.code).toBe(0);
  expect(v1.stdout).toStartWith("// Burrow API types of production API version 1, generated ");
  expect(v1.stdout.slice(v1.stdout.indexOf("\n\n"))).toBe(dev.stdout.slice(dev.stdout.indexOf("\n\n")));
}, 60_000);

test("an undeployed version fails with exit 1; bad flags with exit 2; --help shows the usage", async () => {
  const none = await runCli(["types", "--version", "9", "--dir", data]);
  expect([none.code, none.stderr.trim()]).toEqual([1, "burrow: API version 9 is not deployed"]);
  const bad = await runCli(["types", "--version", "x", "--dir", data]);
  expect([bad.code, bad.stderr.trim()]).toEqual([2, 'burrow: invalid --version "x"']);
  const help = await runCli(["types", "--help"]);
  expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("burrow types [--version N] [--out file]")]);
}, 60_000);
