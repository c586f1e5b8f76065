// Queries on one schema: GET /<schema> with conditions, select, expand, order and Range, DELETE by query, and
// object counts (per schema, or of the matches of conditions). The read scope (readScope) is ANDed into every query; the rest is compiled SQL. An internal of
// the Datastore (datastore.ts).

import type { InValue } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { type Viewer, bindViewer, objectJsonSql } from "../schema/json-sql.ts";
import type { ApiContext } from "../request-context.ts";
import { access, andScope } from "./access.ts";
import { refuseOwnerOnly, viewerOf } from "./viewer.ts";
import { type SqlPart, compileConditions, compileQuery, compileSelection } from "./query/compile.ts";
import { MAX_EXPAND_KEYS } from "./query/limits.ts";
import { ALL, type Projection, buildProjection } from "./query/select.ts";
import type { ReadShape } from "./query/parse.ts";
import type { Conditions, QueryTree } from "./query/tree.ts";

export interface FindResult {
  /** JSON array text. */
  body: string;
  /** Present when a Range was asked for and the answer is a strict part of the total. */
  contentRange: string | null;
}

/** Access control for reads of `schema`: the scope ANDed into every query (and into expansion queries). */
function readScope(ctx: ApiContext, s: CompiledSchema): Promise<SqlPart | null> | null {
  return s.open.read ? null : access(ctx, s, "read");
}

/** The read scope of a schema the caller may read, or null when it may not read it at all (left out, not an error). */
async function readableScope(ctx: ApiContext, s: CompiledSchema): Promise<{ scope: SqlPart | null } | null> {
  try {
    return { scope: await readScope(ctx, s) };
  } catch (e) {
    if (e instanceof ApiError) return null;
    throw e;
  }
}

type Obj = Record<string, unknown>;

interface FindSql {
  sql: string;
  args: InValue[];
  /** The count of the whole result, when a Range was asked for. */
  count: { sql: string; args: InValue[] } | null;
  projection: Projection;
}

/** The SQL of a query: the page (JSON text per row, rendered for `viewer`) and, with a Range, the total count. Pure. */
export function findSql(
  s: CompiledSchema,
  tree: QueryTree,
  scope: SqlPart | null,
  lookup: (name: string) => CompiledSchema | undefined,
  viewer?: Viewer,
): FindSql {
  const compiled = compileQuery(s, tree, scope);
  const projection = buildProjection(tree.select, tree.expand, s, lookup);
  const where = compiled.where;
  const range = tree.range;
  const count =
    range && !range.uncounted ? { sql: `SELECT count(*) AS n FROM ${s.table} AS t WHERE ${where.sql}`, args: where.args } : null;
  const limit = range ? [range.end === null ? -1 : range.end - range.start + 1, range.start] : [];
  const near = compiled.near;

  if (range && (near || tree.orderBy.length)) {
    // Sorting then cutting a page: find the page's rows first and render JSON for those only, instead of
    // letting the sorter carry a rendered object for every candidate. The distance is computed once.
    const inner = near
      ? `SELECT t.rowid AS rid, ${near.distance.sql} AS d FROM ${s.table} AS t WHERE ${where.sql} ORDER BY d, t.rowid LIMIT ? OFFSET ?`
      : `SELECT t.rowid AS rid FROM ${s.table} AS t WHERE ${where.sql} ${compiled.order.sql} LIMIT ? OFFSET ?`;
    const json = objectJsonSql(s.pk, s.fields, "t", {
      floats: s.floats,
      only: projection.fields,
      distance: near ? { field: near.field, sql: "p.d" } : undefined,
      viewer,
    });
    return {
      sql: `SELECT ${json.sql} AS j FROM (${inner}) AS p JOIN ${s.table} AS t ON t.rowid = p.rid ${near ? "ORDER BY p.d, t.rowid" : compiled.order.sql}`,
      args: [
        ...bindViewer(json.slots, viewer),
        ...(near ? near.distance.args : []),
        ...where.args,
        ...(near ? [] : compiled.order.args),
        ...limit,
      ],
      count,
      projection,
    };
  }
  // The distance's arguments are bound where its SQL stands inside the object (among the viewer's).
  const json = objectJsonSql(s.pk, s.fields, "t", {
    floats: s.floats,
    only: projection.fields,
    distance: near ? { field: near.field, sql: near.distance.sql, args: near.distance.args } : undefined,
    viewer,
  });
  return {
    sql: `SELECT ${json.sql} AS j FROM ${s.table} AS t WHERE ${where.sql} ${compiled.order.sql}${range ? " LIMIT ? OFFSET ?" : ""}`,
    args: [...bindViewer(json.slots, viewer), ...where.args, ...compiled.order.args, ...limit],
    count,
    projection,
  };
}

export async function findObjects(ctx: ApiContext, s: CompiledSchema, tree: QueryTree): Promise<FindResult> {
  refuseOwnerOnly(
    ctx,
    s,
    tree,
    tree.orderBy.map((o) => o.field),
  );
  const plan = findSql(
    s,
    tree,
    await readScope(ctx, s),
    (name) => ctx.schemas.schemas.get(name),
    s.sameForAll ? undefined : viewerOf(ctx, s),
  );
  const [page, count] = await Promise.all([
    ctx.db.execute({ sql: plan.sql, args: plan.args }),
    plan.count ? ctx.db.execute(plan.count) : null,
  ]);
  const texts = page.rows.map((r) => r.j as string);
  let body: string;
  if (tree.expand > 0 && texts.length > 0 && hasRelationships(s, plan.projection)) {
    const objects = texts.map((t) => JSON.parse(t) as Obj);
    await expand(ctx, s, objects, tree.expand, plan.projection);
    body = JSON.stringify(objects);
  } else body = `[${texts.join(",")}]`;
  let contentRange: string | null = null;
  if (tree.range && count) {
    const total = Number(count.rows[0]!.n);
    if (texts.length > 0 && texts.length < total)
      contentRange = `objects ${tree.range.start}-${tree.range.start + texts.length - 1}/${total}`;
  } else if (tree.range && texts.length > 0) contentRange = `objects ${tree.range.start}-${tree.range.start + texts.length - 1}/*`;
  return { body, contentRange };
}

function hasRelationships(s: CompiledSchema, p: Projection): boolean {
  for (const [name, def] of s.fields) if (def.type === "relationship" && (p.fields === null || p.fields.has(name))) return true;
  return false;
}

/**
 * Replace relationship keys with the related objects, level by level: one query per level and relationship
 * field (keys passed as one JSON array), never one per object. Keys whose object is missing stay keys.
 */
async function expand(ctx: ApiContext, s: CompiledSchema, objects: Obj[], depth: number, p: Projection): Promise<void> {
  const jobs: Promise<void>[] = [];
  for (const [field, def] of s.fields) {
    if (def.type !== "relationship" || (p.fields !== null && !p.fields.has(field))) continue;
    const target = ctx.schemas.schemas.get(def.schema!);
    if (!target) continue;
    const keys = new Set<string>();
    for (const o of objects) {
      const v = o[field];
      if (typeof v === "string") keys.add(v);
      else if (Array.isArray(v)) for (const k of v) if (typeof k === "string") keys.add(k);
    }
    if (keys.size === 0) continue;
    if (keys.size > MAX_EXPAND_KEYS)
      throw badRequest(`too many related objects to expand in "${field}" (${keys.size}); narrow the query with Range`);
    const sub = p.nested.get(field) ?? ALL;
    jobs.push(
      (async () => {
        // A related schema the caller may not read at all is not expanded: its keys stay keys.
        const readable = await readableScope(ctx, target);
        if (readable === null) return;
        const where = andScope(`t.${q(target.pk)} IN (SELECT value FROM json_each(?))`, [JSON.stringify([...keys])], readable.scope);
        const viewer = target.sameForAll ? undefined : viewerOf(ctx, target);
        const json = objectJsonSql(target.pk, target.fields, "t", { floats: target.floats, only: sub.fields, viewer });
        const rs = await ctx.db.execute({
          sql: `SELECT ${json.sql} AS j FROM ${target.table} AS t WHERE ${where.sql}`,
          args: [...bindViewer(json.slots, viewer), ...where.args],
        });
        const related = rs.rows.map((r) => JSON.parse(r.j as string) as Obj);
        if (depth > 1 && related.length) await expand(ctx, target, related, depth - 1, sub);
        const byKey = new Map(related.map((r) => [r[target.pk] as string, r]));
        for (const o of objects) {
          const v = o[field];
          if (typeof v === "string") o[field] = byKey.get(v) ?? v;
          else if (Array.isArray(v)) o[field] = v.map((k) => (typeof k === "string" ? (byKey.get(k) ?? k) : k));
        }
      })(),
    );
  }
  await Promise.all(jobs);
}

/**
 * One object by key with a select and/or expansion: the list query restricted to the key, so projection,
 * expansion and the read scope of every schema it touches are exactly those of lists. 404 when not visible.
 */
export async function findOne(ctx: ApiContext, s: CompiledSchema, id: string, shape: ReadShape): Promise<string> {
  const tree: QueryTree = {
    where: [{ field: s.pk, op: "eq", value: id, key: s.pk }],
    or: null,
    select: shape.select,
    expand: shape.expand,
    orderBy: [],
    range: null,
  };
  const found = await findObjects(ctx, s, tree);
  if (found.body === "[]") throw notFound();
  return found.body.slice(1, -1);
}

/**
 * DELETE /<schema>?<conditions>: delete every match; the deleted keys (a user schema's, for those who follow user
 * deletions) or their count.
 */
export async function deleteObjects(
  ctx: ApiContext,
  s: CompiledSchema,
  tree: Conditions,
  keys: true,
  only?: readonly string[],
): Promise<string[]>;
export async function deleteObjects(
  ctx: ApiContext,
  s: CompiledSchema,
  tree: Conditions,
  keys?: false,
  only?: readonly string[],
): Promise<number>;
export async function deleteObjects(
  ctx: ApiContext,
  s: CompiledSchema,
  tree: Conditions,
  keys = false,
  only?: readonly string[],
): Promise<number | string[]> {
  if (tree.where.length === 0 && !tree.or)
    throw badRequest(`DELETE /${s.name} needs at least one condition; deleting every object is refused`);
  refuseOwnerOnly(ctx, s, tree);
  const where = onlyKeys(s, compileSelection(s, tree, s.open.delete ? null : await access(ctx, s, "delete"), "delete"), only);
  const sql = `DELETE FROM ${s.table} WHERE rowid IN (SELECT t.rowid FROM ${s.table} AS t WHERE ${where.sql})`;
  if (keys) return (await ctx.db.execute({ sql: `${sql} RETURNING ${q(s.pk)} AS k`, args: where.args })).rows.map((r) => String(r.k));
  return (await ctx.db.execute({ sql, args: where.args })).rowsAffected;
}

/** A selection narrowed to some keys (the objects before-hooks ran for), or as it is. */
export function onlyKeys(s: CompiledSchema, where: SqlPart, only?: readonly string[]): SqlPart {
  if (!only) return where;
  return { sql: `(${where.sql}) AND t.${q(s.pk)} IN (SELECT value FROM json_each(?))`, args: [...where.args, JSON.stringify(only)] };
}

/** Keys of up to `limit` objects matching the conditions within the caller's update or delete scope. */
export async function matchingKeys(
  ctx: ApiContext,
  s: CompiledSchema,
  tree: Conditions,
  action: "update" | "delete",
  limit: number,
): Promise<string[]> {
  refuseOwnerOnly(ctx, s, tree);
  const where = compileSelection(s, tree, s.open[action] ? null : await access(ctx, s, action), action);
  const rs = await ctx.db.execute({
    sql: `SELECT t.${q(s.pk)} AS k FROM ${s.table} AS t WHERE ${where.sql} ORDER BY t.rowid LIMIT ?`,
    args: [...where.args, limit],
  });
  return rs.rows.map((r) => String(r.k));
}

/** How many objects match the conditions within the caller's read scope (the total a Content-Range reports). */
export async function countMatching(ctx: ApiContext, s: CompiledSchema, tree: Conditions): Promise<number> {
  refuseOwnerOnly(ctx, s, tree);
  const where = compileConditions(s, tree, await readScope(ctx, s));
  const rs = await ctx.db.execute({ sql: `SELECT count(*) AS n FROM ${s.table} AS t WHERE ${where.sql}`, args: where.args });
  return Number(rs.rows[0]!.n);
}

/**
 * Number of objects per schema the caller may read, each within its read scope, in one round trip. Schemas the
 * caller may not read at all are left out (the system principal of the status API reads every schema).
 */
export async function countObjects(ctx: ApiContext): Promise<Record<string, number>> {
  const counted: { name: string; sql: string; args: InValue[] }[] = [];
  for (const s of ctx.schemas.schemas.values()) {
    const readable = await readableScope(ctx, s);
    if (readable === null) continue;
    const scope = readable.scope;
    const sql = `SELECT count(*) AS n FROM ${s.table}`;
    counted.push(scope ? { name: s.name, sql: `${sql} AS t WHERE ${scope.sql}`, args: scope.args } : { name: s.name, sql, args: [] });
  }
  if (counted.length === 0) return {};
  const rs = await ctx.db.batch(
    counted.map(({ sql, args }) => ({ sql, args })),
    "read",
  );
  return Object.fromEntries(counted.map((c, i) => [c.name, Number(rs[i]!.rows[0]!.n)]));
}
