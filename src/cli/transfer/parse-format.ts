// Parse Server exports to Burrow objects. Two shapes per class file: the REST/dashboard shape (`objectId`,
// `createdAt`/`updatedAt` ISO strings, `{"__type": "Pointer"|"Date"|"GeoPoint"|"File"|"Relation"|"Bytes"}`) as
// `{"results": [...]}` or a JSON array, and mongoexport's (`_id`, `_created_at`/`_updated_at` as `{"$date"}`,
// pointers as `_p_<field>: "Class$objectId"`, `_acl`/`_rperm`/`_wperm`, `_hashed_password`, GeoPoints as
// [lon, lat] known from `_SCHEMA`; `_User`'s bcrypt hash kept as the password). Relations come from
// `_Join:<field>:<OwningClass>` exports or a live pull. Field names are planned per class (planFieldNames: two Parse
// fields that lowercase alike get distinct names); a pointer to an object the import does not hold is left out and
// counted. Pure: the importer reads the files (or the server) and passes what they hold.

import type { FieldDef } from "../../schema/definition.ts";
import { DROPPED, burrowName, isKeyField, reservedNames, schemaNameOf } from "./parse-names.ts";

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
  /**
   * Whether the import holds that object: false leaves the reference out (a dangling pointer or relation member),
   * undefined means the class is not part of the import (its pointers are kept as keys, except to users and roles,
   * whose keys cannot be known). Without it every reference is kept (keyOf).
   */
  exists?(className: string, objectId: string): boolean | undefined;
  /** The Burrow field name of a Parse field (planFieldNames); default burrowName with the reserved names moved. */
  fieldName?(parseField: string): string;
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
  /** References left out, per Parse field: the target class and how many (see ParseLookups.exists). */
  dangling: Map<string, Dangling>;
}

/** References of one field left out: to objects the import lacks, or to users/roles of a class it does not hold. */
export interface Dangling {
  target: string;
  count: number;
  /** True when the target class is not part of the import at all. */
  classMissing: boolean;
}

/** The Burrow key a reference becomes, or null when it is left out (recorded in `dangling` under `field`). */
function refKey(lookups: ParseLookups, cls: string, id: string, field: string, dangling: Map<string, Dangling>): string | null {
  const known = lookups.exists ? lookups.exists(cls, id) : true;
  if (known === true || (known === undefined && cls !== "_User" && cls !== "_Role")) return lookups.keyOf(cls, id);
  const d = dangling.get(field) ?? { target: cls, count: 0, classMissing: known === undefined };
  d.count++;
  dangling.set(field, d);
  return null;
}

/** A bcrypt hash as Parse stores it (bcryptjs writes `$2a$`, other implementations `$2b$`/`$2y$`). */
export const BCRYPT_RE = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/;

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

/**
 * One Parse value as a Burrow value, with the field definition it implies when JSON inference would not. References
 * to objects the import lacks are left out and counted in `dangling` under `field`.
 */
export function mapValue(
  raw: unknown,
  lookups: ParseLookups,
  parseType?: string,
  field = "",
  dangling: Map<string, Dangling> = new Map(),
): Value | null {
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
      if (items.every((i) => (i as Record<string, unknown>).className === cls)) {
        const keys = items.map((i) => refKey(lookups, cls, String((i as Record<string, unknown>).objectId), field, dangling));
        return {
          value: keys.filter((k): k is string => k !== null),
          def: { type: "relationship", schema: schemaNameOf(cls), many: true },
        };
      }
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
      case "Pointer": {
        const key = refKey(lookups, String(v.className), String(v.objectId), field, dangling);
        return key === null ? null : { value: key, def: { type: "relationship", schema: schemaNameOf(String(v.className)), many: false } };
      }
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
  const out: MappedObject = {
    body: {},
    declared: new Map(),
    dropped: [],
    password: "none",
    relationTargets: new Map(),
    dangling: new Map(),
  };
  const id = objectIdOf(raw);
  if (id === undefined) throw new Error("the object has no objectId (or _id)");
  out.body[pk] = lookups.keyOf(className, id);
  const created = dateMs(raw.createdAt ?? raw._created_at);
  const updated = dateMs(raw.updatedAt ?? raw._updated_at);
  if (created !== undefined) out.body.createddate = created;
  if (updated !== undefined) out.body.lastmoddate = updated;
  const reserved = reservedNames(pk);
  const nameOf = (parseField: string) => {
    if (lookups.fieldName) return lookups.fieldName(parseField);
    const name = burrowName(parseField);
    return reserved.has(name) ? `${name}_2` : name;
  };
  const put = (parseField: string, mapped: Value | null) => {
    if (isKeyField(className, parseField)) return; // already the key
    if (mapped === null) return;
    const name = nameOf(parseField);
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
      if (k !== "className" && k !== "__type") out.dropped.push(k); // the object's envelope (today's dashboard), not data
      continue;
    }
    if (k.startsWith("_p_")) {
      const p = pointerOf(v);
      const key = p && refKey(lookups, p.className, p.objectId, k.slice(3), out.dangling);
      if (p && key !== null) put(k.slice(3), { value: key, def: { type: "relationship", schema: schemaNameOf(p.className), many: false } });
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
    put(k, mapValue(v, lookups, lookups.types?.get(k), k, out.dangling));
  }
  // Relation fields: from the Relation values seen (REST), or _SCHEMA's relation<Class> (mongo).
  const targets = new Map<string, string>(lookups.relationTargets ?? []);
  for (const [f, t] of lookups.types ?? []) {
    const m = /^relation<(.+)>$/.exec(t);
    if (m) targets.set(f, m[1]!);
  }
  for (const [f, c] of out.relationTargets) targets.set(f, c);
  for (const [field, target] of targets) {
    const name = nameOf(field);
    out.declared.set(name, { type: "relationship", schema: schemaNameOf(target), many: true });
    const members = lookups.joins?.get(field)?.get(id);
    const keys = (members ?? []).map((m) => refKey(lookups, target, m, field, out.dangling)).filter((k): k is string => k !== null);
    if (keys.length) out.body[name] = [...new Set(keys)];
  }
  return out;
}

/** The rows of a REST/dashboard file: `{"results": [...]}` or an array; null when the text is not that shape. */
export function documentRows(doc: unknown): Record<string, unknown>[] | null {
  const rows = Array.isArray(doc) ? doc : isRecord(doc) && Array.isArray(doc.results) ? doc.results : null;
  return rows as Record<string, unknown>[] | null;
}
