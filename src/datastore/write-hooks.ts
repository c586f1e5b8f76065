// What the datastore knows of hooks (docs/api/custom-code.md, "Hooks"): the WriteHooks interface the code layer
// implements (which hooks a schema has for the caller's code, running a before-hook), the change object a hook
// gets, how a changed object a before-hook returns becomes the body written (as if the client had sent it), the
// depth limit, and the write context: a write in an environment with after-hooks carries who wrote it, how and
// from where into its own transaction (a client wrapper puts the context row first and clears it last), where the
// database's triggers read it when they queue after-hooks (src/schema/hook-queue-sql.ts).

import type { Client, InStatement, ResultSet, Transaction, TransactionMode } from "@libsql/core/api";
import { ApiError } from "../errors.ts";
import { type ApiContext, type AuthKind, authKind } from "../request-context.ts";
import { writeContextSql } from "../schema/hook-queue-sql.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { IGNORED_ON_WRITE, INC_RE } from "./encode.ts";

/** What a write was, as a hook's `change.source` says (the console, custom code and imports say only that). */
export type HookSource = "api" | "batch" | "save" | "counter" | "relationship" | "query" | "cascade" | "console" | "code" | "import";

/** A hook's argument. `changes`: what the client sent (updates). */
export interface HookChange {
  event: string;
  schema: string;
  object: Record<string, unknown>;
  previous: Record<string, unknown> | null;
  changes?: Record<string, unknown>;
  user: string | null;
  auth: AuthKind;
  source: HookSource;
}

export interface WriteHooks {
  /** The hooks the caller's code (its environment and version) exports for a schema; empty when none. */
  events(ctx: ApiContext, schema: string): readonly string[];
  /** Whether the caller's environment queues after-hooks at all (then its writes carry their context). */
  queuesAfterHooks(ctx: ApiContext): boolean;
  /**
   * Run a before-hook: the object it returned (to be written instead), or undefined to write as sent. Throws
   * ApiError: the hook's own refusal (its status and message), or 500 when it failed or ran out of time.
   */
  before(ctx: ApiContext, change: HookChange): Promise<Record<string, unknown> | undefined>;
  /** Objects an update or delete by query may touch when its schema has a before-hook. */
  maxPerQuery(ctx: ApiContext): number;
  /** A client's write that queues after-hooks: a promise to wait on first while the queue is far behind. */
  admit(ctx: ApiContext): Promise<void> | undefined;
}

/** Hooks run for a client's write (depth 1), for writes their code makes (2), and for those writes' (3); no deeper. */
export const MAX_HOOK_DEPTH = 3;

/** The source a write reports: the console, code or an import as such, else what kind of API write it was. */
export function sourceOf(ctx: ApiContext, kind: HookSource): HookSource {
  return ctx.origin ?? kind;
}

/** 400 for a write that would run hooks past the depth limit (a hook writing what runs it again, say). */
export function refuseTooDeep(ctx: ApiContext, schema: string, events: readonly string[]): void {
  if (events.length > 0 && (ctx.hookDepth ?? 0) >= MAX_HOOK_DEPTH)
    throw new ApiError(
      400,
      `hooks nested too deep: this write of ${schema} was made by a hook at depth ${MAX_HOOK_DEPTH} and would run ${schema}'s hooks again (hooks run to a depth of ${MAX_HOOK_DEPTH})`,
    );
}

/**
 * The context a write of `schema` runs in: refused past the hook depth; in an environment with after-hooks, a
 * database client that writes the write's context into its transaction (withWriteContext).
 */
export function writingContext(hooks: WriteHooks | null, ctx: ApiContext, schema: string, kind: HookSource, signup = false): ApiContext {
  if (!hooks) return ctx;
  refuseTooDeep(ctx, schema, hooks.events(ctx, schema));
  return hooks.queuesAfterHooks(ctx) ? withWriteContext(ctx, schema, sourceOf(ctx, kind), signup, () => hooks.admit(ctx)) : ctx;
}

/** Whether a write of `schema` by this caller has anything to do with hooks (its own, or the after-hook queue). */
export function hasHookWork(hooks: WriteHooks | null, ctx: ApiContext, schema: string): boolean {
  return hooks !== null && (hooks.events(ctx, schema).length > 0 || hooks.queuesAfterHooks(ctx));
}

/** Whether a create of `schema` by this caller is a sign-up (the public creating an account). */
export function isSignup(ctx: ApiContext, schema: string): boolean {
  return ctx.principal.kind === "anonymous" && ctx.schemas.schemas.get(schema)?.def.user !== undefined;
}

/** The change object of a hook call. */
export function changeOf(
  ctx: ApiContext,
  event: string,
  schema: string,
  object: Record<string, unknown>,
  previous: Record<string, unknown> | null,
  source: HookSource,
  changes?: Record<string, unknown>,
): HookChange {
  const user = ctx.principal.kind === "user" ? ctx.principal.username : null;
  return { event, schema, object, previous, ...(changes ? { changes } : {}), user, auth: authKind(ctx), source: sourceOf(ctx, source) };
}

/** A copy of a body without the password field: hooks never see a password in clear text. */
export function withoutPassword(s: CompiledSchema, body: Record<string, unknown>): Record<string, unknown> {
  if (!s.passwordField || !Object.hasOwn(body, s.passwordField)) return { ...body };
  const { [s.passwordField]: _, ...rest } = body;
  return rest;
}

/**
 * The body a create writes after its before-hook returned `result`: the returned object as the client's body,
 * with the key it was given and the password it was sent (the hook never saw it) unless the hook set either.
 */
export function createBody(
  s: CompiledSchema,
  sent: Record<string, unknown>,
  result: Record<string, unknown> | undefined,
): Record<string, unknown> {
  if (result === undefined) return sent;
  const out = { ...result };
  if (!Object.hasOwn(out, s.pk) && Object.hasOwn(sent, s.pk)) out[s.pk] = sent[s.pk];
  if (s.passwordField && !Object.hasOwn(out, s.passwordField) && Object.hasOwn(sent, s.passwordField))
    out[s.passwordField] = sent[s.passwordField];
  return out;
}

/** The object an update would leave: the stored one with the sent fields set, cleared or counted on. */
export function proposedUpdate(
  previous: Record<string, unknown>,
  body: Record<string, unknown>,
  s: CompiledSchema,
): Record<string, unknown> {
  const out = { ...previous };
  for (const [k, v] of Object.entries(body)) {
    const inc = INC_RE.exec(k);
    if (inc) {
      const f = inc[1]!;
      out[f] = (typeof out[f] === "number" ? (out[f] as number) : 0) + (typeof v === "number" ? v : 0);
    } else if (k === s.passwordField || IGNORED_ON_WRITE.has(k) || k === s.pk) continue;
    else if (v === null || v === "NULL") delete out[k];
    else out[k] = v;
  }
  return out;
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The body an update writes after its before-hook returned `result` (the object as it wants it stored): fields it
 * left as proposed keep what the client sent (a counter stays an atomic `[inc]`), fields it changed are set, fields
 * it removed are cleared; automatic fields and the key cannot be changed this way.
 */
export function updateBody(
  s: CompiledSchema,
  sent: Record<string, unknown>,
  proposed: Record<string, unknown>,
  result: Record<string, unknown> | undefined,
): Record<string, unknown> {
  if (result === undefined) return sent;
  const out: Record<string, unknown> = {};
  const fixed = (k: string) => k === s.pk || IGNORED_ON_WRITE.has(k);
  for (const [k, v] of Object.entries(sent)) {
    const inc = INC_RE.exec(k);
    const f = inc ? inc[1]! : k;
    if (k === s.passwordField || (Object.hasOwn(result, f) && same(result[f], proposed[f])) || fixed(f)) out[k] = v;
  }
  for (const [k, v] of Object.entries(result)) {
    if (fixed(k) || k === s.passwordField) {
      if (k === s.passwordField) out[k] = v;
      continue;
    }
    if (!same(v, proposed[k])) {
      delete out[`${k}[inc]`];
      out[k] = v;
    }
  }
  for (const k of Object.keys(proposed)) if (!fixed(k) && !Object.hasOwn(result, k)) out[k] = null;
  return out;
}

/** Whether a statement writes (the wrapper puts the context before those only). */
function writes(sql: string): boolean {
  return /^\s*(insert|update|delete|replace|with)\b/i.test(sql);
}

const sqlOf = (s: InStatement | [string, unknown?]) => (typeof s === "string" ? s : Array.isArray(s) ? s[0] : s.sql);

/**
 * The caller's context with a database client whose writes carry the write context: a write statement runs as a
 * batch (context, statement, clear), a write batch gets the context first and the clear last, and a write
 * transaction sets it at its start and clears it before its commit.
 */
export function withWriteContext(
  ctx: ApiContext,
  schema: string,
  source: HookSource,
  signup = false,
  admit?: () => Promise<void> | undefined,
): ApiContext {
  const c = writeContextSql({
    schema,
    user: ctx.principal.kind === "user" ? ctx.principal.username : null,
    auth: authKind(ctx),
    source,
    depth: ctx.hookDepth ?? 0,
    version: ctx.version,
    signup,
  });
  const db = ctx.db;
  // Writes made by hooks never wait for the queue (that would wait on itself).
  const gate = (ctx.hookDepth ?? 0) === 0 ? admit : undefined;
  const wrapped = {
    get closed() {
      return db.closed;
    },
    get protocol() {
      return db.protocol;
    },
    close: () => db.close(),
    sync: () => db.sync(),
    executeMultiple: (sql: string) => db.executeMultiple(sql),
    migrate: (stmts: InStatement[]) => db.migrate(stmts),
    execute: async (stmt: InStatement | string, args?: unknown) => {
      const s: InStatement = typeof stmt === "string" ? (args === undefined ? stmt : { sql: stmt, args: args as never }) : stmt;
      if (!writes(sqlOf(s))) return db.execute(s);
      const wait = gate?.();
      if (wait) await wait;
      const rs = await db.batch([c.set, s, c.clear], "write");
      return rs[1]!;
    },
    batch: async (stmts: InStatement[], mode?: TransactionMode) => {
      if (mode === "read" || !stmts.some((s) => writes(sqlOf(s)))) return db.batch(stmts, mode);
      const wait = gate?.();
      if (wait) await wait;
      const rs = await db.batch([c.set, ...stmts, c.clear], mode ?? "write");
      return rs.slice(1, -1);
    },
    transaction: async (mode?: TransactionMode) => {
      const wait = mode === "read" ? undefined : gate?.();
      if (wait) await wait;
      const tx = await db.transaction(mode);
      if (mode === "read") return tx;
      await tx.execute(c.set);
      const t: Transaction = {
        get closed() {
          return tx.closed;
        },
        execute: (s: InStatement) => tx.execute(s),
        batch: (ss: InStatement[]) => tx.batch(ss),
        executeMultiple: (sql: string) => tx.executeMultiple(sql),
        rollback: () => tx.rollback(),
        close: () => tx.close(),
        commit: async () => {
          await tx.execute(c.clear);
          await tx.commit();
        },
      };
      return t;
    },
  } as unknown as Client;
  return { ...ctx, db: wrapped };
}

export type { ResultSet };
