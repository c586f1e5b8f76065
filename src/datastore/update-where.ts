// Update by query: one set of changes (fields, `<field>[inc]` counters, sm_owner) applied to every object that
// matches conditions within the caller's update scope, in one write transaction; answers how many changed.
// Files and passwords belong to one object each, so uploads, file URLs and password fields are refused here.
// An internal of the Datastore (datastore.ts).

import type { InValue } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import { badRequest, notFound } from "../errors.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { ApiContext } from "../request-context.ts";
import { access } from "./access.ts";
import { compileSelection, type SqlPart } from "./query/compile.ts";
import type { Conditions } from "./query/tree.ts";
import { refuseOwnerOnly } from "./viewer.ts";
import { onlyKeys } from "./find.ts";
import { MAX_SAFE, type Objects, incOverflow } from "./objects.ts";
import { type Encoded, isObject, setClause, touchesFiles } from "./encode.ts";

const NO_RELATIONS: ReadonlyMap<string, string> = new Map();

/** Refuse what cannot be shared by many objects: a file (upload or URL) and a password. Clearing a file is fine. */
function checkShareable(s: CompiledSchema, body: Record<string, unknown>): void {
  for (const key of Object.keys(body)) {
    const type = s.fields.get(key)?.type;
    if (type === "password") throw badRequest(`${key}: a password is set on one object at a time, not by query`);
    if (type === "binary" && body[key] !== null && body[key] !== "NULL")
      throw badRequest(`${key}: a file is uploaded to one object at a time; by query a binary field can only be cleared (null)`);
  }
}

/** Any match whose counter would leave ±(2^53−1) after the increments (checked before the update, in its transaction). */
function overflowSql(s: CompiledSchema, where: SqlPart, enc: Encoded): { sql: string; args: InValue[] } {
  const tests: string[] = [];
  const args: InValue[] = [...where.args];
  for (const [f, by] of enc.incs) {
    tests.push(`abs(COALESCE(t.${q(f)}, 0) + ?) > ${MAX_SAFE}`);
    args.push(by);
  }
  return { sql: `SELECT 1 FROM ${s.table} AS t WHERE (${where.sql}) AND (${tests.join(" OR ")}) LIMIT 1`, args };
}

export async function updateMatching(
  objects: Objects,
  ctx: ApiContext,
  name: string,
  conditions: Conditions,
  body: unknown,
  only?: readonly string[],
): Promise<number> {
  if (!isObject(body)) throw badRequest("the changes must be a JSON object");
  if (!ctx.schemas.schemas.has(name)) throw notFound(`schema "${name}" does not exist`);
  if (conditions.where.length === 0 && !conditions.or)
    throw badRequest(`updating ${name} by query needs at least one condition; changing every object is refused`);
  const s = await objects.schemaForWrite(ctx, name, [body], NO_RELATIONS, false);
  checkShareable(s, body);
  refuseOwnerOnly(ctx, s, conditions);
  const where = onlyKeys(s, compileSelection(s, conditions, await access(ctx, s, "update"), "update"), only);
  const enc = await objects.encode(ctx, s, body, "update");
  const set = setClause(s, enc);
  const tx = await ctx.db.transaction("write");
  let changed: number;
  try {
    if (enc.incs.size && (await tx.execute(overflowSql(s, where, enc))).rows.length) throw incOverflow(enc.incs.keys());
    const rs = await tx.execute({ sql: `UPDATE ${s.table} AS t SET ${set.sql} WHERE ${where.sql}`, args: [...set.args, ...where.args] });
    await tx.commit();
    changed = rs.rowsAffected;
  } finally {
    tx.close();
  }
  if (changed && touchesFiles(s, enc)) await objects.files.drain(ctx.env, ctx.db);
  return changed;
}
