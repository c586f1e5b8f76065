// Parse Server exports to Burrow objects. Two shapes per class file: the REST/dashboard shape (`objectId`,
// `createdAt`/`updatedAt` ISO strings, `{"__type": "Pointer"|"Date"|"GeoPoint"|"File"|"Relation"|"Bytes"}`) as
// `{"results": [...]}` or a JSON array, and mongoexport's (`_id`, `_created_at`/`_updated_at` as `{"$date"}`,
// pointers as `_p_<field>: "Class$objectId"`, `_acl`/`_rperm`/`_wperm`, `_hashed_password`, GeoPoints as
// [lon, lat] known from `_SCHEMA`; `_User`'s bcrypt hash kept as the password). Relations come from `_Join:<field>:<OwningClass>` exports. Pure: the
// importer reads the files and passes what they hold.

import type { FieldDef } from "../../schema/definition.ts";
import { isValidName } from "../../schema/definition.ts";

/** Parse's own classes that have no Burrow counterpart (sessions, installations, config, job and push state). */
const SKIPPED_CLASSES = new Set([
  "_Session",
  "_Installation",
  "_SCHEMA",
  "_Idempotency",
  "_PushStatus",
  "_JobStatus",
  "_JobSchedule",
  "_Audience",
  "_Hooks",
  "_GlobalConfig",
  "_GraphQLConfig",
  "_Product",
  "_ExportProgress",
]);

export function isSkippedClass(className: string): boolean {
  return SKIPPED_CLASSES.has(className);
}

/** A Parse name (class or field) as a Burrow name: lowercase letters, digits and `_`, starting with a letter. */
export function burrowName(parseName: string): string {
  let n: string = parseName.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  if (!/^[a-z]/.test(n)) n = `c_${n.replace(/^_+/, "")}`;
  n = n.slice(0, 64);
  const fallback = `${n.slice(0, 62)}_x`; // "constructor", "prototype"
  return isValidName(n) ? n : fallback;
}

/** A class's schema: `_User` is `user`, `_Role` is `aclrole` (key = role name, `users` its members). */
export function schemaNameOf(className: string): string {
  if (className === "_User") return "user";
  if (className === "_Role") return "aclrole";
  return burrowName(className);
}

/** The class of a file name: `GameScore.json`, `_User.jsonl`, `_Join:likes:Post.json`. */
export function classOfFile(fileName: string): string {
  return fileName.replace(/\.(jsonl|json|ndjson)$/i, "");
}

/** `_Join:<field>:<OwningClass>` → its field and owning class; null for other names. */
export function joinOf(className: string): { field: string; owner: string } | null {
  const m = /^_Join:([^:]+):(.+)$/.exec(className);
  return m ? { field: m[1]!, owner: m[2]! } : null;
}

/** Parse `_SCHEMA` field types (mongo): `*_User` pointer, `relation<_User>`, `geo_point`, `file`, `date`, ... */
export type ParseFieldTypes = ReadonlyMap<string, string>;

/** The `_SCHEMA` document of one class (mongoexport) as field -> type; metadata members are left out. */
export function schemaTypesOf(doc: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(doc)) if (!k.startsWith("_") && typeof v === "string") out.set(k, v);
  return out;
}

/** What an import of one Parse class needs to know beyond the object itself. */
export interface ParseLookups {
  /** Keys of classes whose Burrow key is not the objectId: `_User` objectId -> username, `_Role` -> name. */
  keyOf(className: string, objectId: string): string;
  /** Field types from `_SCHEMA` (mongoexport), when it was exported. */
  types?: ParseFieldTypes;
  /** Relation members of this class: Parse field -> owning objectId -> related objectIds (from `_Join` files). */
  joins?: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;
  /** Relation targets known only from `_SCHEMA` or an earlier object: Parse field -> class. */
  relationTargets?: ReadonlyMap<string, string>;
}

export interface MappedObject {
  body: Record<string, unknown>;
  /** Definitions the values imply beyond what inference from JSON would give (relationships, binary, geopoints). */
  declared: Map<string, FieldDef>;
  /** Parse fields left out (ACLs, auth data, password hashes, fields that map to nothing). */
  dropped: string[];
  /** A `_User`'s password: its bcrypt hash kept (mongoexport has it), or none (the dashboard's REST objects never do). */
  password: "kept" | "none";
  /** Relation fields whose targets were learnt from this object (REST shape): Parse field -> class. */
  relationTargets: Map<string, string>;
}

/** A bcrypt hash as Parse stores it (bcryptjs writes `$2a$`, other implementations `$2b$`/`$2y$`). */
export const BCRYPT_RE = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/;

/** Members Burrow fills itself or that hold Parse's access and auth state; never imported. */
const DROPPED = new Set([
  "ACL",
  "_acl",
  "_rperm",
  "_wperm",
  "authData",
  "sessionToken",
  "_session_token",
  "_email_verify_token",
  "_perishable_token",
  "_perishable_token_expires_at",
  "_email_verify_token_expires_at",
  "_failed_login_count",
  "_account_lockout_expires_at",
  "_password_changed_at",
  "_password_history",
  "_tombstone",
  "__type",
  "className",
]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** mongoexport's extended JSON scalars ($date, $numberInt/Long/Double/Decimal, $oid) as plain values. */
function unwrapMongo(v: unknown): unknown {
  if (!isRecord(v)) return v;
  const keys = Object.keys(v);
  if (keys.length !== 1) return v;
  const k = keys[0]!;
  const x = v[k];
  switch (k) {
    case "$date":
      return { __date: isRecord(x) ? Number(x.$numberLong) : typeof x === "string" ? Date.parse(x) : Number(x) };
    case "$numberInt":
    case "$numberLong":
    case "$numberDouble":
    case "$numberDecimal":
      return Number(x);
    case "$oid":
      return String(x);
    default:
      return v;
  }
}

/** A date (REST `{"__type": "Date"}`, mongo `{"$date"}`, or an ISO string for createdAt/updatedAt) as ms. */
export function dateMs(v: unknown): number | undefined {
  const u = unwrapMongo(v);
  if (isRecord(u) && typeof u.__date === "number") return Number.isFinite(u.__date) ? u.__date : undefined;
  if (isRecord(u) && u.__type === "Date" && typeof u.iso === "string") {
    const ms = Date.parse(u.iso);
    return Number.isFinite(ms) ? ms : undefined;
  }
  if (typeof u === "string") {
    const ms = Date.parse(u);
    return Number.isFinite(ms) ? ms : undefined;
  }
  return undefined;
}

interface Value {
  value: unknown;
  def?: FieldDef;
}

/** One Parse value as a Burrow value, with the field definition it implies when JSON inference would not. */
export function mapValue(raw: unknown, lookups: ParseLookups, parseType?: string): Value | null {
  const v = unwrapMongo(raw);
  if (v === null || v === undefined) return null;
  if (isRecord(v) && typeof v.__date === "number") return Number.isFinite(v.__date) ? { value: v.__date, def: { type: "integer" } } : null;
  if (parseType === "geo_point" && Array.isArray(v) && v.length === 2)
    return { value: { lat: Number(unwrapMongo(v[1])), lon: Number(unwrapMongo(v[0])) }, def: { type: "geopoint" } };
  if (parseType === "file" && typeof v === "string") return { value: v, def: { type: "binary" } };
  if (Array.isArray(v)) {
    const items = v.map(unwrapMongo);
    if (items.length > 0 && items.every((i) => isRecord(i) && i.__type === "Pointer")) {
      const cls = String((items[0] as Record<string, unknown>).className);
      if (items.every((i) => (i as Record<string, unknown>).className === cls))
        return {
          value: items.map((i) => lookups.keyOf(cls, String((i as Record<string, unknown>).objectId))),
          def: { type: "relationship", schema: schemaNameOf(cls), many: true },
        };
    }
    const kinds = new Set(items.map((i) => (typeof i === "number" ? (Number.isSafeInteger(i) ? "integer" : "float") : typeof i)));
    if (kinds.has("integer") && kinds.has("float")) kinds.delete("integer");
    if (kinds.size === 1 && ["string", "integer", "float", "boolean"].includes([...kinds][0]!)) return { value: items };
    if (items.length === 0) return { value: [] };
    return { value: JSON.stringify(v), def: { type: "string" } };
  }
  if (isRecord(v)) {
    switch (v.__type) {
      case "Date": {
        const ms = dateMs(v);
        return ms === undefined ? null : { value: ms, def: { type: "integer" } };
      }
      case "Pointer":
        return {
          value: lookups.keyOf(String(v.className), String(v.objectId)),
          def: { type: "relationship", schema: schemaNameOf(String(v.className)), many: false },
        };
      case "GeoPoint":
        return { value: { lat: v.latitude, lon: v.longitude }, def: { type: "geopoint" } };
      case "File":
        return { value: typeof v.url === "string" ? v.url : String(v.name), def: { type: "binary" } };
      case "Bytes":
        return { value: String(v.base64), def: { type: "string" } };
      default:
        return { value: JSON.stringify(v), def: { type: "string" } }; // Parse Object fields: their JSON text
    }
  }
  return { value: v };
}

/** A `_p_<field>` value of mongoexport: `"Class$objectId"`. */
function pointerOf(raw: unknown): { className: string; objectId: string } | null {
  if (typeof raw !== "string") return null;
  const i = raw.indexOf("$");
  return i > 0 ? { className: raw.slice(0, i), objectId: raw.slice(i + 1) } : null;
}

/** The Burrow key of an object of a class: the username of a user, the name of a role, otherwise the objectId. */
export function objectIdOf(raw: Record<string, unknown>): string | undefined {
  const id = raw.objectId ?? raw._id;
  return typeof id === "string" ? id : undefined;
}

/**
 * One Parse object of `className` (either shape) as a create body for its Burrow schema: key, createddate,
 * lastmoddate, the fields (names lowercased, see burrowName) and relation members from the `_Join` exports.
 */
export function mapParseObject(className: string, raw: Record<string, unknown>, lookups: ParseLookups, pk: string): MappedObject {
  const out: MappedObject = { body: {}, declared: new Map(), dropped: [], password: "none", relationTargets: new Map() };
  const id = objectIdOf(raw);
  if (id === undefined) throw new Error("the object has no objectId (or _id)");
  out.body[pk] = lookups.keyOf(className, id);
  const created = dateMs(raw.createdAt ?? raw._created_at);
  const updated = dateMs(raw.updatedAt ?? raw._updated_at);
  if (created !== undefined) out.body.createddate = created;
  if (updated !== undefined) out.body.lastmoddate = updated;
  const reserved = new Set([pk, "createddate", "lastmoddate", "sm_owner"]);
  const put = (parseField: string, mapped: Value | null) => {
    if ((className === "_User" && parseField === "username") || (className === "_Role" && parseField === "name")) return; // already the key
    let name = burrowName(parseField);
    if (reserved.has(name)) name = `${name}_2`;
    if (mapped === null) return;
    out.body[name] = mapped.value;
    if (mapped.def) out.declared.set(name, mapped.def);
  };
  for (const [k, v] of Object.entries(raw)) {
    if (k === "objectId" || k === "_id" || k === "createdAt" || k === "updatedAt" || k === "_created_at" || k === "_updated_at") continue;
    if (k === "_hashed_password" || k === "password" || k === "bcryptPassword") {
      // Parse stores bcrypt hashes; Burrow's sign-in checks bcrypt as well as argon2id, so users keep their passwords.
      if (className === "_User" && typeof v === "string" && BCRYPT_RE.test(v)) {
        out.body.password = { $hash: v };
        out.password = "kept";
      } else out.dropped.push(k);
      continue;
    }
    if (DROPPED.has(k) || k.startsWith("_auth_data_")) {
      out.dropped.push(k);
      continue;
    }
    if (k.startsWith("_p_")) {
      const p = pointerOf(v);
      if (p)
        put(k.slice(3), {
          value: lookups.keyOf(p.className, p.objectId),
          def: { type: "relationship", schema: schemaNameOf(p.className), many: false },
        });
      continue;
    }
    if (k.startsWith("_")) {
      out.dropped.push(k);
      continue;
    }
    if (isRecord(v) && v.__type === "Relation") {
      out.relationTargets.set(k, String(v.className));
      continue; // members come from the _Join export below
    }
    put(k, mapValue(v, lookups, lookups.types?.get(k)));
  }
  // Relation fields: from the Relation values seen (REST), or _SCHEMA's relation<Class> (mongo).
  const targets = new Map<string, string>(lookups.relationTargets ?? []);
  for (const [f, t] of lookups.types ?? []) {
    const m = /^relation<(.+)>$/.exec(t);
    if (m) targets.set(f, m[1]!);
  }
  for (const [f, c] of out.relationTargets) targets.set(f, c);
  for (const [field, target] of targets) {
    const name = burrowName(field);
    out.declared.set(name, { type: "relationship", schema: schemaNameOf(target), many: true });
    const members = lookups.joins?.get(field)?.get(id);
    if (members?.length) out.body[name] = [...new Set(members.map((m) => lookups.keyOf(target, m)))];
  }
  return out;
}

/** The rows of a REST/dashboard file: `{"results": [...]}` or an array; null when the text is not that shape. */
export function documentRows(doc: unknown): Record<string, unknown>[] | null {
  const rows = Array.isArray(doc) ? doc : isRecord(doc) && Array.isArray(doc.results) ? doc.results : null;
  return rows as Record<string, unknown>[] | null;
}
