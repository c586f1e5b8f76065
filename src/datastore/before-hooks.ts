// Before-hooks on the datastore's write paths (docs/api/custom-code.md, "Hooks"): each runs before its write and
// outside the database's write lock, sees the object (an update: the object as it would be, the stored one, and
// what was sent), and may return the object to write instead - written as if the client had sent it - or refuse.
// A batch create runs them per object (a refused object is failed); an update or delete by query runs them per
// matching object, at most `maxPerQuery` of them. An internal of the Datastore.

import { ApiError, badRequest } from "../errors.ts";
import type { ApiContext } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { isKeyValue } from "../schema/values.ts";
import { isObject } from "./encode.ts";
import { matchingKeys } from "./find.ts";
import { MAX_BATCH, type Objects, newObjectId } from "./objects.ts";
import type { Conditions } from "./query/tree.ts";
import type { NodeHook } from "./upsert.ts";
import type { BulkRow } from "./bulk-insert.ts";
import { type HookSource, type WriteHooks, changeOf, createBody, proposedUpdate, updateBody, withoutPassword } from "./write-hooks.ts";

/** A batch's objects after their hooks: the body to create, or the refusal. */
export type HookedBatch = (unknown | ApiError)[];

export class BeforeHooks {
  constructor(
    private readonly objects: Objects,
    private readonly hooks: WriteHooks,
  ) {}

  private has(ctx: ApiContext, schema: string, event: string): CompiledSchema | null {
    const s = ctx.schemas.schemas.get(schema);
    return s && this.hooks.events(ctx, schema).includes(event) ? s : null;
  }

  /** The stored object as the server sees it (every field), or null when there is none. */
  private async stored(ctx: ApiContext, s: CompiledSchema, key: string): Promise<Record<string, unknown> | null> {
    try {
      return JSON.parse(await this.objects.get({ ...ctx, principal: { kind: "system" } }, s.name, key)) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  }

  /** beforeCreate (and, for a sign-up, beforeSignup) of one object: the body to create. */
  async create(ctx: ApiContext, schema: string, body: unknown, source: HookSource, signup: boolean): Promise<unknown> {
    if (!isObject(body)) return body;
    const create = this.has(ctx, schema, "beforeCreate");
    const signs = signup ? this.has(ctx, schema, "beforeSignup") : null;
    const s = create ?? signs;
    if (!s) return body;
    let sent: Record<string, unknown> = { ...body };
    // The hook sees the key the object will have.
    if (!isKeyValue(sent[s.pk]) && !s.def.user) sent[s.pk] = newObjectId();
    for (const event of [create && "beforeCreate", signs && "beforeSignup"])
      if (event) {
        const result = await this.hooks.before(ctx, changeOf(ctx, event, schema, withoutPassword(s, sent), null, source));
        sent = createBody(s, sent, result);
      }
    return sent;
  }

  /** The hooks of a batch, object by object (at once): each object's body, or its refusal. */
  createMany(ctx: ApiContext, schema: string, bodies: readonly unknown[], signup: boolean): Promise<HookedBatch> {
    return Promise.all(
      bodies.map((b) =>
        this.create(ctx, schema, b, "batch", signup).catch((e: unknown) => {
          if (e instanceof ApiError) return e;
          throw e;
        }),
      ),
    );
  }

  /** The before-hook of each object of a nested save (`check` refuses a schema past the hook depth). */
  nodeHook(ctx: ApiContext, posted: string, check: (schema: string) => void): NodeHook {
    return async (schema, id, body, exists) => {
      if (schema !== posted) check(schema);
      if (exists) return (await this.update(ctx, schema, id, body, "save")) as Record<string, unknown>;
      const pk = ctx.schemas.schemas.get(schema)?.pk;
      const sent = pk && !Object.hasOwn(body, pk) ? { ...body, [pk]: id } : body;
      return (await this.create(ctx, schema, sent, "save", false)) as Record<string, unknown>;
    };
  }

  /** The beforeCreate of each row of an import: the rows to insert, and the refused ones with the reason. */
  async importRows(
    ctx: ApiContext,
    schema: string,
    rows: readonly BulkRow[],
  ): Promise<{ hooked: BulkRow[]; refused: Map<BulkRow, string> }> {
    const refused = new Map<BulkRow, string>();
    const hooked: BulkRow[] = [];
    for (const row of rows) {
      try {
        hooked.push({ ...row, body: (await this.create(ctx, schema, row.body, "import", false)) as Record<string, unknown> });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const r = { ...row };
        refused.set(r, e.message);
        hooked.push(r);
      }
    }
    return { hooked, refused };
  }

  /** beforeUpdate of one object: the body to write (the body as sent when there is no hook or no object). */
  async update(ctx: ApiContext, schema: string, key: string, body: unknown, source: HookSource): Promise<unknown> {
    const s = this.has(ctx, schema, "beforeUpdate");
    if (!s || !isObject(body)) return body;
    const previous = await this.stored(ctx, s, key);
    if (!previous) return body;
    const proposed = proposedUpdate(previous, body, s);
    const result = await this.hooks.before(
      ctx,
      changeOf(ctx, "beforeUpdate", schema, proposed, previous, source, withoutPassword(s, body)),
    );
    return updateBody(s, body, proposed, result);
  }

  /**
   * A pull from an array or relationship field: the parent's beforeUpdate; with cascade, the beforeDelete of each
   * related object named (the cascade deletes them; source "cascade").
   */
  async pull(ctx: ApiContext, schema: string, key: string, field: string, values: readonly string[], cascade: boolean): Promise<void> {
    await this.update(ctx, schema, key, { [field]: { pull: values } }, "relationship");
    const related = cascade ? ctx.schemas.schemas.get(schema)?.fields.get(field)?.schema : undefined;
    if (related && values.length <= MAX_BATCH) for (const v of values) await this.remove(ctx, related, v, "cascade");
  }

  /** beforeDelete of one object (it can only refuse). */
  async remove(ctx: ApiContext, schema: string, key: string, source: HookSource): Promise<void> {
    const s = this.has(ctx, schema, "beforeDelete");
    if (!s) return;
    const previous = await this.stored(ctx, s, key);
    if (previous) await this.hooks.before(ctx, changeOf(ctx, "beforeDelete", schema, previous, previous, source));
  }

  /**
   * The hooks of an update or delete by query, per matching object: null when the schema has none (the write
   * goes on as one statement), else the keys of the objects they ran for (the write is then limited to them) and,
   * for updates, each one's body. Refused past `maxPerQuery` objects, or by any hook.
   */
  async byQuery(
    ctx: ApiContext,
    schema: string,
    conditions: Conditions,
    action: "update" | "delete",
    body: unknown,
  ): Promise<{ keys: string[]; bodies: Map<string, unknown> } | null> {
    const s = this.has(ctx, schema, action === "update" ? "beforeUpdate" : "beforeDelete");
    if (!s || (action === "update" && !isObject(body))) return null;
    const max = this.hooks.maxPerQuery(ctx);
    const keys = await matchingKeys(ctx, s, conditions, action, max + 1);
    if (keys.length > max)
      throw badRequest(
        `this ${action} by query matches more than ${max} objects of ${schema}, which has a before-hook run per object (setting code.hooks.maxPerQuery)`,
      );
    const bodies = new Map<string, unknown>();
    for (const key of keys)
      if (action === "update") bodies.set(key, await this.update(ctx, schema, key, body, "query"));
      else await this.remove(ctx, schema, key, "query");
    return { keys, bodies };
  }
}

/**
 * A batch's answer after its hooks: `sent` is what went to the create (null for a refused object), `r` what the
 * create answered for it; the answer lists keys created and, in their places, the labels the client gave the others
 * (its key, or its position).
 */
export function batchAnswer(
  pk: string | undefined,
  bodies: readonly unknown[],
  sent: readonly unknown[],
  r: { succeeded: string[]; failed: string[] },
): { succeeded: string[]; failed: string[] } {
  const label = (b: unknown, i: number) => (pk && isObject(b) && isKeyValue(b[pk]) ? (b[pk] as string) : String(i));
  const succeeded: string[] = [];
  const failed: string[] = [];
  let next = 0;
  sent.forEach((b, i) => {
    const key = pk && isObject(b) ? b[pk] : undefined;
    if (key !== undefined && r.succeeded[next] === key) succeeded.push(r.succeeded[next++]!);
    else failed.push(label(bodies[i], i));
  });
  return { succeeded, failed };
}
