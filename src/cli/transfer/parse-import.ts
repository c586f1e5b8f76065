// A Parse Server export as import sources: reads `_SCHEMA` (field types, mongoexport), the `_Join:<field>:<Class>`
// files (relation members), the users' and roles' keys (objectId -> username / name), then one source per
// class, users and roles first. Whole JSON documents (dashboard) are read at once; mongoexport's JSON Lines
// stream. The mapping itself is parse-format.ts.

import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { ConfigError } from "../../config.ts";
import type { FieldDef } from "../../schema/definition.ts";
import { readLines } from "./line-reader.ts";
import {
  type ParseLookups,
  burrowName,
  classOfFile,
  documentRows,
  isSkippedClass,
  joinOf,
  mapParseObject,
  objectIdOf,
  schemaNameOf,
  schemaTypesOf,
} from "./parse-format.ts";
import type { Source, SourceRecord } from "./sources.ts";

/** What the import learnt while mapping, for the terminal report. */
export interface ParseReport {
  classes: Map<string, string>;
  renamedFields: Set<string>;
  skipped: string[];
  dropped: Map<string, Set<string>>;
  notes: string[];
}

type Raw = Record<string, unknown>;

/** A class file's objects: a JSON document (`{"results": [...]}` or an array) or JSON Lines (mongoexport). */
async function* objectsOf(
  path: string,
): AsyncGenerator<{ items: { n: number; raw: Raw | null; error?: string }[]; bytes: number; unit: "line" | "object" }> {
  const head = await Bun.file(path).slice(0, 4096).text();
  const first = head.trimStart()[0];
  let doc: unknown;
  if (first === "[") doc = await readJson(path);
  else if (first === "{") {
    const firstLine = head.split("\n")[0]!;
    let lineObject: unknown = null;
    try {
      lineObject = JSON.parse(firstLine);
    } catch {}
    if (lineObject === null || documentRows(lineObject)) doc = await readJson(path);
  }
  if (doc !== undefined) {
    const rows = documentRows(doc);
    if (!rows) throw new ConfigError(`${basename(path)}: neither {"results": [...]}, a JSON array, nor one JSON object per line`);
    const size = Bun.file(path).size;
    for (let i = 0; i < rows.length; i += 1000)
      yield {
        items: rows
          .slice(i, i + 1000)
          .map((r, j) =>
            typeof r === "object" && r !== null && !Array.isArray(r)
              ? { n: i + j + 1, raw: r }
              : { n: i + j + 1, raw: null, error: "not a JSON object" },
          ),
        bytes: Math.round((size * Math.min(rows.length, i + 1000)) / rows.length),
        unit: "object",
      };
    return;
  }
  for await (const b of readLines(path)) {
    const items: { n: number; raw: Raw | null; error?: string }[] = [];
    b.lines.forEach((text, i) => {
      if (text.trim() === "") return;
      try {
        const v = JSON.parse(text);
        items.push(
          typeof v === "object" && v !== null && !Array.isArray(v)
            ? { n: b.first + i, raw: v }
            : { n: b.first + i, raw: null, error: "not a JSON object" },
        );
      } catch (e) {
        items.push({ n: b.first + i, raw: null, error: `not valid JSON (${(e as Error).message})` });
      }
    });
    yield { items, bytes: b.bytes, unit: "line" };
  }
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await Bun.file(path).text());
  } catch (e) {
    throw new ConfigError(`${basename(path)}: not valid JSON (${(e as Error).message})`);
  }
}

/** Every object of a file (for the small pre-passes: _SCHEMA, _Join, users' and roles' keys). */
async function eachObject(path: string, fn: (raw: Raw) => void): Promise<void> {
  for await (const b of objectsOf(path)) for (const it of b.items) if (it.raw) fn(it.raw);
}

/** Whether a directory looks like a Parse export (a `_User` file, or class files of Parse's shapes). */
export function looksLikeParse(dir: string): boolean {
  return readdirSync(dir).some((f) => /^(_User|_Role|_SCHEMA|_Join:.+)\.(json|jsonl|ndjson)$/.test(f));
}

/** The sources of a Parse export (a directory, or one class file), with what the terminal report needs. */
export async function parseSources(input: string, only: string | undefined): Promise<{ sources: Source[]; report: ParseReport }> {
  const isDir = statSync(input).isDirectory();
  const files = isDir
    ? readdirSync(input)
        .filter((f) => /\.(json|jsonl|ndjson)$/i.test(f))
        .sort()
        .map((f) => join(input, f))
    : [input];
  const report: ParseReport = { classes: new Map(), renamedFields: new Set(), skipped: [], dropped: new Map(), notes: [] };
  const types = new Map<string, Map<string, string>>();
  const joins = new Map<string, Map<string, Map<string, string[]>>>();
  const keys = new Map<string, Map<string, string>>([
    ["_User", new Map()],
    ["_Role", new Map()],
  ]);
  const classFiles: { cls: string; path: string }[] = [];
  for (const path of files) {
    const cls = classOfFile(basename(path));
    const join = joinOf(cls);
    if (cls === "_SCHEMA") {
      await eachObject(path, (raw) => {
        const name = raw._id ?? raw.className;
        if (typeof name === "string") types.set(name, schemaTypesOf((raw.fields as Raw | undefined) ?? raw));
      });
    } else if (join) {
      const byField = joins.get(join.owner) ?? new Map<string, Map<string, string[]>>();
      joins.set(join.owner, byField);
      const members = byField.get(join.field) ?? new Map<string, string[]>();
      byField.set(join.field, members);
      await eachObject(path, (raw) => {
        const owning = raw.owningId;
        const related = raw.relatedId;
        if (typeof owning !== "string" || typeof related !== "string") return;
        const list = members.get(owning);
        if (list) list.push(related);
        else members.set(owning, [related]);
      });
    } else if (isSkippedClass(cls)) report.skipped.push(cls);
    else classFiles.push({ cls, path });
  }
  // Users are keyed by username and roles by name in Burrow: learn those keys before mapping any reference.
  for (const { cls, path } of classFiles) {
    const map = keys.get(cls);
    const keyField = cls === "_User" ? "username" : cls === "_Role" ? "name" : null;
    if (map && keyField)
      await eachObject(path, (raw) => {
        const id = objectIdOf(raw);
        const k = raw[keyField];
        if (id !== undefined && typeof k === "string" && k !== "") map.set(id, k);
      });
  }
  const rank = (c: string) => (c === "_User" ? 0 : c === "_Role" ? 1 : 2);
  classFiles.sort((a, b) => rank(a.cls) - rank(b.cls) || a.cls.localeCompare(b.cls));
  const taken = new Map<string, string>();
  const sources: Source[] = [];
  for (const { cls, path } of classFiles) {
    let schema = schemaNameOf(cls);
    if (taken.has(schema) && taken.get(schema) !== cls) {
      let i = 2;
      while (taken.has(`${schema}_${i}`) && i < 1000) i++;
      schema = `${schema}_${i}`;
    }
    taken.set(schema, cls);
    if (only !== undefined && only !== schema && only !== cls) continue;
    report.classes.set(cls, schema);
    const pk = cls === "_User" ? "username" : `${schema}_id`;
    const relationTargets = new Map<string, string>();
    const lookups: ParseLookups = {
      keyOf: (c, id) => keys.get(c)?.get(id) ?? id,
      types: types.get(cls),
      joins: joins.get(cls),
      relationTargets,
    };
    const declared = new Map<string, FieldDef>();
    const seenFields = new Set<string>();
    sources.push({
      path,
      file: basename(path),
      schema,
      unit: "line",
      declared,
      async *records() {
        for await (const b of objectsOf(path)) {
          this.unit = b.unit;
          const out: SourceRecord[] = [];
          for (const it of b.items) {
            if (!it.raw) {
              out.push({ line: it.n, error: it.error ?? "not a JSON object" });
              continue;
            }
            try {
              if (cls === "_User" && typeof it.raw.username !== "string")
                throw new Error("a _User without a username (Burrow's users are keyed by username)");
              if (cls === "_Role" && typeof it.raw.name !== "string") throw new Error("a _Role without a name");
              const m = mapParseObject(cls, it.raw, lookups, pk);
              for (const [f, c] of m.relationTargets) relationTargets.set(f, c);
              for (const [f, d] of m.declared) if (!declared.has(f)) declared.set(f, d);
              for (const k of Object.keys(it.raw))
                if (!seenFields.has(k)) {
                  seenFields.add(k);
                  if (!k.startsWith("_") && !["objectId", "createdAt", "updatedAt", "ACL"].includes(k) && burrowName(k) !== k)
                    report.renamedFields.add(`${cls}.${k} -> ${schema}.${burrowName(k)}`);
                }
              if (m.dropped.length) {
                const set = report.dropped.get(cls) ?? new Set<string>();
                report.dropped.set(cls, set);
                for (const d of m.dropped) set.add(d);
              }
              out.push({ line: it.n, body: m.body });
            } catch (e) {
              out.push({ line: it.n, error: (e as Error).message });
            }
          }
          yield { records: out, bytes: b.bytes };
        }
      },
    });
  }
  for (const [owner, byField] of joins)
    if (!classFiles.some((c) => c.cls === owner))
      report.notes.push(
        `relation members of ${owner} (${[...byField.keys()].join(", ")}) were exported without the ${owner} objects; left out`,
      );
  return { sources, report };
}
