// The subscriptions a hub holds for one schema, indexed by the `field = value` their filters require (match.ts,
// equalityOf): a change is handed to the subscriptions whose value the object had before or has after, and to
// those without such a condition. So a write costs a few map lookups for thousands of per-user or per-room
// subscriptions, not one predicate each.

import type { Attached } from "./hub.ts";
import { indexValue } from "./match.ts";
import type { CompiledSubscription } from "./subscription.ts";

type Entries = Map<CompiledSubscription, Attached>;

export class SchemaSubs {
  private readonly scan: Entries = new Map();
  private readonly byField = new Map<string, Map<string | number, Entries>>();
  size = 0;

  add(sub: CompiledSubscription, a: Attached): void {
    const eq = sub.equality;
    if (eq === null) this.scan.set(sub, a);
    else {
      let byValue = this.byField.get(eq.field);
      if (!byValue) this.byField.set(eq.field, (byValue = new Map()));
      let entries = byValue.get(eq.value);
      if (!entries) byValue.set(eq.value, (entries = new Map()));
      entries.set(sub, a);
    }
    this.size++;
  }

  delete(sub: CompiledSubscription): void {
    const eq = sub.equality;
    if (eq === null) {
      if (this.scan.delete(sub)) this.size--;
      return;
    }
    const byValue = this.byField.get(eq.field);
    const entries = byValue?.get(eq.value);
    if (entries?.delete(sub)) this.size--;
    if (entries?.size === 0) byValue!.delete(eq.value);
    if (byValue?.size === 0) this.byField.delete(eq.field);
  }

  /** The subscriptions a change of an object from `before` to `after` may concern. */
  candidates(before: Record<string, unknown> | null, after: Record<string, unknown> | null): [CompiledSubscription, Attached][] {
    const out: [CompiledSubscription, Attached][] = [...this.scan];
    for (const [field, byValue] of this.byField) {
      const b = before === null ? null : indexValue(before[field]);
      const a = after === null ? null : indexValue(after[field]);
      if (b !== null) for (const e of byValue.get(b) ?? []) out.push(e);
      if (a !== null && a !== b) for (const e of byValue.get(a) ?? []) out.push(e);
    }
    return out;
  }
}
