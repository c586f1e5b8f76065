// Array and relationship sub-resources: PUT /<schema>/<id>/<field> appends, POST /<schema>/<id>/<field>
// creates related objects and appends their keys, DELETE /<schema>/<id>/<field>/<v1>,<v2> pulls values or
// references (and with cascade deletes the related objects). Each runs in one write transaction.
// An internal of the Datastore (datastore.ts).

import type { InValue, Transaction } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { FieldDef } from "../schema/definition.ts";
import { ValueTypeError, describeValue, textMismatch } from "../schema/value-errors.ts";
import { checkKeys, encodeValue, isKeyValue } from "../schema/values.ts";
import type { ApiContext } from "../request-context.ts";
import { access, andScope } from "./access.ts";
import { objectSql } from "./viewer.ts";
import type { SqlPart } from "./query/compile.ts";
import { type JsonText, MAX_BATCH, type Objects, type PreparedWrite } from "./objects.ts";
import { isObject, limitPasswords, typeError } from "./encode.ts";

type Json = string | number | boolean;

interface Target {
  s: CompiledSchema;
  field: string;
  def: FieldDef;
  /** The related schema of a relationship field. */
  related: CompiledSchema | null;
  /** The caller's update scope on the parent (every sub-resource change is an update of the parent). */
  scope: SqlPart | null;
  /** The parent as the caller is answered with it (RETURNING). */
  answer: SqlPart;
}

export class Relations {
  constructor(
    private readonly objects: Objects,
    /** Told the keys of user objects a cascade deleted, after the commit. */
    private readonly signedOut: (ctx: ApiContext, schema: string, keys: readonly string[]) => Promise<void>,
  ) {}

  private async target(ctx: ApiContext, name: string, field: string, kinds: "any" | "relationship"): Promise<Target> {
    const s = this.objects.schemaForRead(ctx, name);
    const def = s.fields.get(field);
    if (!def) throw badRequest(`${field} does not exist in schema ${s.name}`);
    const ok = def.type === "relationship" || (kinds === "any" && def.type === "array");
    if (!ok) throw badRequest(`${field} is not ${kinds === "any" ? "an array or relationship" : "a relationship"} field of ${s.name}`);
    let related: CompiledSchema | null = null;
    if (def.type === "relationship") {
      related = ctx.schemas.schemas.get(def.schema!) ?? null;
      if (!related) throw badRequest(`${field} relates to schema ${def.schema}, which does not exist in this version`);
    }
    return { s, field, def, related, scope: await access(ctx, s, "update"), answer: objectSql(ctx, s, null) };
  }

  /** Read the field inside a write transaction; 404 (with `missing`) when the object does not exist. */
  private async current(tx: Transaction, t: Target, id: string, missing: string): Promise<Json[] | string | null> {
    const where = andScope(`t.${q(t.s.pk)} = ?`, [id], t.scope);
    const rs = await tx.execute({ sql: `SELECT t.${q(t.field)} AS v FROM ${t.s.table} AS t WHERE ${where.sql}`, args: where.args });
    if (rs.rows.length === 0) throw notFound(missing);
    const v = rs.rows[0]!.v as string | null;
    if (v === null) return null;
    return t.def.type === "array" || t.def.many ? (JSON.parse(v) as Json[]) : v;
  }

  private async write(tx: Transaction, t: Target, id: string, value: InValue): Promise<JsonText> {
    const rs = await tx.execute({
      sql: `UPDATE ${t.s.table} AS t SET ${q(t.field)} = ?, "lastmoddate" = max("lastmoddate" + 1, ?) WHERE t.${q(t.s.pk)} = ? RETURNING ${t.answer.sql} AS j`,
      args: [value, Date.now(), id, ...t.answer.args],
    });
    return rs.rows[0]!.j as JsonText;
  }

  private async inTransaction<T>(ctx: ApiContext, fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const tx = await ctx.db.transaction("write");
    try {
      const out = await fn(tx);
      await tx.commit();
      return out;
    } finally {
      tx.close();
    }
  }

  /**
   * PUT: append. Arrays keep duplicates; relationships take keys, deduplicated, whether or not an object has them
   * yet (as on create and update: a key without an object is stored as given, and an expand leaves it a key).
   */
  async append(ctx: ApiContext, name: string, id: string, field: string, body: unknown): Promise<JsonText> {
    const t = await this.target(ctx, name, field, "any");
    if (!Array.isArray(body)) throw badRequest(`send a JSON array of values to append to ${field}, got ${describeValue(body)}`);
    if (body.length > MAX_BATCH) throw badRequest(`at most ${MAX_BATCH} values per append`);
    checkAppended(t, body);
    if (t.def.type === "relationship" && !t.def.many && body.length !== 1)
      throw badRequest(`${field} holds one ${t.def.schema}: send exactly one key`);
    return this.inTransaction(ctx, async (tx) => {
      const cur = await this.current(tx, t, id, "object instance does not exist");
      if (t.def.type === "array") return this.write(tx, t, id, JSON.stringify([...((cur as Json[] | null) ?? []), ...(body as Json[])]));
      const keys = [...new Set(body as string[])];
      if (!t.def.many) return this.write(tx, t, id, keys[0]!);
      const merged = [...((cur as string[] | null) ?? [])];
      for (const k of keys) if (!merged.includes(k)) merged.push(k);
      return this.write(tx, t, id, JSON.stringify(merged));
    });
  }

  /** POST: create related objects (each on its own, like a batch create) and append the created keys. */
  async createRelated(
    ctx: ApiContext,
    name: string,
    id: string,
    field: string,
    body: unknown,
  ): Promise<{ succeeded: string[]; failed: string[] }> {
    const t = await this.target(ctx, name, field, "relationship");
    const bodies = Array.isArray(body) ? body : [body];
    if (bodies.length > MAX_BATCH) throw badRequest(`at most ${MAX_BATCH} objects per request`);
    if (!t.def.many && bodies.length !== 1) throw badRequest(`${field} holds one ${t.def.schema}: send exactly one object`);
    const related = await this.objects.schemaForWrite(ctx, t.related!.name, bodies.filter(isObject), new Map(), true);
    // The create permission of the related schema applies to each object: when it is refused, all fail.
    const mayCreate = await access(ctx, related, "create").then(
      () => true,
      (e) => (e instanceof ApiError ? false : Promise.reject(e)),
    );
    limitPasswords(ctx, related, bodies);
    const doomed = mayCreate ? await this.objects.doomedKeys(ctx, related, bodies) : new Set<number>();
    const prepared: { label: string; write: PreparedWrite | null }[] = [];
    for (const [i, b] of bodies.entries()) {
      if (!mayCreate || doomed.has(i)) {
        prepared.push({ label: isObject(b) && isKeyValue(b[related.pk]) ? (b[related.pk] as string) : String(i), write: null });
        continue;
      }
      const label = isObject(b) && isKeyValue(b[related.pk]) ? (b[related.pk] as string) : String(i);
      try {
        prepared.push({ label, write: isObject(b) ? await this.objects.prepareCreate(ctx, related, b, "key") : null });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        prepared.push({ label, write: null });
      }
    }
    const saved = prepared.flatMap((p) => p.write?.saved ?? []);
    try {
      return await this.inTransaction(ctx, async (tx) => {
        const cur = await this.current(tx, t, id, "object instance does not exist");
        const succeeded: string[] = [];
        const failed: string[] = [];
        for (const p of prepared) {
          if (!p.write) {
            failed.push(p.label);
            continue;
          }
          const [rs] = await tx.batch(p.write.stmts);
          if (rs!.rows.length) succeeded.push(p.write.id);
          else {
            failed.push(p.label);
            await this.objects.files.discard(ctx.env, p.write.saved);
          }
        }
        if (succeeded.length) {
          if (!t.def.many) await this.write(tx, t, id, succeeded[0]!);
          else {
            const merged = [...((cur as string[] | null) ?? [])];
            for (const k of succeeded) if (!merged.includes(k)) merged.push(k);
            await this.write(tx, t, id, JSON.stringify(merged));
          }
        }
        return { succeeded, failed };
      });
    } catch (e) {
      await this.objects.files.discard(ctx.env, saved);
      throw e;
    }
  }

  /**
   * DELETE: remove values from an array, or references from a relationship (an emptied field is []). With
   * cascade the related objects whose references were removed are deleted too.
   */
  async pull(ctx: ApiContext, name: string, id: string, field: string, values: string[], cascade: boolean): Promise<void> {
    const t = await this.target(ctx, name, field, "any");
    const cascadeScope = cascade && t.related ? await access(ctx, t.related, "delete") : null;
    if (values.length === 0 || values.length > MAX_BATCH) throw badRequest(`name 1 to ${MAX_BATCH} values to remove from ${field}`);
    const wanted: Json[] = t.def.type === "array" ? values.map((v) => itemValue(t.def, v, field)) : values;
    const { removed, deleted } = await this.inTransaction(ctx, async (tx) => {
      const cur = await this.current(tx, t, id, "This object does not exist");
      if (t.def.type === "relationship" && !t.def.many) {
        if (cur === null || !wanted.includes(cur as string)) return { removed: [], deleted: [] };
        await this.write(tx, t, id, null);
        return { removed: [cur as string], deleted: await this.cascade(tx, t, [cur as string], cascade, cascadeScope) };
      }
      const list = (cur as Json[] | null) ?? [];
      const keep = list.filter((v) => !wanted.includes(v));
      const gone = [...new Set(list.filter((v) => wanted.includes(v)))];
      await this.write(tx, t, id, JSON.stringify(keep));
      return {
        removed: gone,
        deleted: t.def.type === "relationship" ? await this.cascade(tx, t, gone as string[], cascade, cascadeScope) : [],
      };
    });
    if (cascade && t.related && removed.length) await this.objects.afterDelete(ctx, [t.related]);
    if (t.related?.def.user && deleted.length) await this.signedOut(ctx, t.related.name, deleted);
  }

  /** Delete the related objects whose references were removed (only those the caller may delete); their keys. */
  private async cascade(tx: Transaction, t: Target, keys: string[], cascade: boolean, scope: SqlPart | null): Promise<string[]> {
    if (!cascade || keys.length === 0) return [];
    const where = andScope(`t.${q(t.related!.pk)} IN (SELECT value FROM json_each(?))`, [JSON.stringify(keys)], scope);
    const rs = await tx.execute({
      sql: `DELETE FROM ${t.related!.table} AS t WHERE ${where.sql} RETURNING ${q(t.related!.pk)} AS k`,
      args: where.args,
    });
    return rs.rows.map((r) => String(r.k));
  }
}

/** Values to append: items of the array's type, or keys of the related schema; 400 naming the first misfit. */
function checkAppended(t: Target, body: unknown[]): void {
  try {
    if (t.def.type === "array") encodeValue(t.def, body);
    else checkKeys(t.def.schema, body);
  } catch (e) {
    throw e instanceof ValueTypeError ? typeError(t.field, "update", e) : e;
  }
}

/** A value of an array field named in a URL (always text there), converted to the item type. */
function itemValue(def: FieldDef, raw: string, field: string): Json {
  switch (def.items) {
    case "integer":
      if (/^[-+]?\d+$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
      break;
    case "float":
      if (raw.trim() !== "" && Number.isFinite(Number(raw))) return Number(raw);
      break;
    case "boolean":
      if (raw === "true" || raw === "false") return raw === "true";
      break;
    default:
      return raw;
  }
  throw badRequest(textMismatch(def.items!, raw).detail(field));
}
