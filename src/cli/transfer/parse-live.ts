// `burrow import --from-parse`: a running Parse Server as import sources, read through its REST API with the master
// key (parse-rest.ts). The schema comes from GET /schemas (field types, pointer and relation targets: nothing guessed
// from values). One pass first reads the objectIds of every class that references point to (dangling references are
// left out and counted) and the keys of users and roles; then each class, users and roles first, page by page in
// objectId order, resumable after the last committed objectId: relation members through `$relatedTo` queries, files
// downloaded into Burrow's file store (local or S3) with their fields holding Burrow's URLs, `_User` password hashes
// merged from a mongoexport when given. `_Installation` becomes push tokens (parse-installations.ts).

import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../config.ts";
import type { SavedFile } from "../../files/files.ts";
import { fetchedUpload } from "../../files/upload.ts";
import type { Burrow } from "../../open-burrow.ts";
import type { FieldDef } from "../../schema/definition.ts";
import type { EnvName } from "../../system/environments.ts";
import type { ParseLookups } from "./parse-format.ts";
import { type ParseReport, eachObject, emptyParseReport, mapRecord } from "./parse-import.ts";
import { burrowName, isSkippedClass, parseFieldOf, planFieldNames, schemaNamer } from "./parse-names.ts";
import { type ParseClassSchema, ParseRest } from "./parse-rest.ts";
import type { Source, SourceRecord } from "./sources.ts";

type Raw = Record<string, unknown>;

export interface ParsePullOptions {
  url: string;
  appId: string;
  masterKey: string;
  /** A mongoexport of `_User` (a file, or a directory holding `_User.json`/`.jsonl`) whose password hashes are merged in. */
  mongoExport?: string;
}

/** Objects per page; relation and file requests per page run this many at a time. */
const PAGE = 500;
const PARALLEL = 8;

const say = (s: string) => process.stderr.write(`${s}\n`);

/** Run `fn` over `items`, at most `n` at a time. */
async function eachLimit<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** `_User` objectId -> bcrypt hash from a mongoexport of `_User`. */
async function hashesFrom(path: string): Promise<Map<string, string>> {
  let file = path;
  if (existsSync(path) && statSync(path).isDirectory()) {
    const found = ["_User.json", "_User.jsonl", "_User.ndjson"].map((n) => join(path, n)).find((p) => existsSync(p));
    if (!found) throw new ConfigError(`--mongo-export ${path}: no _User.json or _User.jsonl in it`);
    file = found;
  } else if (!existsSync(path)) throw new ConfigError(`--mongo-export: cannot read ${path}`);
  const out = new Map<string, string>();
  await eachObject(file, (raw) => {
    if (typeof raw._id === "string" && typeof raw._hashed_password === "string") out.set(raw._id, raw._hashed_password);
  });
  return out;
}

/** The sources of a live pull, with the report, the installations (null: none, or --schema) and users' keys. */
export async function parseLiveSources(
  s: Burrow,
  env: EnvName,
  o: ParsePullOptions,
  only: string | undefined,
): Promise<{
  sources: Source[];
  report: ParseReport;
  installations: AsyncIterable<Raw> | null;
  userKeyOf: (id: string) => string | undefined;
}> {
  const rest = new ParseRest(o.url, o.appId, o.masterKey);
  const report = emptyParseReport();
  const classes = await rest.schemas();
  const byName = new Map(classes.map((c) => [c.className, c]));
  const kept = classes.filter((c) => {
    if (c.className === "_Installation") return false;
    if (isSkippedClass(c.className)) report.skipped.push(c.className);
    return !isSkippedClass(c.className);
  });
  // Which objects exist, for every class a reference points to, and the keys of users and roles.
  const targets = new Set(["_User", "_Role"]);
  for (const c of kept) for (const f of Object.values(c.fields)) if (f.targetClass) targets.add(f.targetClass);
  const ids = new Map<string, Set<string>>();
  const keys = new Map<string, Map<string, string>>([
    ["_User", new Map()],
    ["_Role", new Map()],
  ]);
  for (const cls of targets) {
    if (!byName.has(cls)) continue;
    const keyField = cls === "_User" ? "username" : cls === "_Role" ? "name" : null;
    const set = new Set<string>();
    ids.set(cls, set);
    for await (const rows of rest.pages(cls, 1000, { keys: keyField ? `objectId,${keyField}` : "objectId" }))
      for (const r of rows) {
        if (typeof r.objectId !== "string") continue;
        set.add(r.objectId);
        if (keyField && typeof r[keyField] === "string") keys.get(cls)!.set(r.objectId, r[keyField] as string);
      }
  }
  say(`parse: ${classes.length} classes at ${rest.base}; ${[...ids.values()].reduce((n, x) => n + x.size, 0)} referenceable objects read`);
  const hashes = o.mongoExport ? await hashesFrom(o.mongoExport) : null;
  const rank = (c: string) => (c === "_User" ? 0 : c === "_Role" ? 1 : 2);
  kept.sort((a, b) => rank(a.className) - rank(b.className) || a.className.localeCompare(b.className));
  const nameOf = schemaNamer();
  const sources: Source[] = [];
  for (const c of kept) {
    const cls = c.className;
    const schema = nameOf(cls);
    if (only !== undefined && only !== schema && only !== cls) continue;
    report.classes.set(cls, schema);
    const pk = cls === "_User" ? "username" : `${schema}_id`;
    const fields = Object.keys(c.fields).filter((f) => parseFieldOf(cls, f) !== null);
    const plan = planFieldNames(cls, schema, fields, pk);
    for (const r of plan.renames) report.renamedFields.add(r);
    report.collisions.push(...plan.collisions);
    const lookups: ParseLookups = {
      keyOf: (k, id) => keys.get(k)?.get(id) ?? id,
      exists: (k, id) => ids.get(k)?.has(id),
      fieldName: (f) => plan.names.get(f) ?? burrowName(f),
      relationTargets: new Map(
        Object.entries(c.fields)
          .filter(([, f]) => f.type === "Relation" && f.targetClass)
          .map(([n, f]) => [n, f.targetClass!]),
      ),
    };
    const total = await rest.count(cls);
    sources.push(classSource(s, env, rest, c, schema, pk, lookups, plan.names, total, cls === "_User" ? hashes : null, report));
  }
  const installations =
    byName.has("_Installation") && only === undefined
      ? (async function* () {
          for await (const rows of rest.pages("_Installation", 1000)) yield* rows;
        })()
      : null;
  const users = keys.get("_User")!;
  return { sources, report, installations, userKeyOf: (id) => users.get(id) };
}

/** One class of the server as a source: pages after the checkpoint's objectId, each object with its relations and files. */
function classSource(
  s: Burrow,
  env: EnvName,
  rest: ParseRest,
  c: ParseClassSchema,
  schema: string,
  pk: string,
  lookups: ParseLookups,
  names: ReadonlyMap<string, string>,
  total: number,
  hashes: ReadonlyMap<string, string> | null,
  report: ParseReport,
): Source {
  const cls = c.className;
  const declared = new Map<string, FieldDef>();
  const relations = [...(lookups.relationTargets ?? [])];
  const fileFields = Object.entries(c.fields)
    .filter(([, f]) => f.type === "File")
    .map(([n]) => n);
  return {
    path: `${rest.base}#${cls}`,
    file: cls,
    schema,
    unit: "object",
    declared,
    remote: { total, pk },
    async *records(resume) {
      let line = resume?.line ?? 0;
      for await (const rows of rest.pages(cls, PAGE, { after: resume?.cursor ?? null })) {
        const joins = new Map<string, Map<string, string[]>>(relations.map(([f]) => [f, new Map()]));
        const asks = rows.flatMap((r) => relations.map(([f, target]) => ({ id: String(r.objectId), f, target })));
        await eachLimit(asks, PARALLEL, async (a) => void joins.get(a.f)!.set(a.id, await rest.relatedIds(cls, a.id, a.f, a.target)));
        const stored = new Map<Raw, SavedFile[]>();
        const downloads = rows.flatMap((r) => fileFields.filter((f) => isFile(r[f])).map((f) => ({ r, f })));
        await eachLimit(downloads, PARALLEL, async ({ r, f }) => {
          const saved = await copyFile(s, env, rest, r[f] as Raw, names.get(f) ?? burrowName(f)).catch((e: Error) => {
            const where = `${cls}.${f}`;
            const n = report.files.failed.get(where);
            report.files.failed.set(where, { count: (n?.count ?? 0) + 1, error: n?.error ?? e.message });
            return null;
          });
          if (saved) {
            r[f] = { __type: "File", name: (r[f] as Raw).name, url: saved.url };
            stored.set(r, [...(stored.get(r) ?? []), saved]);
            report.files.copied++;
          } else delete r[f];
        });
        const pageLookups = { ...lookups, joins };
        const out: SourceRecord[] = rows.map((raw) => {
          if (hashes && typeof raw.objectId === "string" && hashes.has(raw.objectId)) raw._hashed_password = hashes.get(raw.objectId);
          const rec = mapRecord(cls, { n: ++line, raw }, pageLookups, pk, declared, report);
          return { ...rec, cursor: String(raw.objectId), files: stored.get(raw) };
        });
        yield { records: out, bytes: line };
      }
    },
  };
}

function isFile(v: unknown): boolean {
  return typeof v === "object" && v !== null && (v as Raw).__type === "File" && typeof (v as Raw).name === "string";
}

/**
 * A Parse file's bytes into the environment's file store, under an id derived from its Parse name, so a resumed pull
 * overwrites rather than duplicates. Parse prefixes stored names with 32 hex characters and `_`; the name keeps the rest.
 */
async function copyFile(s: Burrow, env: EnvName, rest: ParseRest, v: Raw, field: string): Promise<SavedFile> {
  const name = String(v.name);
  const { bytes, contentType } = await rest.download(typeof v.url === "string" ? v.url : rest.fileUrl(name));
  const max = s.files.maxBytes(env);
  if (bytes.length > max) throw new Error(`a file of ${bytes.length} bytes is more than the limit of ${max} (setting files.maxBytes)`);
  const id = createHash("sha256").update(name).digest("hex").slice(0, 32);
  return s.files.save(env, field, fetchedUpload(contentType, name.replace(/^[0-9a-f]{32}_/, ""), bytes), id);
}
