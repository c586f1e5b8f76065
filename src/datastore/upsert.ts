// POST /<schema> with X-Service-Relations and nested objects: every object (nested up to 3 levels, and the
// parent) is created when its key is new and updated when it exists, in one transaction. The answer is the
// parent with its nested objects in place. An internal of the Datastore (datastore.ts).

import type { InStatement } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { isKeyValue } from "../schema/values.ts";
import { type ApiContext, ownerOf } from "../request-context.ts";
import { access, andScope } from "./access.ts";
import { objectSql } from "./viewer.ts";
import type { SqlPart } from "./query/compile.ts";
import { type JsonText, MAX_BATCH, MAX_SAFE, type Objects, type PreparedWrite, incOverflow, newObjectId } from "./objects.ts";
import { isObject, limitPasswords, verificationReset } from "./encode.ts";

type Obj = Record<string, unknown>;

interface Node {
  schema: string;
  /** Path of the relationship that led here ("" for the posted objects). */
  path: string;
  /** The body with nested objects replaced by their keys. */
  body: Obj;
  id: string;
  /** field -> nested node(s); arrays may mix nodes and plain keys. */
  children: Map<string, Node | (Node | string)[]>;
}

/** Whether a body holds nested objects (other than geopoints, which are {lat, lon}). */
export function hasNested(body: unknown): boolean {
  const objs = Array.isArray(body) ? body : [body];
  return objs.some(
    (o) => isObject(o) && Object.values(o).some((v) => (isObject(v) && !isGeo(v)) || (Array.isArray(v) && v.some(isObject))),
  );
}

const isGeo = (v: Obj) => Object.keys(v).every((k) => k === "lat" || k === "lon" || k === "distance") && "lat" in v;

function relationsBelow(relations: ReadonlyMap<string, string>, path: string): Map<string, string> {
  const out = new Map<string, string>();
  const prefix = path ? `${path}.` : "";
  for (const [p, s] of relations) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    if (!rest.includes(".")) out.set(rest, s);
  }
  return out;
}

function build(
  schema: string,
  path: string,
  o: Obj,
  pk: (schema: string) => string,
  relations: ReadonlyMap<string, string>,
  nodes: Node[],
): Node {
  const body: Obj = { ...o };
  const children = new Map<string, Node | (Node | string)[]>();
  const here = relationsBelow(relations, path);
  for (const [k, v] of Object.entries(o)) {
    const nested = (isObject(v) && !isGeo(v)) || (Array.isArray(v) && v.some(isObject));
    if (!nested) continue;
    const childPath = path ? `${path}.${k}` : k;
    const target = here.get(k);
    if (!target) throw badRequest(`${childPath} holds a nested object; list it in X-Service-Relations (${childPath}=<schema>)`);
    if (isObject(v)) {
      const child = build(target, childPath, v, pk, relations, nodes);
      children.set(k, child);
      body[k] = child.id;
    } else {
      const list = (v as unknown[]).map((item) => {
        if (isObject(item)) return build(target, childPath, item, pk, relations, nodes);
        if (isKeyValue(item)) return item;
        throw badRequest(`${childPath} mixes objects with values that are neither objects nor keys`);
      });
      children.set(k, list);
      body[k] = list.map((x) => (typeof x === "string" ? x : x.id));
    }
  }
  const key = pk(schema);
  const id = isKeyValue(body[key]) ? (body[key] as string) : newObjectId();
  body[key] = id;
  const node: Node = { schema, path, body, id, children };
  nodes.push(node);
  return node;
}

/** Runs an object's before-hook (create or update): the body to write. */
export type NodeHook = (schema: string, id: string, body: Obj, exists: boolean) => Promise<Obj>;

export async function upsert(
  objects: Objects,
  ctx: ApiContext,
  name: string,
  posted: unknown,
  relations: ReadonlyMap<string, string>,
  hook?: NodeHook,
): Promise<{ status: number; body: JsonText }> {
  const list = Array.isArray(posted) ? posted : [posted];
  if (list.length === 0 || list.length > MAX_BATCH) throw badRequest(`send 1 to ${MAX_BATCH} objects`);
  if (!list.every(isObject)) throw badRequest("the request body must be a JSON object or an array of objects");
  const known = new Map<string, CompiledSchema>();
  const pk = (schema: string) => known.get(schema)?.pk ?? ctx.schemas.schemas.get(schema)?.pk ?? `${schema}_id`;
  const nodes: Node[] = [];
  const roots = list.map((o) => build(name, "", o, pk, relations, nodes));

  // Inference and validation per schema and level, parents first (a parent's relationship field must exist
  // before its objects are written; inference also creates missing target schemas).
  const groups = new Map<string, Node[]>();
  for (const n of [...nodes].sort((a, b) => a.path.split(".").length - b.path.split(".").length)) {
    const g = `${n.schema}|${n.path}`;
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g)!.push(n);
  }
  for (const group of groups.values()) {
    const { schema, path } = group[0]!;
    const here = relationsBelow(relations, path);
    const s = await objects.schemaForWrite(
      ctx,
      schema,
      group.map((n) => n.body),
      here,
      true,
    );
    known.set(schema, s);
    for (const [field, target] of here) {
      const def = s.fields.get(field);
      if (def && (def.type !== "relationship" || def.schema !== target))
        throw badRequest(
          `X-Service-Relations names ${path ? `${path}.` : ""}${field}=${target}, but ${schema}.${field} is ${def.type === "relationship" ? `a relationship to ${def.schema}` : `a ${def.type} field`}`,
        );
    }
  }

  // Access control per schema: new objects need the create permission, existing ones the update permission
  // and must be inside the caller's update scope (checked here, and again in the statement's DO UPDATE WHERE).
  const scopes = new Map<string, SqlPart | null>();
  const existingOf = new Map<string, Set<string>>();
  for (const schema of new Set(nodes.map((n) => n.schema))) {
    const s = known.get(schema)!;
    limitPasswords(
      ctx,
      s,
      nodes.filter((n) => n.schema === schema).map((n) => n.body),
    );
    const ids = [...new Set(nodes.filter((n) => n.schema === schema).map((n) => n.id))];
    const inIds = `t.${q(s.pk)} IN (SELECT value FROM json_each(?))`;
    const existing = new Set(
      (await ctx.db.execute({ sql: `SELECT t.${q(s.pk)} AS k FROM ${s.table} AS t WHERE ${inIds}`, args: [JSON.stringify(ids)] })).rows.map(
        (r) => r.k as string,
      ),
    );
    existingOf.set(schema, existing);
    if (ids.some((id) => !existing.has(id))) await access(ctx, s, "create");
    let scope: SqlPart | null = null;
    if (existing.size) {
      scope = await access(ctx, s, "update");
      if (scope) {
        const where = andScope(inIds, [JSON.stringify([...existing])], scope);
        const visible = await ctx.db.execute({ sql: `SELECT count(*) AS n FROM ${s.table} AS t WHERE ${where.sql}`, args: where.args });
        if (Number(visible.rows[0]!.n) !== existing.size) throw notFound();
      }
    }
    scopes.set(schema, scope);
  }

  // Each object's before-hook (beforeCreate or beforeUpdate), before anything is written.
  if (hook) for (const n of nodes) n.body = await hook(n.schema, n.id, n.body, existingOf.get(n.schema)?.has(n.id) ?? false);

  // One statement per object, children before parents, all in one transaction.
  const now = Date.now();
  const writes: PreparedWrite[] = [];
  const order: Node[] = [];
  try {
    for (const n of nodes) {
      const s = known.get(n.schema)!;
      writes.push(await prepareUpsert(objects, ctx, s, n, now, scopes.get(n.schema) ?? null));
      order.push(n);
    }
  } catch (e) {
    await objects.files.discard(
      ctx.env,
      writes.flatMap((w) => w.saved),
    );
    throw e;
  }
  const results = objects.objectResults(writes, await objects.run(ctx, writes));
  const rendered = new Map<Node, Obj>();
  order.forEach((n, i) => {
    const row = results[i]!.rows[0];
    // Only possible when an object left the caller's scope between the check above and the write.
    if (!row) throw conflict(`${n.schema} ${JSON.stringify(n.id)} changed while it was being upserted; try again`);
    rendered.set(n, JSON.parse(row.j as string) as Obj);
  });
  // Inserted rows have createddate = lastmoddate = now; an update always moves lastmoddate past createddate
  // (max(lastmoddate + 1, now)), so an object created earlier in the same millisecond still counts as existing.
  const created = new Map<Node, boolean>(
    order.map((n, i) => {
      const row = results[i]!.rows[0]!;
      return [n, Number(row.c) === now && Number(row.m) === now];
    }),
  );
  const assemble = (n: Node): Obj => {
    const o = rendered.get(n)!;
    for (const [field, child] of n.children)
      o[field] = Array.isArray(child) ? child.map((c) => (typeof c === "string" ? c : assemble(c))) : assemble(child);
    return o;
  };
  const out = roots.map(assemble);
  if (!Array.isArray(posted)) return { status: created.get(roots[0]!) ? 201 : 200, body: JSON.stringify(out[0]) };
  return { status: 200, body: JSON.stringify(out) };
}

/**
 * INSERT ... ON CONFLICT(key) DO UPDATE of the fields the body sets (a password is only set on create). A counter
 * (`<field>[inc]: n`) is set to n on a new object and adds n atomically to an existing one, within ±(2^53−1).
 */
async function prepareUpsert(
  objects: Objects,
  ctx: ApiContext,
  s: CompiledSchema,
  n: Node,
  now: number,
  scope: SqlPart | null,
): Promise<PreparedWrite> {
  const enc = await objects.encode(ctx, s, n.body, "create");
  try {
    await checkCounters(ctx, s, n.id, enc.incs);
  } catch (e) {
    await objects.files.discard(ctx.env, enc.saved);
    throw e;
  }
  for (const [f, by] of enc.incs) enc.values.set(f, [by]); // inserted as n; added on conflict (below)
  const cols = s.columns;
  const args = [n.id];
  for (const fc of s.fieldColumns) args.push(...((enc.values.get(fc.name) ?? fc.cols.map(() => null)) as string[]));
  args.push(now as never, now as never, (enc.owner !== undefined ? enc.owner || null : ownerOf(ctx.principal)) as never);
  const plain = s.fieldColumns.filter((fc) => enc.values.has(fc.name) && fc.def.type !== "password" && !enc.incs.has(fc.name));
  const sets = plain.flatMap((fc) => fc.cols.map((c) => `${q(c)} = excluded.${q(c)}`));
  const sum = (f: string) => `COALESCE(t.${q(f)}, 0) + excluded.${q(f)}`;
  for (const f of enc.incs.keys()) sets.push(`${q(f)} = ${sum(f)}`);
  if (enc.owner !== undefined) sets.push(`"sm_owner" = excluded."sm_owner"`);
  const reset = s.def.user?.email ? verificationReset(s, enc, `excluded.${q(s.def.user.email)}`) : null;
  if (reset) sets.push(reset);
  sets.push(`"lastmoddate" = max("lastmoddate" + 1, excluded."lastmoddate")`);
  const guards = [...(scope ? [scope.sql] : []), ...[...enc.incs.keys()].map((f) => `abs(${sum(f)}) <= ${MAX_SAFE}`)];
  const answer = objectSql(ctx, s, null);
  const stmt: InStatement = {
    sql: `INSERT INTO ${s.table} AS t (${cols.map(q).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})
          ON CONFLICT(${q(s.pk)}) DO UPDATE SET ${sets.join(", ")}${guards.length ? ` WHERE ${guards.join(" AND ")}` : ""} RETURNING ${answer.sql} AS j, "createddate" AS c, "lastmoddate" AS m`,
    args: [...args, ...(scope ? scope.args : []), ...answer.args],
  };
  if (s.passwordField && !enc.values.get(s.passwordField)?.[0]) {
    // A new user needs a password; an existing one keeps theirs. Refuse only when the object is new.
    const exists = await ctx.db.execute({ sql: `SELECT 1 FROM ${s.table} WHERE ${q(s.pk)} = ?`, args: [n.id] });
    if (exists.rows.length === 0) {
      await objects.files.discard(ctx.env, enc.saved);
      throw badRequest(`${s.passwordField} is required to create a ${s.name}`);
    }
  }
  return { id: n.id, stmts: [stmt, ...enc.saved.map((f) => objects.files.fileRow(s.name, n.id, f))], saved: enc.saved };
}

/**
 * 400 when adding a counter to the existing object would pass ±(2^53−1). Checked before the transaction; the
 * statement's DO UPDATE WHERE checks again, so a concurrent change can never push a counter past the limit.
 */
async function checkCounters(ctx: ApiContext, s: CompiledSchema, id: string, incs: ReadonlyMap<string, number>): Promise<void> {
  if (incs.size === 0) return;
  const fields = [...incs.keys()];
  const rs = await ctx.db.execute({
    sql: `SELECT ${fields.map((f) => `${q(f)} AS ${q(f)}`).join(", ")} FROM ${s.table} WHERE ${q(s.pk)} = ?`,
    args: [id],
  });
  const row = rs.rows[0];
  if (row && fields.some((f) => Math.abs(Number(row[f] ?? 0) + incs.get(f)!) > MAX_SAFE)) throw incOverflow(fields);
}
