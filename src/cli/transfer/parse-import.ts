// A Parse Server export as import sources: reads `_SCHEMA` (field types, mongoexport), the `_Join:<field>:<Class>`
// files (relation members), the users' and roles' keys (objectId -> username / name), then one source per
// class, users and roles first. Whole JSON documents (dashboard) are read at once; mongoexport's JSON Lines
// stream. The mapping itself is parse-format.ts.

import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { ConfigError } from "../../config.ts";
import type { FieldDef } from "../../schema/definition.ts";
import { readLines } from "./line-reader.ts";
import { type Dangling, type ParseLookups, documentRows, mapParseObject, objectIdOf, schemaTypesOf } from "./parse-format.ts";
import { burrowName, classOfFile, isSkippedClass, joinOf, parseFieldOf, planFieldNames, schemaNamer } from "./parse-names.ts";
import type { Source, SourceRecord } from "./sources.ts";

/** What the import learnt while mapping, for the terminal report (parseReportLines). */
export interface ParseReport {
  classes: Map<string, string>;
  renamedFields: Set<string>;
  /** Fields that lowercase alike, and the distinct names they were given. */
  collisions: string[];
  skipped: string[];
  dropped: Map<string, Set<string>>;
  /** References left out, per `Class.field`. */
  dangling: Map<string, Dangling>;
  /** A live pull's files: how many were copied into the file store, and those that could not be, per `Class.field`. */
  files: { copied: number; failed: Map<string, { count: number; error: string }> };
  notes: string[];
}

export function emptyParseReport(): ParseReport {
  return {
    classes: new Map(),
    renamedFields: new Set(),
    collisions: [],
    skipped: [],
    dropped: new Map(),
    dangling: new Map(),
    files: { copied: 0, failed: new Map() },
    notes: [],
  };
}

/** The summary lines of a Parse import, after the counts. */
export function parseReportLines(r: ParseReport): string[] {
  const out: string[] = [];
  for (const x of r.renamedFields) out.push(`field ${x}`);
  out.push(...r.collisions);
  for (const [cls, fields] of r.dropped)
    out.push(
      `class ${cls}: left out ${[...fields].sort().join(", ")} (access lists, auth data and Parse internals; Burrow uses schema permissions)`,
    );
  for (const [where, d] of r.dangling)
    out.push(
      d.classMissing
        ? `${where}: ${d.count} reference(s) to ${d.target}, which this import does not hold, left out (users and roles are keyed by username and name, which only their own export gives)`
        : `${where}: ${d.count} reference(s) to ${d.target} objects that do not exist (deleted in Parse), left out`,
    );
  if (r.files.copied) out.push(`files: ${r.files.copied} copied into the file store; the objects' binary fields hold their Burrow URLs`);
  for (const [where, f] of r.files.failed)
    out.push(`${where}: ${f.count} file(s) could not be copied (${f.error}); those objects were imported without them`);
  out.push(...r.notes);
  return out;
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
export async function eachObject(path: string, fn: (raw: Raw) => void): Promise<void> {
  for await (const b of objectsOf(path)) for (const it of b.items) if (it.raw) fn(it.raw);
}

/** Whether a directory looks like a Parse export (a `_User` file, or class files of Parse's shapes). */
export function looksLikeParse(dir: string): boolean {
  return readdirSync(dir).some((f) => /^(_User|_Role|_SCHEMA|_Join:.+)\.(json|jsonl|ndjson)$/.test(f));
}

/** What one pass over a class file learnt: its class (objects' `className`, else the file name), ids, fields, relations. */
interface ClassScan {
  cls: string;
  path: string;
  ids: Set<string>;
  fields: Set<string>;
  /** Relation fields seen as `{"__type": "Relation"}` values: field -> target class. */
  relations: Map<string, string>;
}

async function scanClass(path: string, keys: Map<string, Map<string, string>>): Promise<ClassScan> {
  const classNames = new Set<string>();
  const scan: ClassScan = { cls: classOfFile(basename(path)), path, ids: new Set(), fields: new Set(), relations: new Map() };
  const found: Raw[] = [];
  await eachObject(path, (raw) => {
    if (typeof raw.className === "string") classNames.add(raw.className);
    else classNames.add("");
    found.push(raw);
  });
  if (classNames.size === 1 && !classNames.has("")) scan.cls = [...classNames][0]!;
  const keyField = scan.cls === "_User" ? "username" : scan.cls === "_Role" ? "name" : null;
  const keyMap = keyField ? (keys.get(scan.cls) ?? new Map<string, string>()) : null;
  if (keyField && keyMap) keys.set(scan.cls, keyMap);
  for (const raw of found) {
    const id = objectIdOf(raw);
    if (id !== undefined) scan.ids.add(id);
    if (keyField && keyMap && id !== undefined && typeof raw[keyField] === "string" && raw[keyField] !== "")
      keyMap.set(id, raw[keyField] as string);
    for (const [k, v] of Object.entries(raw)) {
      const f = parseFieldOf(scan.cls, k);
      if (f === null) continue;
      scan.fields.add(f);
      if (typeof v === "object" && v !== null && (v as Raw).__type === "Relation") scan.relations.set(f, String((v as Raw).className));
    }
  }
  return scan;
}

/** The sources of a Parse export (a directory, or one class file), with what the terminal report needs. */
export async function parseSources(
  input: string,
  only: string | undefined,
): Promise<{ sources: Source[]; report: ParseReport; installations: string[]; userKeyOf: (id: string) => string | undefined }> {
  const isDir = statSync(input).isDirectory();
  const files = isDir
    ? readdirSync(input)
        .filter((f) => /\.(json|jsonl|ndjson)$/i.test(f))
        .sort()
        .map((f) => join(input, f))
    : [input];
  const report = emptyParseReport();
  const types = new Map<string, Map<string, string>>();
  const joins = new Map<string, Map<string, Map<string, string[]>>>();
  const keys = new Map<string, Map<string, string>>([
    ["_User", new Map()],
    ["_Role", new Map()],
  ]);
  const classPaths: string[] = [];
  const installations: string[] = [];
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
    } else if (cls === "_Installation") installations.push(path);
    else if (isSkippedClass(cls)) report.skipped.push(cls);
    else classPaths.push(path);
  }
  // One pass over every class file first: which objects exist (dangling references), each class's field names (so
  // names that lowercase alike are told apart the same way in every object) and users' and roles' keys.
  const scans: ClassScan[] = [];
  for (const path of classPaths) {
    const scan = await scanClass(path, keys);
    if (scan.cls === "_Installation") installations.push(path);
    else if (isSkippedClass(scan.cls)) report.skipped.push(scan.cls);
    else scans.push(scan);
  }
  const byClass = new Map<string, ClassScan>();
  for (const sc of scans) {
    const ids = byClass.get(sc.cls)?.ids;
    if (ids)
      for (const id of sc.ids) ids.add(id); // two files of one class
    else byClass.set(sc.cls, sc);
  }
  const rank = (c: string) => (c === "_User" ? 0 : c === "_Role" ? 1 : 2);
  scans.sort((a, b) => rank(a.cls) - rank(b.cls) || a.cls.localeCompare(b.cls));
  const nameOf = schemaNamer();
  const sources: Source[] = [];
  for (const scan of scans) {
    const { cls, path } = scan;
    const schema = nameOf(cls);
    if (only !== undefined && only !== schema && only !== cls) continue;
    report.classes.set(cls, schema);
    const pk = cls === "_User" ? "username" : `${schema}_id`;
    const classTypes = types.get(cls);
    const relationTargets = new Map<string, string>(scan.relations);
    for (const [f, t] of classTypes ?? []) {
      const m = /^relation<(.+)>$/.exec(t);
      if (m) relationTargets.set(f, m[1]!);
    }
    const plan = planFieldNames(cls, schema, [...scan.fields, ...(classTypes?.keys() ?? []), ...relationTargets.keys()], pk);
    for (const r of plan.renames) report.renamedFields.add(r);
    report.collisions.push(...plan.collisions);
    for (const [field, target] of relationTargets)
      if (!joins.get(cls)?.has(field))
        report.notes.push(
          `${cls}.${field}: a relation to ${target} whose members this export does not hold (no _Join:${field}:${cls} file; the dashboard's export leaves relations out): imported empty. A live pull brings them: burrow import --from-parse <serverURL> --parse-app-id <id> --parse-master-key <key>`,
        );
    const lookups: ParseLookups = {
      keyOf: (c, id) => keys.get(c)?.get(id) ?? id,
      exists: (c, id) => byClass.get(c)?.ids.has(id),
      fieldName: (f) => plan.names.get(f) ?? burrowName(f),
      types: classTypes,
      joins: joins.get(cls),
      relationTargets,
    };
    sources.push(classSource(cls, schema, path, pk, lookups, report));
  }
  for (const [owner, byField] of joins)
    if (!byClass.has(owner))
      report.notes.push(
        `relation members of ${owner} (${[...byField.keys()].join(", ")}) were exported without the ${owner} objects; left out`,
      );
  const users = keys.get("_User")!;
  return { sources, report, installations, userKeyOf: (id) => users.get(id) };
}

/** One class file as a source: each object mapped (mapParseObject), what was dropped or left out counted in `report`. */
function classSource(cls: string, schema: string, path: string, pk: string, lookups: ParseLookups, report: ParseReport): Source {
  const declared = new Map<string, FieldDef>();
  return {
    path,
    file: basename(path),
    schema,
    unit: "line",
    declared,
    async *records() {
      for await (const b of objectsOf(path)) {
        this.unit = b.unit;
        yield { records: b.items.map((it) => mapRecord(cls, it, lookups, pk, declared, report)), bytes: b.bytes };
      }
    },
  };
}

/** One object of a class as a record (or the reason it cannot be one), its declared fields and report entries noted. */
export function mapRecord(
  cls: string,
  it: { n: number; raw: Raw | null; error?: string },
  lookups: ParseLookups,
  pk: string,
  declared: Map<string, FieldDef>,
  report: ParseReport,
): SourceRecord {
  if (!it.raw) return { line: it.n, error: it.error ?? "not a JSON object" };
  try {
    if (cls === "_User" && typeof it.raw.username !== "string")
      throw new Error("a _User without a username (Burrow's users are keyed by username)");
    if (cls === "_Role" && typeof it.raw.name !== "string") throw new Error("a _Role without a name");
    const m = mapParseObject(cls, it.raw, lookups, pk);
    for (const [f, d] of m.declared) if (!declared.has(f)) declared.set(f, d);
    if (m.dropped.length) {
      const set = report.dropped.get(cls) ?? new Set<string>();
      report.dropped.set(cls, set);
      for (const d of m.dropped) set.add(d);
    }
    for (const [f, d] of m.dangling) {
      const where = `${cls}.${f}`;
      const have = report.dangling.get(where);
      if (have) have.count += d.count;
      else report.dangling.set(where, { ...d });
    }
    return { line: it.n, body: m.body };
  } catch (e) {
    return { line: it.n, error: (e as Error).message };
  }
}

/** Every object of the `_Installation` files, for importInstallations. */
export async function* installationRows(paths: readonly string[]): AsyncGenerator<Raw> {
  for (const path of paths) for await (const b of objectsOf(path)) for (const it of b.items) if (it.raw) yield it.raw;
}
