// Datastore CRUD on one schema: create (single and batch), read by key, list, partial update, delete.
// Values are type-checked against the schema; development inference adds schemas and fields first.

import { hashPassword } from "../auth/passwords.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import type { Catalog } from "../schema/catalog.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { AUTO_FIELDS, type FieldDef, isValidName } from "../schema/definition.ts";
import { inferField, mergeInferred } from "../schema/infer.ts";
import { ValueTypeError, encodeValue, isKeyValue } from "../schema/values.ts";
import { q } from "../db/sql.ts";
import type { InValue } from "@libsql/core/api";
import type { ApiContext } from "./context.ts";

export const MAX_BATCH = 1000;

/** JSON text produced by SQLite (json_object): sent to clients as it is. */
export type JsonText = string;
const IGNORED_ON_WRITE = new Set<string>(AUTO_FIELDS);

export function newObjectId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

type Mode = "create" | "update";

function typeError(field: string, mode: Mode, e: unknown): ApiError {
  const detail = e instanceof ValueTypeError && e.detail ? ` (${e.detail})` : "";
  return badRequest(mode === "create"
    ? `${field} has an incompatible type, please check your schema${detail}`
    : `${field} has invalid type, please check your schema${detail}`);
}

export class Objects {
  constructor(private readonly catalog: Catalog) {}

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
  async schemaForWrite(ctx: ApiContext, name: string, bodies: readonly Record<string, unknown>[], relations: ReadonlyMap<string, string>, mayCreate: boolean): Promise<CompiledSchema> {
    let s = ctx.schemas.schemas.get(name);
    if (!s && !(ctx.infer && mayCreate)) throw notFound(`schema "${name}" does not exist`);
    if (!s && !isValidName(name)) throw badRequest(`"${name}" is not a valid schema name`);
    const pk = s?.pk ?? `${name}_id`;
    const additions: Record<string, FieldDef> = {};
    for (const body of bodies) {
      for (const key of Object.keys(body)) {
        if (key === pk || IGNORED_ON_WRITE.has(key) || s?.fields.has(key)) continue;
        if (!ctx.infer) throw badRequest(isValidName(key) ? `${key} does not exist in schema ${name}` : `"${key}" is not a valid field name`);
        if (!isValidName(key)) throw badRequest(`"${key}" is not a valid field name (lowercase letters, digits and _, starting with a letter, at most 64)`);
        const inferred = inferField(key, body[key], relations.get(key));
        additions[key] = Object.hasOwn(additions, key) ? mergeInferred(key, additions[key]!, inferred) : inferred;
      }
    }
    if (s && Object.keys(additions).length === 0) return s;
    return this.catalog.infer(name, additions);
  }

  /** Column values for the fields a body sets (null and "NULL" clear a field). */
  private async encodeBody(s: CompiledSchema, body: Record<string, unknown>, mode: Mode, id?: string): Promise<Map<string, InValue[]>> {
    const out = new Map<string, InValue[]>();
    for (const key of Object.keys(body)) {
      const v = body[key];
      if (key === s.pk) {
        if (mode === "update" && v !== id) throw badRequest(`${s.pk}: unable to update primary key`);
        if (mode === "create" && !isKeyValue(v)) throw typeError(key, mode, new ValueTypeError("a primary key is a non-empty string of at most 256 characters"));
        continue;
      }
      if (IGNORED_ON_WRITE.has(key)) continue;
      const fc = s.columnsByField.get(key)!;
      if (v === null || v === "NULL") {
        out.set(key, fc.cols.map(() => null));
        continue;
      }
      if (fc.def.type === "password") {
        if (mode === "update") throw badRequest(`${key} cannot be changed with PUT; use /${s.name}/resetPassword`);
        if (typeof v !== "string" || v.length === 0 || v.length > 1024) throw typeError(key, mode, new ValueTypeError("a password is a non-empty string"));
        out.set(key, [await hashPassword(v)]);
        continue;
      }
      try {
        out.set(key, encodeValue(fc.def, v));
      } catch (e) {
        throw typeError(key, mode, e);
      }
    }
    return out;
  }

  private async insertArgs(s: CompiledSchema, body: Record<string, unknown>): Promise<{ id: string; args: InValue[] }> {
    const values = await this.encodeBody(s, body, "create");
    const id = (body[s.pk] as string | undefined) ?? newObjectId();
    if (s.passwordField && !values.get(s.passwordField)?.[0]) throw badRequest(`${s.passwordField} is required to create a ${s.name}`);
    const now = Date.now();
    const args: InValue[] = [id];
    for (const fc of s.fieldColumns) args.push(...(values.get(fc.name) ?? fc.cols.map(() => null)));
    args.push(now, now, null);
    return { id, args };
  }

  async create(ctx: ApiContext, name: string, body: unknown, relations: ReadonlyMap<string, string>): Promise<JsonText> {
    if (!isObject(body)) throw badRequest("the request body must be a JSON object or an array of objects");
    const s = await this.schemaForWrite(ctx, name, [body], relations, true);
    const { id, args } = await this.insertArgs(s, body);
    const rs = await ctx.db.execute({ sql: s.sqlInsert, args });
    if (rs.rows.length === 0) throw new ApiError(409, `Duplicate key for schema ${s.name}: ${JSON.stringify(id)}`);
    return rs.rows[0]!.j as JsonText;
  }

  /** Batch create: every object on its own; keys of the created ones in posted order. */
  async createMany(ctx: ApiContext, name: string, bodies: unknown[], relations: ReadonlyMap<string, string>): Promise<{ succeeded: string[]; failed: string[] }> {
    if (bodies.length > MAX_BATCH) throw badRequest(`at most ${MAX_BATCH} objects per batch`);
    const objects = bodies.filter(isObject);
    const s = await this.schemaForWrite(ctx, name, objects, relations, true);
    const prepared = await Promise.all(
      bodies.map(async (b, i) => {
        const label = isObject(b) && isKeyValue(b[s.pk]) ? (b[s.pk] as string) : String(i);
        if (!isObject(b)) return { label, ok: null };
        try {
          return { label, ok: await this.insertArgs(s, b) };
        } catch (e) {
          if (e instanceof ApiError) return { label, ok: null };
          throw e;
        }
      }),
    );
    const good = prepared.filter((p) => p.ok);
    const results = good.length
      ? await ctx.db.batch(good.map((p) => ({ sql: s.sqlInsertKey, args: p.ok!.args })), "write")
      : [];
    const inserted = new Set<number>();
    good.forEach((p, i) => results[i]!.rows.length && inserted.add(prepared.indexOf(p)));
    const succeeded: string[] = [];
    const failed: string[] = [];
    prepared.forEach((p, i) => (inserted.has(i) ? succeeded.push(p.ok!.id) : failed.push(p.label)));
    return { succeeded, failed };
  }

  get(ctx: ApiContext, name: string, id: string): Promise<JsonText> {
    const s = this.schemaForRead(ctx, name);
    return ctx.db.execute({ sql: s.sqlGet, args: [id] }).then((rs) => {
      if (rs.rows.length === 0) throw notFound();
      return rs.rows[0]!.j as JsonText;
    });
  }

  /** Partial update; answers the whole object. */
  async update(ctx: ApiContext, name: string, id: string, body: unknown, relations: ReadonlyMap<string, string>): Promise<JsonText> {
    if (!isObject(body)) throw badRequest("the request body must be a JSON object");
    if (!ctx.schemas.schemas.has(name)) throw notFound();
    const s = await this.schemaForWrite(ctx, name, [body], relations, false);
    const values = await this.encodeBody(s, body, "update", id);
    const sets: string[] = [];
    const args: InValue[] = [];
    for (const fc of s.fieldColumns) {
      const v = values.get(fc.name);
      if (!v) continue;
      fc.cols.forEach((c, i) => {
        sets.push(`${q(c)} = ?`);
        args.push(v[i]!);
      });
    }
    sets.push(`"lastmoddate" = max("lastmoddate" + 1, ?)`);
    args.push(Date.now(), id);
    const rs = await ctx.db.execute({ sql: `UPDATE ${s.table} SET ${sets.join(", ")} WHERE ${q(s.pk)} = ? RETURNING ${s.jsonReturning} AS j`, args });
    if (rs.rows.length === 0) throw notFound();
    return rs.rows[0]!.j as JsonText;
  }

  async remove(ctx: ApiContext, name: string, id: string): Promise<void> {
    const s = ctx.schemas.schemas.get(name);
    if (!s) throw notFound("This object does not exist");
    const rs = await ctx.db.execute({ sql: s.sqlDelete, args: [id] });
    if (rs.rowsAffected === 0) throw notFound("This object does not exist");
  }

  /** Number of objects per schema of a version (for the status API), in one round trip. */
  async counts(ctx: Pick<ApiContext, "db" | "schemas">): Promise<Record<string, number>> {
    const list = [...ctx.schemas.schemas.values()];
    if (list.length === 0) return {};
    const rs = await ctx.db.batch(list.map((s) => `SELECT count(*) AS n FROM ${s.table}`), "read");
    return Object.fromEntries(list.map((s, i) => [s.name, Number(rs[i]!.rows[0]!.n)]));
  }
}
