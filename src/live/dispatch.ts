// What one change means to one subscription: whether the object matched (filter and read permission) before and
// after, hence create, update, delete, enter or leave, and the event's data with the object as that subscriber may
// read it. A PreparedChange parses the logged JSON once and renders each view once, for every subscriber of the
// change; the data a permission needs beyond the object (role members, the owner's relationships) is looked up
// before dispatch (hub.ts) and read here synchronously.

import type { CompiledSchema } from "../schema/compiled.ts";
import type { Change } from "./change-feed.ts";
import { parseFull, renderFor } from "./render.ts";
import type { CompiledSubscription, EventKind, ReadRule } from "./subscription.ts";

type Obj = Record<string, unknown>;

/** Members of roles, as the built-in aclrole schema lists them: role -> the user schema and its usernames. */
export type RoleMembers = ReadonlyMap<string, { schema: string; users: ReadonlySet<string> }>;

export class PreparedChange {
  private parsed: [Obj | null | undefined, Obj | null | undefined] = [undefined, undefined];
  private renders = new Map<CompiledSchema, Map<string, string>>();
  /** `<userSchema>/<key>\0<field>` -> the field's value in that user object (filled before dispatch when needed). */
  readonly ownerFields = new Map<string, unknown>();

  constructor(readonly change: Change) {}

  /** The object before (0) or after (1) the change, parsed once. */
  object(which: 0 | 1): Obj | null {
    let o = this.parsed[which];
    if (o === undefined) {
      const text = which === 0 ? this.change.before : this.change.after;
      // parseFull keeps the exact text SQLite wrote for each float, so a rendering repeats it digit for digit.
      o = text === null ? null : (parseFull(text) as Obj);
      this.parsed[which] = o;
    }
    return o;
  }

  /** The object rendered for a subscription's view, once per view and schema version. */
  render(sub: CompiledSubscription, obj: Obj, which: 0 | 1): string {
    let bySchema = this.renders.get(sub.schema);
    if (!bySchema) this.renders.set(sub.schema, (bySchema = new Map()));
    const key = `${which}${sub.viewKey}`;
    let text = bySchema.get(key);
    if (text === undefined) bySchema.set(key, (text = renderFor(sub.schema, obj, sub.view)));
    return text;
  }

  /** An update that changed nothing any reader sees (only a password, say). */
  unchanged(): boolean {
    return this.change.kind === "update" && this.change.before === this.change.after;
  }
}

const contains = (v: unknown, many: boolean, key: string) => (many ? Array.isArray(v) && v.includes(key) : v === key);

/** Whether a reader under `rule` may read `obj`. */
export function readable(rule: ReadRule, obj: Obj, p: PreparedChange, roles: RoleMembers | null): boolean {
  switch (rule.kind) {
    case "all":
      return true;
    case "nothing":
      return false;
    case "role": {
      const r = roles?.get(rule.role);
      return r !== undefined && r.schema === rule.schema && r.users.has(rule.username);
    }
    case "owner":
      return obj.sm_owner === rule.owner || (rule.self !== null && obj[rule.pk] === rule.self);
    case "relationship":
      return contains(obj[rule.field], rule.many, rule.username);
    case "ownerRelationship": {
      const owner = obj.sm_owner;
      if (typeof owner !== "string") return false;
      for (const v of rule.via) {
        if (!owner.startsWith(`${v.userSchema.name}/`)) continue;
        if (contains(p.ownerFields.get(`${owner}\0${v.field}`), v.many, rule.username)) return true;
      }
      return false;
    }
  }
}

/** The owner user objects and fields a rule needs looked up for this change (ownerRelationship only). */
export function ownerLookups(rule: ReadRule, p: PreparedChange, out: Set<string>): void {
  if (rule.kind !== "ownerRelationship") return;
  for (const obj of [p.object(0), p.object(1)]) {
    const owner = obj?.sm_owner;
    if (typeof owner !== "string") continue;
    for (const v of rule.via) if (owner.startsWith(`${v.userSchema.name}/`)) out.add(`${owner}\0${v.field}`);
  }
}

/**
 * The event a change is for one subscription (null: none), with its data. A subscriber that could not read the
 * object, or whose filter it missed, before and after gets nothing; `leave` carries the key only.
 */
export function eventOf(sub: CompiledSubscription, p: PreparedChange, roles: RoleMembers | null): { kind: EventKind; data: string } | null {
  const c = p.change;
  if (c.schema !== sub.schema.name || p.unchanged()) return null;
  const before = p.object(0);
  const after = p.object(1);
  const was = before !== null && readable(sub.rule, before, p, roles) && sub.match(before);
  const is = after !== null && readable(sub.rule, after, p, roles) && sub.match(after);
  let kind: EventKind;
  if (c.kind === "create") kind = "create";
  else if (c.kind === "delete") kind = "delete";
  else kind = was ? (is ? "update" : "leave") : "enter";
  if (!(kind === "delete" || kind === "leave" ? was : is) || !sub.events.has(kind)) return null;
  if (kind === "leave") return { kind, data: `${sub.prefix}{${JSON.stringify(sub.schema.pk)}:${JSON.stringify(c.object)}}}` };
  const obj = kind === "delete" ? before! : after!;
  return { kind, data: `${sub.prefix}${p.render(sub, obj, kind === "delete" ? 0 : 1)}}` };
}
