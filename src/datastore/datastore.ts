// The one entry point to the datastore: every operation on objects (list, read, create, save, upsert, update,
// conditional update, update and delete by query, array and relationship sub-resources, imports, counts) takes the
// caller's ApiContext first and plain inputs (schema name, key, body, parsed query tree, relations map), never a
// Request, and checks access itself. The HTTP routes, the admin API and custom code's data service call it.
// Objects, Relations, upsert and find are its internals.

import type { InStatement } from "@libsql/core/api";
import type { Catalog } from "../schema/catalog.ts";
import type { Files } from "../files/files.ts";
import { ApiError, conflict, notFound } from "../errors.ts";
import { access } from "./access.ts";
import { isKeyValue } from "../schema/values.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { ApiContext } from "../request-context.ts";
import { type FindResult, countMatching, countObjects, deleteObjects, findObjects } from "./find.ts";
import { type JsonText, Objects } from "./objects.ts";
import { isObject } from "./encode.ts";
import type { ReadShape } from "./query/parse.ts";
import type { Conditions, QueryTree } from "./query/tree.ts";
import { Relations } from "./relations.ts";
import { updateMatching } from "./update-where.ts";
import { type BulkResult, type BulkRow, bulkInsert, restoreGeoIndex } from "./bulk-insert.ts";
import type { FieldDef } from "../schema/definition.ts";
import { hasNested, upsert } from "./upsert.ts";
import { BeforeHooks, batchAnswer } from "./before-hooks.ts";
import { type HookSource, type WriteHooks, hasHookWork, isSignup, refuseTooDeep, writingContext } from "./write-hooks.ts";
import { INC_RE } from "./encode.ts";

export type { FindResult } from "./find.ts";
export type { JsonText } from "./objects.ts";
export type { BulkResult, BulkRow } from "./bulk-insert.ts";
export { MAX_BATCH } from "./objects.ts";
export { MAX_PASSWORDS_PER_REQUEST } from "./encode.ts";
export { hasNested } from "./upsert.ts";
export type { HookChange, HookSource, WriteHooks } from "./write-hooks.ts";

/** Relationship paths to schemas for writes with nested objects or inferred relationship fields (X-Service-Relations). */
type RelationMap = ReadonlyMap<string, string>;

/** The keys of a batch create: created ones, and the keys (or positions) of the others, in posted order. */
interface BatchResult {
  succeeded: string[];
  failed: string[];
}

const NO_RELATIONS: RelationMap = new Map();

/** Whether an update body adds to a counter (`<field>[inc]`): its hooks' source is "counter". */
const isCounting = (body: unknown) => isObject(body) && Object.keys(body).some((k) => INC_RE.test(k));

/**
 * Told after users' sessions ended in the database (their objects were deleted by any path, or the private key or
 * custom code set a new password), so that sessions cached in memory go too; runs after the commit. Everything
 * stored of a deleted user already ended in the delete's transaction (the database's user-deletion triggers).
 */
export type SignedOutListener = (ctx: ApiContext, schema: string, keys: readonly string[]) => void | Promise<void>;

export class Datastore {
  private readonly objects: Objects;
  private readonly relations: Relations;
  private readonly signedOut: SignedOutListener[] = [];
  private hooks: WriteHooks | null = null;
  private before: BeforeHooks | null = null;

  /** Run the custom code's hooks on writes (the code layer wires itself here). */
  useHooks(hooks: WriteHooks): void {
    this.hooks = hooks;
    this.before = new BeforeHooks(this.objects, hooks);
  }

  private writing(ctx: ApiContext, schema: string, kind: HookSource, signup = false): ApiContext {
    return writingContext(this.hooks, ctx, schema, kind, signup);
  }

  private hooked(ctx: ApiContext, schema: string): boolean {
    return hasHookWork(this.hooks, ctx, schema);
  }

  /** Follow users whose sessions the datastore ended (the service layer wires the session caches to this). */
  onSignedOut(listener: SignedOutListener): void {
    this.signedOut.push(listener);
  }

  private async notifySignedOut(ctx: ApiContext, schema: string, keys: readonly string[]): Promise<void> {
    if (keys.length) for (const l of this.signedOut) await l(ctx, schema, keys);
  }

  constructor(
    private readonly catalog: Catalog,
    files: Files,
  ) {
    const signedOut = (ctx: ApiContext, schema: string, keys: readonly string[]) => this.notifySignedOut(ctx, schema, keys);
    this.objects = new Objects(catalog, files, signedOut);
    this.relations = new Relations(this.objects, signedOut);
  }

  /** Objects matching a query (conditions, select, expand, order, Range) within the caller's read scope. */
  async list(ctx: ApiContext, schema: string, tree: QueryTree): Promise<FindResult> {
    return findObjects(ctx, this.objects.schemaForRead(ctx, schema), tree);
  }

  /** One object by key, optionally narrowed (select) and expanded; 404 when missing or outside the read scope. */
  get(ctx: ApiContext, schema: string, key: string, shape: ReadShape | null = null): Promise<JsonText> {
    return this.objects.get(ctx, schema, key, shape);
  }

  /** Create one object (its JSON; 409 on a duplicate key), or a batch from an array (each object on its own). */
  create(ctx: ApiContext, schema: string, body: readonly unknown[], relations?: RelationMap): Promise<BatchResult>;
  create(ctx: ApiContext, schema: string, body: unknown, relations?: RelationMap): Promise<JsonText>;
  create(ctx: ApiContext, schema: string, body: unknown, relations: RelationMap = NO_RELATIONS): Promise<JsonText | BatchResult> {
    return Array.isArray(body) ? this.createBatch(ctx, schema, body, relations) : this.createOne(ctx, schema, body, relations, "api");
  }

  /** One create with its before-hooks (source: what kind of write asked for it). */
  private createOne(ctx: ApiContext, schema: string, body: unknown, relations: RelationMap, kind: HookSource): Promise<JsonText> {
    // Without hooks here (most writes): straight on, no extra promise.
    if (!this.hooked(ctx, schema)) return this.objects.create(ctx, schema, body, relations);
    return this.createOneHooked(ctx, schema, body, relations, kind);
  }

  private async createOneHooked(
    ctx: ApiContext,
    schema: string,
    body: unknown,
    relations: RelationMap,
    kind: HookSource,
  ): Promise<JsonText> {
    const signup = isSignup(ctx, schema);
    const c = this.writing(ctx, schema, kind, signup);
    const sent = this.before ? await this.before.create(c, schema, body, kind, signup) : body;
    return this.objects.create(c, schema, sent, relations);
  }

  /** A batch create: each object's before-hooks first (a refused object is failed, in its place). */
  private async createBatch(ctx: ApiContext, schema: string, bodies: readonly unknown[], relations: RelationMap): Promise<BatchResult> {
    const signup = isSignup(ctx, schema);
    const c = this.writing(ctx, schema, "batch", signup);
    if (!this.before || bodies.length === 0) return this.objects.createMany(c, schema, [...bodies], relations);
    const hooked = await this.before.createMany(c, schema, bodies, signup);
    if (hooked.every((b, i) => b === bodies[i])) return this.objects.createMany(c, schema, [...bodies], relations);
    // Refused objects go on as null (failed, keeping every position); answers use the labels the client gave.
    const sent = hooked.map((b) => (b instanceof ApiError ? null : b));
    const r = await this.objects.createMany(c, schema, sent, relations);
    return batchAnswer(ctx.schemas.schemas.get(schema)?.pk, bodies, sent, r);
  }

  /**
   * Create a user who signs in another way (a social link): as the server itself, no password needed; `then`
   * runs in the same transaction right after the insert (SocialLinks guards it to run only when the user was
   * created). The user's JSON, or null when the key is taken.
   */
  async createLinkedUser(ctx: ApiContext, schema: string, body: Record<string, unknown>, then: InStatement): Promise<JsonText | null> {
    const s = ctx.schemas.schemas.get(schema);
    if (!s?.def.user) throw notFound(`${schema} is not a user schema`);
    const c = this.writing(ctx, schema, "api", true);
    const sent = (this.before ? await this.before.create(c, schema, body, "api", true) : body) as Record<string, unknown>;
    const w = await this.objects.prepareCreate({ ...c, principal: { kind: "system" } }, s, sent, "json", true);
    const [rs] = await this.objects.run(c, [{ ...w, stmts: [...w.stmts, then] }]);
    return rs!.rows.length === 0 ? null : (rs!.rows[0]!.j as JsonText);
  }

  /**
   * Create or update objects with nested related objects (up to 3 levels) in one transaction. One posted object
   * answers 201 when it was created and 200 when it existed; an array answers 200 with every object.
   */
  upsert(
    ctx: ApiContext,
    schema: string,
    body: unknown,
    relations: RelationMap = NO_RELATIONS,
  ): Promise<{ status: number; body: JsonText }> {
    return this.upsertHooked(ctx, schema, body, relations);
  }

  /** A nested save: every object's before-hook (create or update) runs before the one transaction. */
  private upsertHooked(
    ctx: ApiContext,
    schema: string,
    body: unknown,
    relations: RelationMap,
  ): Promise<{ status: number; body: JsonText }> {
    const c = this.writing(ctx, schema, "save");
    const hook = this.before?.nodeHook(c, schema, (s) => refuseTooDeep(ctx, s, this.hooks!.events(ctx, s)));
    return upsert(this.objects, c, schema, body, relations, hook);
  }

  /**
   * The save of one object (a POST carrying X-Service-Relations, as the original SDKs' model save sends it): an
   * existing key is updated as PUT updates it (the update permission and scope apply; `[inc]` adds; createddate is
   * kept) and answers 200, a new key is created (201). Nested objects go through `upsert`. A key the caller may not
   * update is refused as a create would refuse it (409, or the create permission's own refusal), so a save tells
   * nothing a create would not. A password is changed only by callers allowed to change it with PUT (the private
   * key, the server); from others it is ignored on an update (model saves send the whole object).
   */
  async save(
    ctx: ApiContext,
    schema: string,
    body: unknown,
    relations: RelationMap = NO_RELATIONS,
  ): Promise<{ status: number; body: JsonText }> {
    if (hasNested(body)) return this.upsertHooked(ctx, schema, body, relations);
    const s = ctx.schemas.schemas.get(schema);
    const key = s && isObject(body) && isKeyValue(body[s.pk]) ? (body[s.pk] as string) : undefined;
    if (s === undefined || key === undefined) return { status: 201, body: await this.createOne(ctx, schema, body, relations, "save") };
    // A create and an update racing on the key: the loser of the create tries the update once more.
    for (let attempt = 0; ; attempt++) {
      if (await this.objects.exists(ctx, s, key))
        return { status: 200, body: await this.saveUpdate(ctx, s, key, body as Record<string, unknown>, relations) };
      try {
        return { status: 201, body: await this.createOne(ctx, schema, body, relations, "save") };
      } catch (e) {
        if (attempt > 0 || !(e instanceof ApiError) || e.status !== 409) throw e;
      }
    }
  }

  /** The update half of a save: PUT's update, its refusals turned into what a create of that key would answer. */
  private async saveUpdate(
    ctx: ApiContext,
    s: CompiledSchema,
    key: string,
    body: Record<string, unknown>,
    relations: RelationMap,
  ): Promise<JsonText> {
    const trusted = ctx.principal.kind === "app" || ctx.principal.kind === "system";
    const changes =
      s.passwordField && !trusted && Object.hasOwn(body, s.passwordField)
        ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== s.passwordField))
        : body;
    try {
      return await this.updateOne(ctx, s.name, key, changes, relations, "save");
    } catch (e) {
      if (!(e instanceof ApiError) || ![401, 403, 404, 405].includes(e.status)) throw e;
      await access(ctx, s, "create");
      throw conflict(`Duplicate key for schema ${s.name}: ${JSON.stringify(key)}`);
    }
  }

  /** Partial update within the caller's update scope (`<field>[inc]` adds atomically); the whole object. */
  update(ctx: ApiContext, schema: string, key: string, body: unknown, relations: RelationMap = NO_RELATIONS): Promise<JsonText> {
    return this.updateOne(ctx, schema, key, body, relations, isCounting(body) ? "counter" : "api");
  }

  private updateOne(
    ctx: ApiContext,
    schema: string,
    key: string,
    body: unknown,
    relations: RelationMap,
    kind: HookSource,
  ): Promise<JsonText> {
    if (!this.hooked(ctx, schema)) return this.objects.update(ctx, schema, key, body, relations);
    return this.updateOneHooked(ctx, schema, key, body, relations, kind);
  }

  private async updateOneHooked(
    ctx: ApiContext,
    schema: string,
    key: string,
    body: unknown,
    relations: RelationMap,
    kind: HookSource,
  ): Promise<JsonText> {
    const c = this.writing(ctx, schema, kind);
    const sent = this.before ? await this.before.update(c, schema, key, body, kind) : body;
    return this.objects.update(c, schema, key, sent, relations);
  }

  /**
   * The update of `update`, made only when the object also matches the conditions, checked in the same
   * statement; the whole object, or null when it does not exist, is outside the update scope or does not match.
   */
  async updateIf(ctx: ApiContext, schema: string, key: string, body: unknown, conditions: Conditions): Promise<JsonText | null> {
    const kind = isCounting(body) ? "counter" : "api";
    const c = this.writing(ctx, schema, kind);
    const sent = this.before ? await this.before.update(c, schema, key, body, kind) : body;
    return this.objects.updateIf(c, schema, key, sent, conditions);
  }

  /**
   * Apply one body (fields, `<field>[inc]`) to every object matching the conditions within the caller's update
   * scope, in one transaction; how many changed. At least one condition; no uploads or passwords. With a
   * before-hook, only the objects it ran for change, and one whose hook changed its body is updated on its own.
   */
  async updateWhere(ctx: ApiContext, schema: string, conditions: Conditions, body: unknown): Promise<number> {
    const c = this.writing(ctx, schema, "query");
    const hooked = this.before ? await this.before.byQuery(c, schema, conditions, "update", body) : null;
    if (!hooked) return updateMatching(this.objects, c, schema, conditions, body);
    const plain = hooked.keys.filter((k) => hooked.bodies.get(k) === body);
    let changed = plain.length ? await updateMatching(this.objects, c, schema, conditions, body, plain) : 0;
    for (const k of hooked.keys)
      if (hooked.bodies.get(k) !== body && (await this.objects.updateIf(c, schema, k, hooked.bodies.get(k), conditions)) !== null)
        changed++;
    return changed;
  }

  /** Delete one object within the caller's delete scope; 404 when there is none to delete. */
  async remove(ctx: ApiContext, schema: string, key: string): Promise<void> {
    const c = this.writing(ctx, schema, "api");
    await this.before?.remove(c, schema, key, "api");
    await this.objects.remove(c, schema, key);
    if (ctx.schemas.schemas.get(schema)?.def.user) await this.notifySignedOut(ctx, schema, [key]);
  }

  /**
   * Delete every object matching the conditions within the caller's delete scope, then empty the file trash
   * when the schema has binary fields; how many were deleted. The single-key form (`<key>=<id>` alone) keeps
   * the 404 of a missing object unless `missingKeyIs404` is false (then it answers 0). With a before-hook, only
   * the objects it ran for are deleted.
   */
  async removeWhere(ctx: ApiContext, schema: string, where: Conditions, { missingKeyIs404 = true } = {}): Promise<number> {
    const s = ctx.schemas.schemas.get(schema);
    if (!s) throw notFound("This object does not exist");
    const c = this.writing(ctx, schema, "query");
    const only = this.before ? (await this.before.byQuery(c, schema, where, "delete", null))?.keys : undefined;
    let deleted: number;
    if (s.def.user) {
      const keys = await deleteObjects(c, s, where, true, only);
      deleted = keys.length;
      await this.notifySignedOut(ctx, schema, keys);
    } else deleted = await deleteObjects(c, s, where, false, only);
    await this.objects.afterDelete(c, [s]);
    const first = where.where[0];
    const single = !where.or && where.where.length === 1 && first!.field === s.pk && first!.op === "eq";
    if (single && deleted === 0 && missingKeyIs404) throw notFound("This object does not exist");
    return deleted;
  }

  /** Append values to an array field, or keys of existing objects to a relationship field; the whole object. */
  async append(ctx: ApiContext, schema: string, key: string, field: string, values: unknown): Promise<JsonText> {
    const c = this.writing(ctx, schema, "relationship");
    await this.before?.update(c, schema, key, { [field]: values }, "relationship");
    return this.relations.append(c, schema, key, field, values);
  }

  /** Remove values (or references) from a field; with cascade, delete the related objects whose references went. */
  async pull(ctx: ApiContext, schema: string, key: string, field: string, values: string[], cascade = false): Promise<void> {
    const c = this.writing(ctx, schema, "relationship");
    await this.before?.pull(c, schema, key, field, values, cascade);
    return this.relations.pull(c, schema, key, field, values, cascade);
  }

  /** Create related objects (one or an array) and append the created keys to the relationship field. */
  async createRelated(ctx: ApiContext, schema: string, key: string, field: string, body: unknown): Promise<BatchResult> {
    const c = this.writing(ctx, schema, "relationship");
    const related = ctx.schemas.schemas.get(schema)?.fields.get(field)?.schema ?? null;
    let sent = body;
    if (this.before && related) {
      refuseTooDeep(ctx, related, this.hooks!.events(ctx, related));
      const list = Array.isArray(body) ? body : [body];
      const hooked = await Promise.all(list.map((b) => this.before!.create(c, related, b, "relationship", false)));
      sent = Array.isArray(body) ? hooked : hooked[0];
    }
    return this.relations.createRelated(c, schema, key, field, sent);
  }

  /**
   * Import: insert rows as they are (keys, createddate, lastmoddate, sm_owner kept) with the checks of a create,
   * in one transaction together with `extra` statements (the import's checkpoint). Bad rows and existing keys
   * are rejected one by one; development infers missing fields (`declared` gives definitions to use for some).
   * Geo queries miss the rows of geopoint schemas until finishImport. With `live` the rows reach live streams as
   * creates; by default they are not written to the change log. With `hooks` each row runs beforeCreate (a refusal
   * rejects it) and queues its after-hooks; by default imports run no hooks.
   */
  async importRows(
    ctx: ApiContext,
    schema: string,
    rows: BulkRow[],
    declared: ReadonlyMap<string, FieldDef> = new Map(),
    extra: readonly InStatement[] = [],
    live = false,
    hooks = false,
  ): Promise<BulkResult> {
    if (!hooks) return bulkInsert(this.catalog, ctx, schema, rows, declared, extra, live);
    // With hooks: each row goes through beforeCreate (a refusal rejects the row) and queues its after-hooks.
    const c = this.writing({ ...ctx, origin: "import" }, schema, "import");
    const { hooked, refused } = this.before ? await this.before.importRows(c, schema, rows) : { hooked: rows, refused: new Map() };
    return bulkInsert(this.catalog, c, schema, hooked, declared, extra, live, true, refused);
  }

  /**
   * End an import into a schema: geo queries find the imported objects again (importRows defers their R*Tree
   * entries). Also repairs what an interrupted import left; a no-op when nothing is pending.
   */
  finishImport(ctx: ApiContext, schema: string): Promise<void> {
    return restoreGeoIndex(ctx, schema);
  }

  /** How many objects match the conditions within the caller's read scope. */
  count(ctx: ApiContext, schema: string, conditions: Conditions): Promise<number> {
    return countMatching(ctx, this.objects.schemaForRead(ctx, schema), conditions);
  }

  /** Objects per schema the caller may read (within each read scope); the status API counts everything. */
  counts(ctx: ApiContext): Promise<Record<string, number>> {
    return countObjects(ctx);
  }
}
