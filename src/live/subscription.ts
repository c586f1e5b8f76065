// A live subscription compiled once for its stream (docs/api/live.md): the filter as a predicate over an object's
// JSON (match.ts, from the same query tree the SQL compiler takes), the read permission as a rule over the object
// (the same decisions as src/auth/acl.ts; only roles and the owner's relationships need data beyond the object,
// looked up once per write and shared by every subscriber), the view the object is rendered with, and the events
// wanted. Every refusal happens here, at subscribe time, with the field named: 400, or the permission's own 401/405.

import { decide } from "../auth/acl.ts";
import { viewerOf } from "../datastore/viewer.ts";
import { refuseOwnerOnly } from "../datastore/viewer.ts";
import { parseConditions, parseSelect } from "../datastore/query/parse.ts";
import { badRequest } from "../errors.ts";
import type { ApiContext } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { isPlainObject } from "../plain-object.ts";
import { compileMatch, equalityOf } from "./match.ts";
import { type LiveView, liveViewKey } from "./render.ts";
import type { SubscriptionSpec } from "./stream-store.ts";

export const EVENT_KINDS = ["create", "update", "delete", "enter", "leave"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
const MEMBERS = ["schema", "query", "select", "events"];

/** Who may read an object, as far as the object itself (and per-write lookups) can tell. */
export type ReadRule =
  | { kind: "all" }
  | { kind: "role"; role: string; schema: string; username: string }
  | { kind: "owner"; owner: string; self: string | null; pk: string }
  | { kind: "relationship"; field: string; many: boolean; username: string }
  | { kind: "ownerRelationship"; via: { userSchema: CompiledSchema; field: string; many: boolean }[]; username: string }
  | { kind: "nothing" };

export interface CompiledSubscription {
  name: string;
  spec: SubscriptionSpec;
  schema: CompiledSchema;
  /** `{"subscription":<name>,"schema":<schema>,"object":` (the event's data up to the object). */
  prefix: string;
  match: (obj: Record<string, unknown>) => boolean;
  rule: ReadRule;
  view: LiveView;
  /** liveViewKey(view): subscribers with the same key share one rendering of a change. */
  viewKey: string;
  events: ReadonlySet<EventKind>;
  /** A `field = value` every match needs (the hub indexes subscriptions by it); null when the filter has none. */
  equality: { field: string; value: string | number } | null;
}

/** 400 unless the name is a subscription name. */
export function checkSubscriptionName(name: string): void {
  if (!NAME_RE.test(name)) throw badRequest("a subscription name matches ^[A-Za-z0-9_-]{1,64}$");
}

/** The spec from a PUT body: schema, query, select, events; 400 for anything else. */
export function specOf(body: unknown): SubscriptionSpec {
  if (!isPlainObject(body)) throw badRequest('send {"schema", "query", "select", "events"}');
  for (const k of Object.keys(body))
    if (!MEMBERS.includes(k)) throw badRequest(`unknown member "${k.slice(0, 32)}"; members: ${MEMBERS.join(", ")}`);
  const { schema, query = "", select = null, events = [...EVENT_KINDS] } = body as Record<string, unknown>;
  if (typeof schema !== "string" || schema === "") throw badRequest("schema: a schema name is needed");
  if (typeof query !== "string") throw badRequest('query: a query string such as "done=false&priority[gt]=2"');
  if (select !== null && typeof select !== "string") throw badRequest('select: field names separated by commas, such as "title,done"');
  if (!Array.isArray(events) || events.length === 0 || !events.every((e) => (EVENT_KINDS as readonly unknown[]).includes(e)))
    throw badRequest(`events: a non-empty array of ${EVENT_KINDS.join(", ")}`);
  return { schema, query: query.startsWith("?") ? query.slice(1) : query, select, events: [...new Set(events as string[])] };
}

/** Compile a spec for the caller of `ctx` (a stream's context); throws the refusal a read would get. */
export function compileSubscription(ctx: ApiContext, name: string, spec: SubscriptionSpec): CompiledSubscription {
  const s = ctx.schemas.schemas.get(spec.schema);
  if (!s) throw badRequest(`schema: unknown schema "${spec.schema.slice(0, 64)}"`);
  const conditions = parseConditions(new URLSearchParams(spec.query));
  refuseOwnerOnly(ctx, s, conditions);
  const match = compileMatch(s, conditions);
  const equality = equalityOf(s, conditions);
  const rule = readRule(ctx, s);
  const view: LiveView = { ...viewerOf(ctx, s), only: selected(s, spec.select) };
  return {
    name,
    spec,
    schema: s,
    prefix: `{"subscription":${JSON.stringify(name)},"schema":${JSON.stringify(s.name)},"object":`,
    match,
    rule,
    view,
    viewKey: liveViewKey(view),
    events: new Set(spec.events as EventKind[]),
    equality,
  };
}

/** The top-level fields a select names (no dotted paths: a subscription expands nothing); null for all. */
function selected(s: CompiledSchema, select: string | null): ReadonlySet<string> | null {
  const paths = parseSelect(select);
  if (paths === null) return null;
  const out = new Set<string>();
  for (const p of paths) {
    if (p.length > 1)
      throw badRequest(`select: "${p.join(".")}" reaches into a relationship; a subscription selects the schema's own fields`);
    const f = p[0]!;
    if (f === "*") return null;
    if (f !== s.pk && f !== "createddate" && f !== "lastmoddate" && f !== "sm_owner" && !s.fields.has(f))
      throw badRequest(`select: unknown field "${f}" (schema ${s.name})`);
    out.add(f);
  }
  return out;
}

/** The read permission for the caller as a rule over objects; a caller that may read nothing is refused here. */
function readRule(ctx: ApiContext, s: CompiledSchema): ReadRule {
  const d = decide(s.def.permissions.read, "read", ctx.principal);
  switch (d.kind) {
    case "allow":
      return { kind: "all" };
    case "deny":
      throw d.error;
    case "role":
      return { kind: "role", role: d.role, schema: d.schema, username: d.username };
    case "scope": {
      const scope = d.scope;
      if (scope.kind === "owner")
        return { kind: "owner", owner: scope.owner, self: s.def.user && s.name === scope.schema ? scope.username : null, pk: s.pk };
      if (scope.kind === "relationship") {
        const f = s.fields.get(scope.field);
        if (f?.type !== "relationship" || f.schema !== scope.schema) return { kind: "nothing" };
        return { kind: "relationship", field: scope.field, many: !!f.many, username: scope.username };
      }
      const via: { userSchema: CompiledSchema; field: string; many: boolean }[] = [];
      for (const u of ctx.schemas.schemas.values()) {
        const f = u.fields.get(scope.field);
        if (u.def.user && f?.type === "relationship" && f.schema === scope.schema)
          via.push({ userSchema: u, field: scope.field, many: !!f.many });
      }
      return via.length ? { kind: "ownerRelationship", via, username: scope.username } : { kind: "nothing" };
    }
  }
}
