// Schema definitions (docs/api/datastore.md#schemas-and-field-types): types, validation and normalization. Pure: no I/O.
// validateDefinition turns untrusted JSON into a normalized SchemaDef or throws a 400 naming the problem.

import { badRequest } from "../errors.ts";

const FIELD_TYPES = ["string", "integer", "float", "boolean", "array", "geopoint", "binary", "relationship", "password"] as const;
type FieldType = (typeof FIELD_TYPES)[number];
const ITEM_TYPES = ["string", "integer", "float", "boolean"] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export interface FieldDef {
  type: FieldType;
  items?: ItemType;
  schema?: string;
  many?: boolean;
  /** "owner": answered only to the object's owner (a user object's owner is that user), the private key, admins and custom code, and not usable in their queries by anyone else. */
  visibility?: "owner";
}

export type Permission =
  | "none"
  | "private_key"
  | "logged_in"
  | "owner"
  | "open"
  | { role: string }
  | { relationship: string }
  | { ownerRelationship: string };
const OPERATIONS = ["create", "read", "update", "delete"] as const;
export type Operation = (typeof OPERATIONS)[number];

interface UserConfig {
  key: string;
  password: string;
  email?: string;
  forgotPassword?: boolean;
  singleSession?: boolean;
  /** Verification mails and the read-only automatic field `emailverified` (needs `email`). */
  verifyEmail?: boolean;
  /** Password logins of users whose email is not verified are refused (needs `verifyEmail`). */
  requireVerifiedEmail?: boolean;
}

/** The read-only automatic field of a user schema with verifyEmail. */
export const EMAIL_VERIFIED = "emailverified";

export interface SchemaDef {
  name: string;
  fields: Record<string, FieldDef>;
  permissions: Record<Operation, Permission>;
  indexes: string[][];
  user?: UserConfig;
}

const NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;
/** Names that would shadow JavaScript object internals; refused everywhere a name is accepted. */
const RESERVED_NAMES = new Set(["constructor", "prototype"]);
const PERMISSION_WORDS = new Set(["none", "private_key", "logged_in", "owner", "open"]);
const PERMISSION_KEYS = new Set(["role", "relationship", "ownerRelationship"]);
export const AUTO_FIELDS = ["createddate", "lastmoddate", "sm_owner"] as const;
const MAX_FIELDS = 500;
const MAX_INDEXES = 64;
const MAX_INDEX_COLUMNS = 8;

export function isValidName(s: unknown): s is string {
  return typeof s === "string" && NAME_RE.test(s) && !RESERVED_NAMES.has(s);
}

/** The primary key field of a schema: `<name>_id`, or the user schema's key. */
export function primaryKeyOf(def: Pick<SchemaDef, "name" | "user">): string {
  return def.user ? def.user.key : `${def.name}_id`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string) {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) throw badRequest(`${where}: unknown property "${k}"`);
}

function validateField(schema: string, name: string, raw: unknown): FieldDef {
  const where = `field "${name}" of schema "${schema}"`;
  if (!isValidName(name))
    throw badRequest(
      `schema "${schema}": "${name}" is not a valid field name (lowercase letters, digits and _, starting with a letter, at most 64)`,
    );
  if (!isPlainObject(raw)) throw badRequest(`${where}: definition must be an object like {"type": "string"}`);
  checkKeys(raw, ["type", "items", "schema", "many", "visibility"], where);
  const type = raw.type;
  if (typeof type !== "string" || !(FIELD_TYPES as readonly string[]).includes(type))
    throw badRequest(`${where}: type must be one of ${FIELD_TYPES.join(", ")}`);
  const field: FieldDef = { type: type as FieldType };
  if (type === "array") {
    if (typeof raw.items !== "string" || !(ITEM_TYPES as readonly string[]).includes(raw.items))
      throw badRequest(`${where}: an array needs "items" of ${ITEM_TYPES.join(", ")}`);
    field.items = raw.items as ItemType;
  } else if (raw.items !== undefined) throw badRequest(`${where}: "items" is only for arrays`);
  if (type === "relationship") {
    if (!isValidName(raw.schema)) throw badRequest(`${where}: a relationship needs "schema", the name of the related schema`);
    if (raw.many !== undefined && typeof raw.many !== "boolean") throw badRequest(`${where}: "many" must be true or false`);
    field.schema = raw.schema;
    field.many = raw.many === true;
  } else if (raw.schema !== undefined || raw.many !== undefined)
    throw badRequest(`${where}: "schema" and "many" are only for relationships`);
  if (raw.visibility !== undefined && raw.visibility !== "public") {
    if (raw.visibility !== "owner") throw badRequest(`${where}: "visibility" must be "owner" or "public"`);
    if (type === "password") throw badRequest(`${where}: a password is never answered; "visibility" does not apply`);
    field.visibility = "owner";
  }
  return field;
}

function validatePermission(schema: string, op: string, raw: unknown): Permission {
  const where = `schema "${schema}": permission "${op}"`;
  if (typeof raw === "string") {
    if (PERMISSION_WORDS.has(raw)) return raw as Permission;
  } else if (isPlainObject(raw)) {
    const keys = Object.keys(raw);
    if (keys.length === 1 && PERMISSION_KEYS.has(keys[0]!) && isValidName(raw[keys[0]!]))
      return { [keys[0]!]: raw[keys[0]!] } as Permission;
  }
  throw badRequest(
    `${where} must be one of none, private_key, logged_in, owner, open, {"role": "<name>"}, {"relationship": "<field>"}, {"ownerRelationship": "<field>"}`,
  );
}

/** Validate one definition on its own (references to other schemas are checked by checkReferences). */
export function validateDefinition(input: unknown, expectedName?: string): SchemaDef {
  if (!isPlainObject(input)) throw badRequest("a schema definition must be a JSON object");
  checkKeys(input, ["name", "fields", "permissions", "indexes", "user"], "schema definition");
  const name = input.name ?? expectedName;
  if (!isValidName(name))
    throw badRequest(`"${String(name)}" is not a valid schema name (lowercase letters, digits and _, starting with a letter, at most 64)`);
  if (expectedName !== undefined && name !== expectedName)
    throw badRequest(`schema name "${name}" does not match the address (${expectedName})`);

  let user: UserConfig | undefined;
  if (input.user !== undefined) {
    const u = input.user;
    if (!isPlainObject(u)) throw badRequest(`schema "${name}": "user" must be an object like {"key": "username", "password": "password"}`);
    checkKeys(
      u,
      ["key", "password", "email", "forgotPassword", "singleSession", "verifyEmail", "requireVerifiedEmail"],
      `schema "${name}": user`,
    );
    const key = u.key ?? "username";
    const password = u.password ?? "password";
    if (!isValidName(key)) throw badRequest(`schema "${name}": user.key "${String(key)}" is not a valid field name`);
    if (!isValidName(password)) throw badRequest(`schema "${name}": user.password "${String(password)}" is not a valid field name`);
    if (u.email !== undefined && !isValidName(u.email))
      throw badRequest(`schema "${name}": user.email "${String(u.email)}" is not a valid field name`);
    for (const k of ["forgotPassword", "singleSession", "verifyEmail", "requireVerifiedEmail"] as const)
      if (u[k] !== undefined && typeof u[k] !== "boolean") throw badRequest(`schema "${name}": user.${k} must be true or false`);
    user = { key, password };
    if (u.email !== undefined) user.email = u.email as string;
    if (u.forgotPassword !== undefined) user.forgotPassword = u.forgotPassword as boolean;
    if (u.singleSession !== undefined) user.singleSession = u.singleSession as boolean;
    if (u.verifyEmail !== undefined) user.verifyEmail = u.verifyEmail as boolean;
    if (u.requireVerifiedEmail !== undefined) user.requireVerifiedEmail = u.requireVerifiedEmail as boolean;
    if (user.verifyEmail && user.email === undefined) throw badRequest(`schema "${name}": user.verifyEmail needs user.email`);
    if (user.requireVerifiedEmail && !user.verifyEmail)
      throw badRequest(`schema "${name}": user.requireVerifiedEmail needs user.verifyEmail`);
  }
  const pk = user ? user.key : `${name}_id`;

  const rawFields = input.fields ?? {};
  if (!isPlainObject(rawFields)) throw badRequest(`schema "${name}": "fields" must be an object of field definitions`);
  const fieldNames = Object.keys(rawFields);
  if (fieldNames.length > MAX_FIELDS) throw badRequest(`schema "${name}": at most ${MAX_FIELDS} fields`);
  const fields: Record<string, FieldDef> = {};
  let geopoints = 0;
  for (const fname of fieldNames) {
    const field = validateField(name, fname, rawFields[fname]);
    if (fname === pk) {
      if (field.type !== "string") throw badRequest(`schema "${name}": the primary key "${pk}" is always a string`);
      if (field.visibility) throw badRequest(`schema "${name}": the primary key "${pk}" is always visible`);
      continue; // the primary key is automatic; listing it as a string is tolerated
    }
    if ((AUTO_FIELDS as readonly string[]).includes(fname))
      throw badRequest(`schema "${name}": "${fname}" is an automatic field and cannot be defined`);
    if (field.type === "geopoint" && ++geopoints > 1) throw badRequest(`schema "${name}": at most one geopoint field per schema`);
    if (field.type === "password" && !user) throw badRequest(`schema "${name}": password fields are only for user schemas (add "user")`);
    fields[fname] = field;
  }
  if (user) {
    if (fields[user.password]?.type !== "password")
      throw badRequest(`schema "${name}": user.password must name a field of type password ("${user.password}")`);
    for (const [fname, f] of Object.entries(fields))
      if (f.type === "password" && fname !== user.password)
        throw badRequest(`schema "${name}": only one password field, "${user.password}"`);
    if (user.email !== undefined && fields[user.email]?.type !== "string")
      throw badRequest(`schema "${name}": user.email must name a string field ("${user.email}")`);
    if (user.forgotPassword && user.email === undefined) throw badRequest(`schema "${name}": user.forgotPassword needs user.email`);
  }

  const rawPerms = input.permissions ?? {};
  if (!isPlainObject(rawPerms)) throw badRequest(`schema "${name}": "permissions" must be an object with create, read, update, delete`);
  checkKeys(rawPerms, OPERATIONS, `schema "${name}": permissions`);
  const permissions = {} as Record<Operation, Permission>;
  for (const op of OPERATIONS) {
    const p: Permission = rawPerms[op] === undefined ? "open" : validatePermission(name, op, rawPerms[op]);
    if (typeof p === "object" && !("role" in p)) {
      const fname = "relationship" in p ? p.relationship : p.ownerRelationship;
      if ("relationship" in p && fields[fname]?.type !== "relationship")
        throw badRequest(`schema "${name}": permission "${op}" names "${fname}", which is not a relationship field of this schema`);
    }
    permissions[op] = p;
  }

  const rawIndexes = input.indexes ?? [];
  if (!Array.isArray(rawIndexes)) throw badRequest(`schema "${name}": "indexes" must be an array of field-name arrays`);
  if (rawIndexes.length > MAX_INDEXES) throw badRequest(`schema "${name}": at most ${MAX_INDEXES} indexes`);
  const indexes: string[][] = [];
  const seen = new Set<string>();
  for (const ix of rawIndexes) {
    if (!Array.isArray(ix) || ix.length === 0 || ix.length > MAX_INDEX_COLUMNS)
      throw badRequest(`schema "${name}": each index is an array of 1 to ${MAX_INDEX_COLUMNS} field names`);
    for (const f of ix) {
      if (typeof f !== "string") throw badRequest(`schema "${name}": index entries must be field names`);
      if (f === pk || (AUTO_FIELDS as readonly string[]).includes(f)) continue;
      const fd = fields[f];
      if (!fd) throw badRequest(`schema "${name}": index field "${f}" is not a field of this schema`);
      if (!isIndexable(fd)) throw badRequest(`schema "${name}": field "${f}" (${fd.type}) cannot be indexed`);
    }
    if (new Set(ix).size !== ix.length) throw badRequest(`schema "${name}": index [${ix.join(", ")}] repeats a field`);
    const sig = ix.join(",");
    if (seen.has(sig)) throw badRequest(`schema "${name}": index [${ix.join(", ")}] is listed twice`);
    seen.add(sig);
    indexes.push([...ix]);
  }

  // The automatic field of verified emails: a boolean the server alone sets (clients' values are ignored).
  if (user?.verifyEmail) {
    const f = fields[EMAIL_VERIFIED];
    if (f && f.type !== "boolean")
      throw badRequest(`schema "${name}": "${EMAIL_VERIFIED}" is the automatic field of user.verifyEmail (a boolean)`);
    // Seen by whoever may see the address itself.
    const visibility = fields[user.email!]?.visibility;
    fields[EMAIL_VERIFIED] = visibility ? { type: "boolean", visibility } : { type: "boolean" };
  }
  const def: SchemaDef = { name, fields, permissions, indexes };
  if (user) def.user = user;
  return def;
}

function isIndexable(f: FieldDef): boolean {
  return ["string", "integer", "float", "boolean", "binary"].includes(f.type) || (f.type === "relationship" && !f.many);
}

/** Cross-schema checks: relationship targets exist; user-relationship permissions point at user schemas. */
export function checkReferences(def: SchemaDef, all: ReadonlyMap<string, SchemaDef>): void {
  const lookup = (n: string) => (n === def.name ? def : all.get(n));
  for (const [fname, f] of Object.entries(def.fields)) {
    if (f.type === "relationship" && !lookup(f.schema!))
      throw badRequest(`schema "${def.name}": field "${fname}" relates to schema "${f.schema}", which does not exist`);
  }
  for (const op of OPERATIONS) {
    const p = def.permissions[op];
    if (typeof p !== "object") continue;
    if ("relationship" in p) {
      const target = lookup(def.fields[p.relationship]!.schema!);
      if (!target?.user) throw badRequest(`schema "${def.name}": permission "${op}" needs "${p.relationship}" to relate to a user schema`);
    }
  }
}

/** Stable JSON form used to compare definitions. */
export function sameDefinition(a: SchemaDef, b: SchemaDef): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
