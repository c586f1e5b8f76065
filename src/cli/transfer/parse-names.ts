// Parse names as Burrow names: classes to schemas (`_User` is `user`, `_Role` is `aclrole`), fields lowercased, and
// each class's field names planned once (planFieldNames) so fields that lowercase alike get distinct names in every
// object; which members of a Parse object are fields at all. Pure.

import { isValidName } from "../../schema/definition.ts";

/** Parse's own classes that have no Burrow counterpart (sessions, config, job and push state; installations become push tokens). */
const SKIPPED_CLASSES = new Set([
  "_Session",
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

/** Members Burrow fills itself or that hold Parse's access and auth state; never imported. */
export const DROPPED = new Set([
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

/** Names Burrow fills itself in a class's schema; a Parse field mapping onto one is moved aside. */
export function reservedNames(pk: string): Set<string> {
  return new Set([pk, "createddate", "lastmoddate", "sm_owner"]);
}

/** `_User.username` and `_Role.name` are the object's key, not a field. */
export function isKeyField(className: string, parseField: string): boolean {
  return (className === "_User" && parseField === "username") || (className === "_Role" && parseField === "name");
}

/**
 * The Parse field a member of an object (either shape) is, or null when it maps to no field: the key, dates and
 * members left out (ACLs, auth data, password hashes, Parse internals). `_p_<field>` is `<field>`.
 */
export function parseFieldOf(className: string, member: string): string | null {
  if (["objectId", "_id", "createdAt", "updatedAt", "_created_at", "_updated_at", "password", "bcryptPassword"].includes(member))
    return null;
  if (DROPPED.has(member) || member.startsWith("_auth_data_") || isKeyField(className, member)) return null;
  if (member.startsWith("_p_")) return member.slice(3);
  return member.startsWith("_") ? null : member;
}

/** A class's field names: Parse field -> Burrow field, and what the summary says about them. */
export interface FieldPlan {
  names: Map<string, string>;
  /** `GameScore.playerName -> gamescore.playername` for every field whose name changes. */
  renames: string[];
  /** One line per group of fields that lowercase alike, naming each and what it became. */
  collisions: string[];
}

/**
 * Burrow names for the Parse fields of a class, decided once from all its field names so every object (and a resumed
 * import) agrees: a field keeps burrowName(field) unless another field lowercases alike or the name is reserved;
 * then, in order (the field already spelt in lowercase first, then by name), the first free name of `name`,
 * `name_2`, `name_3`, ... Pure.
 */
export function planFieldNames(className: string, schema: string, parseFields: Iterable<string>, pk: string): FieldPlan {
  const reserved = reservedNames(pk);
  const groups = new Map<string, string[]>();
  for (const f of new Set(parseFields)) {
    if (isKeyField(className, f)) continue;
    const base = burrowName(f);
    const g = groups.get(base);
    if (g) g.push(f);
    else groups.set(base, [f]);
  }
  const names = new Map<string, string>();
  const taken = new Set<string>(reserved);
  for (const [base, g] of groups)
    if (g.length === 1 && !reserved.has(base)) {
      names.set(g[0]!, base);
      taken.add(base);
    }
  const collisions: string[] = [];
  for (const [base, g] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (g.length === 1 && !reserved.has(base)) continue;
    g.sort((a, b) => (a === base ? -1 : b === base ? 1 : a < b ? -1 : a > b ? 1 : 0));
    for (const f of g) {
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 60)}_${i}`;
      names.set(f, name);
      taken.add(name);
    }
    if (g.length > 1)
      collisions.push(
        `fields ${g.map((f) => `${className}.${f}`).join(", ")} lowercase alike: imported as ${g.map((f) => `${schema}.${names.get(f)}`).join(", ")}`,
      );
  }
  const renames = [...names]
    .filter(([f, n]) => f !== n)
    .map(([f, n]) => `${className}.${f} -> ${schema}.${n}`)
    .sort();
  return { names, renames, collisions };
}

/** Schema names for the classes of one import, in the order asked: a class whose name another took gets `_2`, `_3`... */
export function schemaNamer(): (className: string) => string {
  const taken = new Map<string, string>();
  return (cls) => {
    const base = schemaNameOf(cls);
    let schema = base;
    for (let i = 2; taken.has(schema) && taken.get(schema) !== cls && i < 1000; i++) schema = `${base}_${i}`;
    taken.set(schema, cls);
    return schema;
  };
}
