// The declarations generator (src/sdk/types-gen.ts): every field type, a user schema without its password, owner
// fields, many relationships, interface names made unique, method names, the header.

import { describe, expect, test } from "bun:test";
import { compileSchema, type SchemaSet } from "../../src/schema/compiled.ts";
import { validateDefinition } from "../../src/schema/definition.ts";
import { generateTypes, interfaceNames, typesBody } from "../../src/sdk/types-gen.ts";

function setOf(version: number, defs: unknown[]): SchemaSet {
  const compiled = defs.map((d) => compileSchema(validateDefinition(d)));
  return { version, schemas: new Map(compiled.map((c) => [c.name, c])) };
}

const todo = {
  name: "todo",
  fields: {
    title: { type: "string" },
    done: { type: "boolean" },
    priority: { type: "integer" },
    score: { type: "float" },
    tags: { type: "array", items: "string" },
    counts: { type: "array", items: "integer" },
    ratios: { type: "array", items: "float" },
    flags: { type: "array", items: "boolean" },
    assignee: { type: "relationship", schema: "account" },
    watchers: { type: "relationship", schema: "account", many: true },
    parent: { type: "relationship", schema: "todo" },
    place: { type: "geopoint" },
    photo: { type: "binary" },
    note: { type: "string", visibility: "owner" },
  },
};
const account = {
  name: "account",
  user: { key: "login", password: "secret", email: "email", verifyEmail: true },
  fields: { secret: { type: "password" }, email: { type: "string", visibility: "owner" }, nickname: { type: "string" } },
};

/** The lines of one interface's body, from `export interface <name> {` to its `}`. */
function interfaceOf(text: string, name: string): string {
  const start = text.indexOf(`export interface ${name} {\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  return text.slice(start, text.indexOf("\n}\n", start) + 2);
}

describe("types-gen", () => {
  const set = setOf(0, [todo, account]);
  const text = generateTypes({ set, methods: ["hello_world", "add_todo"], server: "9.9.9" }, new Date("2026-01-02T03:04:05Z"));

  test("every field type has its TypeScript type; NULL-able fields are optional, the key and dates required", () => {
    const t = interfaceOf(text, "Todo");
    for (const line of [
      '"todo_id": string;',
      '"title"?: string;',
      '"done"?: boolean;',
      '"priority"?: number;',
      '"score"?: number;',
      '"tags"?: string[];',
      '"counts"?: number[];',
      '"ratios"?: number[];',
      '"flags"?: boolean[];',
      '"assignee"?: string | Account;',
      '"watchers"?: (string | Account)[];',
      '"parent"?: string | Todo;',
      '"place"?: { lat: number; lon: number; distance?: number };',
      '"photo"?: string;',
      '"note"?: string;',
      '"createddate": number;',
      '"lastmoddate": number;',
      '"sm_owner"?: string;',
    ])
      expect(t).toContain(`  ${line}\n`);
  });

  test("a user schema: its key required, no password, emailverified; owner fields carry the doc comment", () => {
    const a = interfaceOf(text, "Account");
    expect(a).toContain('  "login": string;\n');
    expect(a).not.toContain("secret");
    expect(a).not.toContain('"account_id"');
    expect(a).toContain('  "emailverified"?: boolean;\n');
    expect(a).toContain('  "nickname"?: string;\n');
    // The comment sits right above the owner-only fields, not above the others.
    expect(a).toMatch(/Only its owner sees it[^\n]*\n {3}\*\/\n {2}"email"\?: string;/);
    // emailverified is seen by whoever sees the address.
    expect(a).toMatch(/Only its owner sees it[^\n]*\n {3}\*\/\n {2}"emailverified"\?: boolean;/);
    expect(a).toContain('"email"?: string;\n  "nickname"?: string;\n');
    expect(interfaceOf(text, "Todo")).toMatch(/\/\*\* Only its owner sees it[^\n]*\*\/\n {2}"note"\?: string;/);
    expect(interfaceOf(text, "Todo")).not.toMatch(/Only its owner sees it[^\n]*\*\/\n {2}"title"/);
  });

  test("Schemas, SchemaName and MethodName; the header names the version and the time", () => {
    expect(text).toContain('export type Schemas = {\n  "account": Account;\n  "todo": Todo;\n};\n');
    expect(text).toContain("export type SchemaName = keyof Schemas;\n");
    expect(text).toContain('export type MethodName = "add_todo" | "hello_world";\n');
    expect(text.split("\n")[0]).toBe("// Burrow API types of development (version 0), generated 2026-01-02T03:04:05.000Z by Burrow 9.9.9.");
    const prod = generateTypes({ set: setOf(3, [todo, account]), methods: [], server: "9.9.9" }, new Date(0));
    expect(prod.split("\n")[0]).toContain("production API version 3");
    expect(prod).toContain("GET /_sdk/types.d.ts?version=3");
    expect(prod).toContain("export type MethodName = never;\n");
  });

  test("the body is stable: the same input gives the same text, whatever order the set holds its schemas in", () => {
    const reversed = setOf(0, [account, todo]);
    expect(typesBody(reversed, ["hello_world", "add_todo"])).toBe(typesBody(set, ["add_todo", "hello_world", "add_todo"]));
    expect(text.endsWith(typesBody(set, ["add_todo", "hello_world"]))).toBe(true);
  });

  test("interface names: PascalCase, unique, never the file's own names or common globals", () => {
    const names = interfaceNames(["user_profile", "a1", "a_1", "schemas", "method_name", "date", "todo"]);
    expect(Object.fromEntries(names)).toEqual({
      a1: "A1",
      a_1: "A1Schema",
      date: "DateSchema",
      method_name: "MethodNameSchema",
      schemas: "SchemasSchema",
      todo: "Todo",
      user_profile: "UserProfile",
    });
    const odd = generateTypes(
      { set: setOf(0, [{ name: "schemas", fields: { n: { type: "integer" } } }]), methods: [], server: "x" },
      new Date(0),
    );
    expect(odd).toContain('export type Schemas = {\n  "schemas": SchemasSchema;\n};');
  });

  test("the text is valid TypeScript (it transpiles) with quoted keys only", () => {
    const js = new Bun.Transpiler({ loader: "ts" }).transformSync(text);
    expect(js.trim()).toBe("");
    // Member lines: two spaces, then a name (comment lines start with a slash or a star).
    const members = text.split("\n").filter((l) => /^ {2}[^ ]/.test(l) && !["/", "*"].includes(l.trim()[0]!));
    const keys = members.map((l) => l.trim().split(/\??:/)[0]!);
    expect(keys.length).toBeGreaterThan(20);
    expect(keys.filter((k) => !/^"[a-z][a-z0-9_]*"$/.test(k))).toEqual([]);
  });
});
