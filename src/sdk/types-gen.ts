// TypeScript declarations of one API version, generated from its schemas and its custom code's method names: an
// interface per schema (objects as the API answers them), `Schemas` naming them by schema, `MethodName`. Pure.
// Served at GET /_sdk/types.d.ts and written by `burrow types` (docs/api/types.md).

import type { CompiledSchema, SchemaSet } from "../schema/compiled.ts";
import { EMAIL_VERIFIED, type FieldDef } from "../schema/definition.ts";

export interface TypesInput {
  /** The schemas of the version (development's is version 0). */
  set: SchemaSet;
  /** Names of the version's custom code methods (none without code). */
  methods: readonly string[];
  /** The server's version, for the header. */
  server: string;
}

/** Names the file declares besides the schemas' interfaces, and global types an interface must not shadow. */
const TAKEN = new Set(["Schemas", "SchemaName", "MethodName", "Array", "Object", "String", "Number", "Boolean", "Date"]);
const ITEM_TS: Record<string, string> = { string: "string", integer: "number", float: "number", boolean: "boolean" };

/** `user_profile` -> `UserProfile`. */
function pascal(name: string): string {
  return name
    .split("_")
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

/** Interface names by schema name: PascalCase, made unique (`Schema`, then a number, appended on a clash). Sorted input gives stable names. */
export function interfaceNames(schemas: readonly string[]): Map<string, string> {
  const used = new Set(TAKEN);
  const names = new Map<string, string>();
  for (const schema of [...schemas].sort()) {
    const base = pascal(schema);
    let name = used.has(base) ? `${base}Schema` : base;
    for (let i = 2; used.has(name); i++) name = `${base}Schema${i}`;
    used.add(name);
    names.set(schema, name);
  }
  return names;
}

/** Text safe inside a block comment. */
const commentSafe = (s: string) => s.replace(/\*\//g, "*\\/");
const key = (name: string) => JSON.stringify(name);

function fieldType(f: FieldDef, names: ReadonlyMap<string, string>): string {
  switch (f.type) {
    case "string":
    case "binary":
      return "string";
    case "integer":
    case "float":
      return "number";
    case "boolean":
      return "boolean";
    case "array":
      return `${ITEM_TS[f.items ?? "string"] ?? "unknown"}[]`;
    case "geopoint":
      return "{ lat: number; lon: number; distance?: number }";
    case "relationship": {
      const related = names.get(f.schema ?? "");
      const one = related ? `string | ${related}` : "string";
      return f.many ? `(${one})[]` : one;
    }
    default:
      return "unknown";
  }
}

function fieldNote(c: CompiledSchema, name: string, f: FieldDef): string[] {
  const notes: string[] = [];
  if (f.type === "integer") notes.push("An integer.");
  if (f.type === "geopoint") notes.push("A location; `distance` (radians) is answered to `[near]` queries.");
  if (f.type === "binary") notes.push("A file: its URL (write an upload string).");
  if (f.type === "relationship")
    notes.push(
      `${f.many ? "Keys" : "The key"} of related "${f.schema}" object${f.many ? "s" : ""} (the object${f.many ? "s" : ""} when expanded).`,
    );
  if (c.def.user?.email === name) notes.push("The user's email address.");
  if (c.def.user && name === EMAIL_VERIFIED) notes.push("Set by the server: the email address is verified.");
  if (f.visibility === "owner") notes.push("Only its owner sees it (and the private key, admins and custom code).");
  return notes;
}

function docLines(notes: readonly string[], indent: string): string[] {
  if (notes.length === 0) return [];
  if (notes.length === 1) return [`${indent}/** ${commentSafe(notes[0]!)} */`];
  return [`${indent}/**`, ...notes.map((n) => `${indent} * ${commentSafe(n)}`), `${indent} */`];
}

/** The interface of one schema: the key and dates required, every other field optional (NULL fields are omitted). */
function schemaInterface(c: CompiledSchema, names: ReadonlyMap<string, string>): string[] {
  const lines = docLines([`An object of schema "${c.name}"${c.def.user ? " (a user schema)" : ""}.`], "");
  lines.push(`export interface ${names.get(c.name)} {`);
  lines.push(...docLines([c.def.user ? "The key: the user's login name." : "The key."], "  "), `  ${key(c.pk)}: string;`);
  for (const [name, f] of c.fields) {
    if (f.type === "password") continue; // never answered
    lines.push(...docLines(fieldNote(c, name, f), "  "), `  ${key(name)}?: ${fieldType(f, names)};`);
  }
  lines.push("  /** Created, in milliseconds since 1970. */", '  "createddate": number;');
  lines.push("  /** Last modified, in milliseconds since 1970 (a new value at every change). */", '  "lastmoddate": number;');
  lines.push("  /** The owner, `<user schema>/<username>`: the signed-in user who created it. */", '  "sm_owner"?: string;');
  lines.push("}");
  return lines;
}

/** The header line naming the version: "development (version 0)" or "production API version N". */
export function versionLabel(version: number): string {
  return version === 0 ? "development (version 0)" : `production API version ${version}`;
}

/**
 * The declarations of a version without the header: what changes only with the schemas and the methods (an
 * ETag is taken over it).
 */
export function typesBody(set: SchemaSet, methods: readonly string[]): string {
  const schemas = [...set.schemas.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = interfaceNames(schemas.map((c) => c.name));
  const out: string[] = [];
  for (const c of schemas) out.push(...schemaInterface(c, names), "");
  // A type alias, not an interface: only an alias is assignable to the client's `Record<string, object>`.
  out.push("/** Every schema's object type, by schema name. */", "export type Schemas = {");
  for (const c of schemas) out.push(`  ${key(c.name)}: ${names.get(c.name)};`);
  out.push("};", "", "/** A schema's name. */", "export type SchemaName = keyof Schemas;", "");
  const sorted = [...new Set(methods)].sort();
  out.push("/** The custom code methods of this version. */");
  out.push(`export type MethodName = ${sorted.length ? sorted.map((m) => JSON.stringify(m)).join(" | ") : "never"};`);
  return `${out.join("\n")}\n`;
}

/** The whole `.d.ts` text: a header with the version and `generatedAt`, then typesBody. */
export function generateTypes(input: TypesInput, generatedAt: Date): string {
  const header = [
    `// Burrow API types of ${versionLabel(input.set.version)}, generated ${generatedAt.toISOString()} by Burrow ${commentSafe(input.server).replace(/[\r\n]/g, " ")}.`,
    "// Objects as the API answers them, by schema, and the custom code method names. Do not edit: regenerate after a",
    `// schema change (GET /_sdk/types.d.ts?version=${input.set.version} or \`burrow types --version ${input.set.version}\`).`,
    "",
  ];
  return `${header.join("\n")}\n${typesBody(input.set, input.methods)}`;
}
