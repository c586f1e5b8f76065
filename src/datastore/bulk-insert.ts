// Bulk insert for imports: many objects of one schema in one transaction, keeping the key, createddate,
// lastmoddate and sm_owner each brings. Every row is checked as a create checks it (field names, types, keys,
// relationships, geopoints); a bad row is rejected with its reason and the others go in. Development infers
// missing fields (from the values, or from definitions the caller declares). Passwords given in plain text are
// hashed, `{"$hash": ...}` (argon2id, bcrypt) kept as stored; users may come without one (they set one through
// forgotPassword or an admin). Binary fields keep the
// URL they hold: files are not copied. The R*Tree of a geopoint field is filled once after the rows are in
// (restoreGeoIndex), not object by object. An internal of the Datastore (datastore.ts).

import { QUIET_HOOKS_ONLY, QUIET_LOG_ONLY, quietSql } from "../schema/change-log.ts";
import type { InStatement, InValue } from "@libsql/core/api";
import { hashPassword } from "../auth/passwords.ts";
import { q } from "../db/sql.ts";
import { ApiError, notFound } from "../errors.ts";
import type { Catalog } from "../schema/catalog.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { AUTO_FIELDS, type FieldDef, isValidName } from "../schema/definition.ts";
import { inferField, mergeInferred } from "../schema/infer.ts";
import { ValueTypeError } from "../schema/value-errors.ts";
import { encodeValue, isKeyValue, looksLikeUpload } from "../schema/values.ts";
import type { ApiContext } from "../request-context.ts";
import { geoTableName, pauseGeoInsertSql, resumeGeoInsertSql } from "../schema/layout.ts";
import { newObjectId } from "./objects.ts";
import { typeError } from "./encode.ts";

export interface BulkRow {
  /** Where the row came from (a line number), echoed in rejections. */
  line: number;
  body: Record<string, unknown>;
}

export interface BulkResult {
  inserted: number;
  rejected: { line: number; reason: string }[];
}

const AUTO = new Set<string>(AUTO_FIELDS);
const OWNER_RE = /^[a-z][a-z0-9_]{0,63}\/./;
const inserts = new WeakMap<CompiledSchema, string>();

function insertSql(s: CompiledSchema): string {
  let sql = inserts.get(s);
  if (!sql) {
    sql = `INSERT INTO ${s.table} (${s.columns.map(q).join(", ")}) VALUES (${s.columns.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`;
    inserts.set(s, sql);
  }
  return sql;
}

const reasonOf = (e: unknown) =>
  e instanceof ApiError || e instanceof ValueTypeError ? e.message : e instanceof Error ? e.message : String(e);

/** A date member: UTC milliseconds, a non-negative safe integer. */
function dateOf(body: Record<string, unknown>, name: string, fallback: number): number {
  const v = body[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    throw new ApiError(400, `${name} must be UTC milliseconds (a non-negative integer), not ${JSON.stringify(v)?.slice(0, 40)}`);
  return v;
}

/**
 * Development: add the fields the rows use that the schema lacks (rows whose new fields cannot be inferred, or
 * disagree with earlier rows, are rejected). Production: unknown fields reject their rows.
 */
async function prepareSchema(
  catalog: Catalog,
  ctx: ApiContext,
  name: string,
  rows: BulkRow[],
  declared: ReadonlyMap<string, FieldDef>,
  rejected: Map<BulkRow, string>,
): Promise<CompiledSchema> {
  const s = ctx.schemas.schemas.get(name);
  if (!s && !ctx.infer) throw notFound(`schema "${name}" does not exist`);
  const pk = s?.pk ?? `${name}_id`;
  const additions: Record<string, FieldDef> = {};
  for (const row of rows) {
    const mine: Record<string, FieldDef> = {};
    try {
      for (const key of Object.keys(row.body)) {
        if (key === pk || AUTO.has(key) || s?.fields.has(key)) continue;
        if (!isValidName(key)) throw new ApiError(400, `"${key}" is not a valid field name`);
        if (!ctx.infer) throw new ApiError(400, `${key} does not exist in schema ${name}`);
        const v = row.body[key];
        if (v === null || v === undefined) continue;
        const inferred = declared.get(key) ?? inferField(key, v);
        const before = mine[key] ?? additions[key];
        mine[key] = before ? mergeInferred(key, before, inferred) : inferred;
      }
      Object.assign(additions, mine);
    } catch (e) {
      rejected.set(row, reasonOf(e));
    }
  }
  if (s && Object.keys(additions).length === 0) return s;
  return catalog.infer(name, additions);
}

/** `{"$hash": "<hash>"}`: a password hash as stored (an export's argon2id, Parse's bcrypt), kept as it is. */
const HASH_RE = /^(\$argon2(id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+|\$2[aby]\$\d\d\$[./A-Za-z0-9]{53})$/;

function isStoredHash(v: unknown): v is { $hash: string } {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return Object.keys(o).length === 1 && typeof o.$hash === "string" && HASH_RE.test(o.$hash);
}

/** Column values of one row in the schema's insert order; passwords to hash are collected in `hashes`. */
function encodeRow(
  s: CompiledSchema,
  body: Record<string, unknown>,
  now: number,
  hashes: { args: InValue[]; at: number; password: string }[],
): InValue[] {
  const key = body[s.pk];
  if (key !== undefined && !isKeyValue(key))
    throw new ApiError(400, `${s.pk} must be a non-empty string of at most 256 characters without control characters`);
  const created = dateOf(body, "createddate", now);
  const modified = dateOf(body, "lastmoddate", created);
  const owner = body.sm_owner;
  if (owner !== undefined && owner !== null && (typeof owner !== "string" || !OWNER_RE.test(owner) || owner.length > 330))
    throw new ApiError(400, `sm_owner must be "<userSchema>/<key>"`);
  for (const k of Object.keys(body))
    if (k !== s.pk && !AUTO.has(k) && !s.fields.has(k)) throw new ApiError(400, `${k} does not exist in schema ${s.name}`);
  const args: InValue[] = [key ?? newObjectId()];
  for (const fc of s.fieldColumns) {
    const v = body[fc.name];
    if (v === undefined || v === null || v === "NULL") {
      for (let i = 0; i < fc.cols.length; i++) args.push(null);
      continue;
    }
    switch (fc.def.type) {
      case "password":
        if (isStoredHash(v)) {
          args.push(v.$hash);
          continue;
        }
        if (typeof v !== "string" || v.length === 0 || v.length > 1024)
          throw new ApiError(
            400,
            `${fc.name} must be a non-empty string of at most 1024 characters, or {"$hash": "<argon2id or bcrypt hash>"}`,
          );
        hashes.push({ args, at: args.length, password: v });
        args.push(null);
        continue;
      case "binary":
        if (typeof v !== "string" || looksLikeUpload(v))
          throw new ApiError(400, `${fc.name}: a binary field is imported as the file's URL (uploads are not imported)`);
        args.push(v);
        continue;
      case "relationship":
        if (typeof v === "object" && !Array.isArray(v))
          throw new ApiError(
            400,
            `${fc.name} holds a nested object; import the related objects into their own schema and reference their keys`,
          );
    }
    try {
      args.push(...encodeValue(fc.def, v));
    } catch (e) {
      throw e instanceof ValueTypeError ? typeError(fc.name, "create", e) : e;
    }
  }
  args.push(created, modified, typeof owner === "string" ? owner : null);
  return args;
}

/**
 * Insert the valid rows of `rows` into schema `name` with `extra` (e.g. the import's checkpoint) in one
 * transaction. A row whose key exists (or repeats an earlier row's) is rejected, never overwritten. Unless `live`,
 * the rows are not written to the change log (live streams see no events for them); unless `hooks`, they queue
 * no after-hooks.
 */
export async function bulkInsert(
  catalog: Catalog,
  ctx: ApiContext,
  name: string,
  rows: BulkRow[],
  declared: ReadonlyMap<string, FieldDef>,
  extra: readonly InStatement[],
  live = false,
  hooks = false,
  refused: ReadonlyMap<BulkRow, string> = new Map(),
): Promise<BulkResult> {
  const rejectedBy = new Map<BulkRow, string>(refused);
  const s = await prepareSchema(catalog, ctx, name, rows, declared, rejectedBy);
  const sql = insertSql(s);
  const now = Date.now();
  const stmts: { sql: string; args: InValue[] }[] = [];
  const placed: BulkRow[] = [];
  const hashes: { args: InValue[]; at: number; password: string }[] = [];
  for (const row of rows) {
    if (rejectedBy.has(row)) continue;
    try {
      stmts.push({ sql, args: encodeRow(s, row.body, now, hashes) });
      placed.push(row);
    } catch (e) {
      rejectedBy.set(row, reasonOf(e));
    }
  }
  // Geopoints: the R*Tree's insert trigger is dropped in the batch's transaction; restoreGeoIndex fills it.
  const geo = s.fieldColumns.filter((fc) => fc.def.type === "geopoint").map((fc) => pauseGeoInsertSql(s.name, fc.name));
  if (hashes.length) await Promise.all(hashes.map(async (h) => void (h.args[h.at] = await hashPassword(h.password))));
  const reason = live && hooks ? null : live ? QUIET_HOOKS_ONLY : hooks ? QUIET_LOG_ONLY : "import";
  const quiet = reason === null ? null : quietSql(reason);
  const head = quiet ? [quiet.begin, ...geo] : geo;
  const results = (await ctx.db.batch([...head, ...stmts, ...extra, ...(quiet ? [quiet.end] : [])], "write")).slice(head.length);
  let inserted = 0;
  for (let i = 0; i < placed.length; i++) {
    if (results[i]!.rowsAffected > 0) inserted++;
    else rejectedBy.set(placed[i]!, `duplicate key ${JSON.stringify(stmts[i]!.args[0])}: an object with this key exists in ${s.name}`);
  }
  const rejected = rows.filter((r) => rejectedBy.has(r)).map((r) => ({ line: r.line, reason: rejectedBy.get(r)! }));
  return { inserted, rejected };
}

/**
 * After a bulk insert (or at the start of the next, when one was interrupted): add the points the R*Tree of each
 * geopoint field lacks, ordered by position, and put its insert trigger back. Does nothing when the trigger is there.
 */
export async function restoreGeoIndex(ctx: ApiContext, name: string): Promise<void> {
  const s = ctx.schemas.schemas.get(name);
  if (!s) return;
  for (const fc of s.fieldColumns) {
    if (fc.def.type !== "geopoint") continue;
    const rs = await ctx.db.execute({
      sql: `SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?`,
      args: [`${geoTableName(s.name, fc.name)}$insert`],
    });
    if (rs.rows.length === 0) await ctx.db.batch(resumeGeoInsertSql(s.name, fc.name), "write");
  }
}
