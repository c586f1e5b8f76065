// Datastore CRUD on one schema: create (single and batch; `<field>[inc]: n` sets n), read by key, partial
// update with atomic [inc] counters (optionally only when the object also matches conditions), delete. Values are type-checked against the schema; binary uploads are
// saved to the file store and recorded in the same transaction as the object; development inference adds
// schemas and fields first.
// An internal of the Datastore (datastore.ts), which is what routes and custom code call.

import type { InStatement, InValue, ResultSet } from "@libsql/core/api";
import { type SqlPart, compileSelection } from "./query/compile.ts";
import { q } from "../db/sql.ts";
import { ApiError, badRequest, conflict, notFound } from "../errors.ts";
import { type Files, type SavedFile, namesStoredFile } from "../files/files.ts";
import type { Catalog } from "../schema/catalog.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { type FieldDef, isValidName } from "../schema/definition.ts";
import { inferField, mergeInferred } from "../schema/infer.ts";
import { UPLOAD, ValueTypeError, describeValue } from "../schema/value-errors.ts";
import { isKeyValue } from "../schema/values.ts";
import { type ApiContext, ownerOf } from "../request-context.ts";
import { access, andScope } from "./access.ts";
import { fullViewer, objectSql, refuseOwnerOnly } from "./viewer.ts";
import { findOne } from "./find.ts";
import type { ReadShape } from "./query/parse.ts";
import type { Conditions } from "./query/tree.ts";
import {
  type Encoded,
  IGNORED_ON_WRITE,
  INC_RE,
  type Mode,
  encodeBody,
  isObject,
  limitPasswords,
  passwordChangedSql,
  setClause,
  touchesFiles,
  typeError,
} from "./encode.ts";

export const MAX_BATCH = 1000;
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** JSON text produced by SQLite (schema/json-sql.ts): sent to clients as it is. */
export type JsonText = string;
export function newObjectId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/** 400 for counters whose result would pass ±(2^53−1). */
export function incOverflow(fields: Iterable<string>): ApiError {
  return badRequest(`${[...fields].map((f) => `${f}[inc]`).join(", ")}: the result would exceed ${MAX_SAFE}`);
}

function foundObject(rs: ResultSet): JsonText {
  if (rs.rows.length === 0) throw notFound();
  return rs.rows[0]!.j as JsonText;
}

/** One object's write: its statement first, then the rows of the files it saved. */
export interface PreparedWrite {
  id: string;
  stmts: InStatement[];
  saved: SavedFile[];
}

export class Objects {
  constructor(
    private readonly catalog: Catalog,
    readonly files: Files,
    /** Told the users whose sessions a write ended (a password set by the private key or custom code), after the commit. */
    private readonly signedOut: (ctx: ApiContext, schema: string, keys: readonly string[]) => Promise<void>,
  ) {}

  /** The schema a read addresses; 404 when it does not exist in this version. */
  schemaForRead(ctx: ApiContext, name: string): CompiledSchema {
    const s = ctx.schemas.schemas.get(name);
    if (!s) throw notFound(`schema "${name}" does not exist`);
    return s;
  }

  /**
   * The schema a write addresses, after development inference of the schema and of fields the bodies use.
   * Production (and --no-infer) never infers: unknown schema 404, unknown field 400.
   */
  async schemaForWrite(
    ctx: ApiContext,
    name: string,
    bodies: readonly Record<string, unknown>[],
    relations: ReadonlyMap<string, string>,
    mayCreate: boolean,
  ): Promise<CompiledSchema> {
    const s = ctx.schemas.schemas.get(name);
    if (!s && !(ctx.infer && mayCreate)) throw notFound(`schema "${name}" does not exist`);
    if (!s && !isValidName(name)) throw badRequest(`"${name}" is not a valid schema name`);
    const pk = s?.pk ?? `${name}_id`;
    const additions: Record<string, FieldDef> = {};
    for (const body of bodies) {
      for (const key of Object.keys(body)) {
        const inc = INC_RE.exec(key);
        const field = inc ? inc[1]! : key;
        if (field === pk || IGNORED_ON_WRITE.has(field) || s?.fields.has(field)) continue;
        if (!ctx.infer)
          throw badRequest(isValidName(field) ? `${field} does not exist in schema ${name}` : `"${key}" is not a valid field name`);
        if (!isValidName(field))
          throw badRequest(`"${key}" is not a valid field name (lowercase letters, digits and _, starting with a letter, at most 64)`);
        const inferred: FieldDef = inc ? { type: "integer" } : inferField(field, body[key], relations.get(field));
        additions[field] = Object.hasOwn(additions, field) ? mergeInferred(field, additions[field]!, inferred) : inferred;
      }
    }
    if (s && Object.keys(additions).length === 0) return s;
    return this.catalog.infer(name, additions);
  }

  /** Column values for the fields a body sets (null and "NULL" clear a field); uploads are saved here. */
  encode(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, mode: Mode, id?: string): Promise<Encoded> {
    return encodeBody(ctx, this.files, s, body, mode, id);
  }

  /** The insert of one new object (ON CONFLICT DO NOTHING: a duplicate key changes nothing). */
  async prepareCreate(
    ctx: ApiContext,
    s: CompiledSchema,
    body: Record<string, unknown>,
    returning: "json" | "key" = "json",
    passwordOptional = false,
  ): Promise<PreparedWrite> {
    const enc = await this.encode(ctx, s, body, "create");
    for (const [f, by] of enc.incs) enc.values.set(f, [by]); // a new counter starts at 0
    const id = (body[s.pk] as string | undefined) ?? newObjectId();
    if (s.passwordField && !passwordOptional && !enc.values.get(s.passwordField)?.[0]) {
      await this.files.discard(ctx.env, enc.saved);
      throw badRequest(`${s.passwordField} is required to create a ${s.name}`);
    }
    const now = Date.now();
    const args: InValue[] = [id];
    for (const fc of s.fieldColumns) args.push(...(enc.values.get(fc.name) ?? fc.cols.map(() => null)));
    args.push(now, now, enc.owner !== undefined ? enc.owner || null : ownerOf(ctx.principal));
    let stmt: InStatement = { sql: returning === "json" ? s.sqlInsert : s.sqlInsertKey, args };
    if (returning === "json" && !s.sameForAll) {
      // The answer shows the caller what it wrote: every field, with file links on this answer's base.
      const r = s.renderFor(fullViewer(ctx), null);
      stmt = { sql: `${s.sqlInsertHead} RETURNING ${r.sql} AS j`, args: [...args, ...r.args] };
    }
    return { id, stmts: [stmt, ...enc.saved.map((f) => this.files.fileRow(s.name, id, f))], saved: enc.saved };
  }

  /** Run prepared writes as one transaction (or one statement); saved files of writes that did nothing are removed. */
  async run(ctx: ApiContext, writes: readonly PreparedWrite[]): Promise<ResultSet[]> {
    const stmts = writes.flatMap((w) => w.stmts);
    let results: ResultSet[];
    try {
      results = stmts.length === 1 ? [await ctx.db.execute(stmts[0]!)] : await ctx.db.batch(stmts, "write");
    } catch (e) {
      await this.files.discard(
        ctx.env,
        writes.flatMap((w) => w.saved),
      );
      throw e;
    }
    let i = 0;
    const unused: SavedFile[] = [];
    for (const w of writes) {
      if (w.saved.length && results[i]!.rowsAffected === 0) unused.push(...w.saved);
      i += w.stmts.length;
    }
    if (unused.length) await this.files.discard(ctx.env, unused);
    return results;
  }

  /** Results of the object statements of `writes` (skipping the file rows). */
  objectResults(writes: readonly PreparedWrite[], results: readonly ResultSet[]): ResultSet[] {
    const out: ResultSet[] = [];
    let i = 0;
    for (const w of writes) {
      out.push(results[i]!);
      i += w.stmts.length;
    }
    return out;
  }

  async create(ctx: ApiContext, name: string, body: unknown, relations: ReadonlyMap<string, string>): Promise<JsonText> {
    if (!isObject(body)) throw badRequest("the request body must be a JSON object or an array of objects");
    const s = await this.schemaForWrite(ctx, name, [body], relations, true);
    await access(ctx, s, "create");
    const w = await this.prepareCreate(ctx, s, body);
    const [rs] = await this.run(ctx, [w]);
    if (rs!.rows.length === 0) throw conflict(`Duplicate key for schema ${s.name}: ${JSON.stringify(w.id)}`);
    return rs!.rows[0]!.j as JsonText;
  }

  /**
   * Batch create: every object on its own; keys of the created ones in posted order. An object whose key an
   * earlier one of the batch already has, or (for a schema with a password) that exists, fails before any work
   * is spent on it, so no password of an object that cannot be created is hashed.
   */
  async createMany(
    ctx: ApiContext,
    name: string,
    bodies: unknown[],
    relations: ReadonlyMap<string, string>,
  ): Promise<{ succeeded: string[]; failed: string[] }> {
    if (bodies.length > MAX_BATCH) throw badRequest(`at most ${MAX_BATCH} objects per batch`);
    const s = await this.schemaForWrite(ctx, name, bodies.filter(isObject), relations, true);
    await access(ctx, s, "create");
    limitPasswords(ctx, s, bodies);
    const doomed = await this.doomedKeys(ctx, s, bodies);
    const prepared = await Promise.all(
      bodies.map(async (b, i) => {
        const label = isObject(b) && isKeyValue(b[s.pk]) ? (b[s.pk] as string) : String(i);
        if (!isObject(b) || doomed.has(i)) return { label, write: null };
        try {
          return { label, write: await this.prepareCreate(ctx, s, b, "key") };
        } catch (e) {
          if (e instanceof ApiError) return { label, write: null };
          throw e;
        }
      }),
    );
    const writes = prepared.flatMap((p) => (p.write ? [p.write] : []));
    const results = writes.length ? this.objectResults(writes, await this.run(ctx, writes)) : [];
    const created = new Set(writes.filter((_, i) => results[i]!.rows.length > 0));
    const succeeded: string[] = [];
    const failed: string[] = [];
    for (const p of prepared)
      (p.write && created.has(p.write) ? succeeded : failed).push(p.write && created.has(p.write) ? p.write.id : p.label);
    return { succeeded, failed };
  }

  /** Whether an object with this key exists (whoever may see it). */
  async exists(ctx: ApiContext, s: CompiledSchema, key: string): Promise<boolean> {
    return (await ctx.db.execute({ sql: `SELECT 1 FROM ${s.table} WHERE ${q(s.pk)} = ?`, args: [key] })).rows.length > 0;
  }

  /**
   * Positions in a batch whose key repeats an earlier object's, and, on a schema with a password field, whose
   * key already exists (one read): they would fail on the key anyway.
   */
  async doomedKeys(ctx: ApiContext, s: CompiledSchema, bodies: readonly unknown[]): Promise<Set<number>> {
    const doomed = new Set<number>();
    const first = new Map<string, number>();
    bodies.forEach((b, i) => {
      const key = isObject(b) ? b[s.pk] : undefined;
      if (typeof key !== "string") return;
      if (first.has(key)) doomed.add(i);
      else first.set(key, i);
    });
    if (s.passwordField && first.size > 0) {
      const rs = await ctx.db.execute({
        sql: `SELECT ${q(s.pk)} AS k FROM ${s.table} WHERE ${q(s.pk)} IN (SELECT value FROM json_each(?))`,
        args: [JSON.stringify([...first.keys()])],
      });
      for (const r of rs.rows) doomed.add(first.get(r.k as string)!);
    }
    return doomed;
  }

  /**
   * GET by key; the common case (read permission open, no select or expansion) goes straight to one statement,
   * with no async frame. A shape (select, expand) reads through the list query restricted to the key.
   */
  get(ctx: ApiContext, name: string, id: string, shape: ReadShape | null = null): Promise<JsonText> {
    const s = this.schemaForRead(ctx, name);
    if (shape !== null) return findOne(ctx, s, id, shape);
    if (s.open.read && s.sameForAll) return ctx.db.execute({ sql: s.sqlGet, args: [id] }).then(foundObject);
    return this.getScoped(ctx, s, id);
  }

  private async getScoped(ctx: ApiContext, s: CompiledSchema, id: string): Promise<JsonText> {
    const scope = s.open.read ? null : await access(ctx, s, "read");
    if (s.sameForAll) return foundObject(await ctx.db.execute(andScope(s.sqlGet, [id], scope)));
    const j = objectSql(ctx, s, "t");
    return foundObject(
      await ctx.db.execute(andScope(`SELECT ${j.sql} AS j FROM ${s.table} AS t WHERE t.${q(s.pk)} = ?`, [...j.args, id], scope)),
    );
  }

  /** Partial update; answers the whole object. `<field>[inc]` adds in SQL, atomically. */
  async update(ctx: ApiContext, name: string, id: string, body: unknown, relations: ReadonlyMap<string, string>): Promise<JsonText> {
    const updated = await this.updateOne(ctx, name, id, body, relations, null);
    if (updated === null) throw notFound();
    return updated;
  }

  /**
   * Conditional update: the same write, made only when the object also matches `conditions` (checked in the
   * UPDATE statement itself, so nothing can change in between). The whole object, or null when it does not
   * exist, is outside the update scope or does not match.
   */
  updateIf(ctx: ApiContext, name: string, id: string, body: unknown, conditions: Conditions): Promise<JsonText | null> {
    return this.updateOne(ctx, name, id, body, new Map(), conditions);
  }

  private async updateOne(
    ctx: ApiContext,
    name: string,
    id: string,
    body: unknown,
    relations: ReadonlyMap<string, string>,
    conditions: Conditions | null,
  ): Promise<JsonText | null> {
    if (!isObject(body)) throw badRequest("the request body must be a JSON object");
    if (!ctx.schemas.schemas.has(name)) throw notFound();
    const s = await this.schemaForWrite(ctx, name, [body], relations, false);
    const allowed = await access(ctx, s, "update");
    // The conditions are compiled (and refused when invalid) before any upload is saved.
    if (conditions) refuseOwnerOnly(ctx, s, conditions);
    const scope = conditions ? compileSelection(s, conditions, allowed, "update") : allowed;
    const enc = await this.encode(ctx, s, body, "update", id);
    let exists: boolean;
    try {
      exists = await this.resolveKeepIfSame(ctx, s, id, enc);
    } catch (e) {
      await this.files.discard(ctx.env, enc.saved);
      throw e;
    }
    if (!exists) {
      await this.files.discard(ctx.env, enc.saved);
      return null;
    }
    const stmt = this.updateStatement(ctx, s, id, enc, scope);
    const newHash = s.passwordField ? (enc.values.get(s.passwordField)?.[0] as string | undefined) : undefined;
    const w: PreparedWrite = {
      id,
      stmts: [stmt, ...enc.saved.map((f) => this.files.fileRow(s.name, id, f)), ...(newHash ? passwordChangedSql(s, id, newHash) : [])],
      saved: enc.saved,
    };
    const [rs] = await this.run(ctx, [w]);
    if (rs!.rows.length === 0) {
      if (enc.incs.size && (await ctx.db.execute(andScope(s.sqlGet, [id], scope))).rows.length) throw incOverflow(enc.incs.keys());
      return null;
    }
    if (touchesFiles(s, enc)) await this.files.drain(ctx.env, ctx.db);
    if (newHash) await this.signedOut(ctx, s.name, [id]);
    return rs!.rows[0]!.j as JsonText;
  }

  /**
   * A binary field sent back as its current URL is left alone; any other plain string is refused. False when
   * the object does not exist (only looked up when such a field was sent).
   */
  private async resolveKeepIfSame(ctx: ApiContext, s: CompiledSchema, id: string, enc: Encoded): Promise<boolean> {
    if (enc.keepIfSame.size === 0) return true;
    const fields = [...enc.keepIfSame.keys()];
    const rs = await ctx.db.execute({ sql: `SELECT ${fields.map(q).join(", ")} FROM ${s.table} WHERE ${q(s.pk)} = ?`, args: [id] });
    if (rs.rows.length === 0) return false;
    for (const f of fields)
      if (!namesStoredFile(enc.keepIfSame.get(f)!, (rs.rows[0]![f] as string | null) ?? null))
        throw typeError(
          f,
          "update",
          new ValueTypeError(`${UPLOAD}, null, or the file's current URL`, describeValue(enc.keepIfSame.get(f))),
        );
    return true;
  }

  updateStatement(ctx: ApiContext, s: CompiledSchema, id: string, enc: Encoded, scope: SqlPart | null): InStatement {
    const set = setClause(s, enc);
    const args: InValue[] = [...set.args];
    const scoped = andScope(`t.${q(s.pk)} = ?`, [id], scope);
    let where = scoped.sql;
    args.push(...scoped.args);
    for (const [f, by] of enc.incs) {
      where += ` AND abs(COALESCE(t.${q(f)}, 0) + ?) <= ${MAX_SAFE}`;
      args.push(by);
    }
    const j = objectSql(ctx, s, null);
    return {
      sql: `UPDATE ${s.table} AS t SET ${set.sql} WHERE ${where} RETURNING ${j.sql} AS j`,
      args: j.args.length ? [...args, ...j.args] : args,
    };
  }

  async remove(ctx: ApiContext, name: string, id: string): Promise<void> {
    const s = ctx.schemas.schemas.get(name);
    if (!s) throw notFound("This object does not exist");
    const scope = await access(ctx, s, "delete");
    const where = andScope(`t.${q(s.pk)} = ?`, [id], scope);
    const rs = await ctx.db.execute(
      scope ? { sql: `DELETE FROM ${s.table} AS t WHERE ${where.sql}`, args: where.args } : { sql: s.sqlDelete, args: [id] },
    );
    if (rs.rowsAffected === 0) throw notFound("This object does not exist");
    await this.afterDelete(ctx, [s]);
  }

  /** Empty the file trash when any of the schemas a delete touched has binary fields. */
  async afterDelete(ctx: ApiContext, touched: readonly CompiledSchema[]): Promise<void> {
    if (touched.some((s) => s.fieldColumns.some((fc) => fc.def.type === "binary"))) await this.files.drain(ctx.env, ctx.db);
  }
}
