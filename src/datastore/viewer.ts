// Who an answer's objects are rendered for (schema/json-sql.ts's Viewer), from the caller's context: the base of
// file links (the request being answered, or the configured public or files URL) and whether owner-only fields
// show. The private key, the server itself (admin API, custom code) see every field; an anonymous caller sees no
// owner-only field; a user sees them on the objects it owns (and on its own user object).

import type { ApiContext } from "../request-context.ts";
import { ownerOf } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { Viewer } from "../schema/json-sql.ts";
import { badRequest } from "../errors.ts";
import type { SqlPart } from "./query/compile.ts";
import type { Conditions } from "./query/tree.ts";

/** The viewer of objects of `s` answered to the caller of `ctx`. */
export function viewerOf(ctx: ApiContext, s: CompiledSchema): Viewer {
  return { fileBase: ctx.fileBase(), owner: ownerView(ctx, s) };
}

/** The same viewer seeing every field: answers of what the caller itself wrote (creates) or owns (its login). */
export function fullViewer(ctx: ApiContext): Viewer {
  return { fileBase: ctx.fileBase(), owner: "all" };
}

function ownerView(ctx: ApiContext, s: CompiledSchema): Viewer["owner"] {
  const p = ctx.principal;
  if (s.ownerOnly.size === 0 || p.kind === "app" || p.kind === "system") return "all";
  if (p.kind === "anonymous") return "none";
  return { owner: ownerOf(p)!, self: s.def.user && s.name === p.schema ? p.username : null };
}

/** Whether the caller may see (and so filter, sort and select on) every owner-only field of every object. */
export function seesOwnerOnly(ctx: ApiContext): boolean {
  return ctx.principal.kind === "app" || ctx.principal.kind === "system";
}

/** The object's JSON over alias `t` (or unqualified columns for RETURNING) for the caller, or for `viewer` when given. */
export function objectSql(ctx: ApiContext, s: CompiledSchema, qualifier: "t" | null, viewer?: Viewer): SqlPart {
  if (s.sameForAll) return { sql: qualifier === "t" ? s.json : s.jsonReturning, args: [] };
  return s.renderFor(viewer ?? viewerOf(ctx, s), qualifier);
}

/**
 * 400 when a caller that does not see every owner-only field names one in a condition or an ordering: matching or
 * sorting on a hidden field would reveal it one comparison at a time.
 */
export function refuseOwnerOnly(ctx: ApiContext, s: CompiledSchema, tree: Conditions, orderBy: readonly string[] = []): void {
  if (s.ownerOnly.size === 0 || seesOwnerOnly(ctx)) return;
  const named = [...tree.where, ...(tree.or ?? []).flat()].map((c) => c.field).concat(orderBy);
  const hidden = named.find((f) => s.ownerOnly.has(f));
  if (hidden !== undefined) throw badRequest(`"${hidden}" of schema ${s.name} is visible to its owner only; it cannot be used in a query`);
}
