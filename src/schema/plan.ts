// Migration planning: what must change in an environment database to go from its current physical layout
// to a new definition. Pure. Development follows the definition exactly; production only ever adds.

import { badRequest } from "../errors.ts";
import { type FieldDef, type SchemaDef, primaryKeyOf } from "./definition.ts";

type Step =
  | { kind: "createTable" }
  | { kind: "renameKey"; from: string; to: string }
  | { kind: "addField"; field: string; def: FieldDef }
  | { kind: "dropField"; field: string; def: FieldDef }
  | { kind: "changeField"; field: string; from: FieldDef; to: FieldDef }
  | { kind: "retireField"; field: string; from: FieldDef; to: FieldDef }
  | { kind: "addIndex"; fields: string[] }
  | { kind: "dropIndex"; fields: string[] };

export interface Plan {
  schema: string;
  /** The layout before (null: no table yet) and after the plan. */
  before: SchemaDef | null;
  after: SchemaDef;
  steps: Step[];
  /** Human-readable reasons this plan needs `force`. Empty when it is additive. */
  destructive: string[];
}

function describeField(f: FieldDef): string {
  if (f.type === "array") return `array of ${f.items}`;
  if (f.type === "relationship") return `relationship to ${f.schema}${f.many ? " (many)" : ""}`;
  return f.type;
}

/** Same column layout and stored form (a relationship may change its target schema freely). */
function sameStorage(a: FieldDef, b: FieldDef): boolean {
  return a.type === b.type && a.items === b.items && (a.many ?? false) === (b.many ?? false);
}

const ixKey = (ix: readonly string[]) => ix.join(",");

function indexSteps(before: SchemaDef | null, after: SchemaDef, drop: boolean): Step[] {
  const old = new Set((before?.indexes ?? []).map(ixKey));
  const next = new Set(after.indexes.map(ixKey));
  const steps: Step[] = [];
  if (drop) for (const ix of before?.indexes ?? []) if (!next.has(ixKey(ix))) steps.push({ kind: "dropIndex", fields: ix });
  for (const ix of after.indexes) if (!old.has(ixKey(ix))) steps.push({ kind: "addIndex", fields: ix });
  return steps;
}

/** Development: the table is made to match `next` exactly; removals and type changes are destructive. */
export function planDevelopment(before: SchemaDef | null, next: SchemaDef): Plan {
  const steps: Step[] = [];
  const destructive: string[] = [];
  if (!before) {
    steps.push({ kind: "createTable" });
    return { schema: next.name, before, after: next, steps: [...steps, ...indexSteps(null, next, false)], destructive };
  }
  const oldPk = primaryKeyOf(before);
  const newPk = primaryKeyOf(next);
  if (oldPk !== newPk) {
    steps.push({ kind: "renameKey", from: oldPk, to: newPk });
    destructive.push(`rename the primary key of "${next.name}" from "${oldPk}" to "${newPk}"`);
  }
  for (const [name, f] of Object.entries(before.fields)) {
    const nf = next.fields[name];
    if (!nf) {
      steps.push({ kind: "dropField", field: name, def: f });
      destructive.push(`remove field "${name}" of "${next.name}" and its data`);
    } else if (!sameStorage(f, nf)) {
      steps.push({ kind: "changeField", field: name, from: f, to: nf });
      destructive.push(
        `change field "${name}" of "${next.name}" from ${describeField(f)} to ${describeField(nf)} (values that do not convert become null)`,
      );
    }
  }
  for (const [name, f] of Object.entries(next.fields)) if (!before.fields[name]) steps.push({ kind: "addField", field: name, def: f });
  steps.push(...indexSteps(before, next, true));
  return { schema: next.name, before, after: next, steps, destructive };
}

/**
 * Production: `layout` is what production.db holds (the union of every deployed version), `deployed` the
 * schema in the newest deployed version. Nothing is dropped: a removed field keeps its column, and a field
 * whose type changes keeps its old column under a retired name while a new column takes the field's name.
 */
export function planProduction(layout: SchemaDef | null, deployed: SchemaDef | null, next: SchemaDef): Plan {
  const destructive: string[] = [];
  for (const name of Object.keys(deployed?.fields ?? {}))
    if (!next.fields[name]) destructive.push(`remove field "${name}" of "${next.name}" from the API (its data stays in production.db)`);
  if (!layout) {
    return {
      schema: next.name,
      before: null,
      after: next,
      steps: [{ kind: "createTable" }, ...indexSteps(null, next, false)],
      destructive,
    };
  }
  if (primaryKeyOf(layout) !== primaryKeyOf(next))
    throw badRequest(
      `cannot change the primary key of deployed schema "${next.name}" from "${primaryKeyOf(layout)}" to "${primaryKeyOf(next)}"`,
    );
  const steps: Step[] = [];
  const fields: Record<string, FieldDef> = { ...layout.fields };
  for (const [name, nf] of Object.entries(next.fields)) {
    const f = layout.fields[name];
    if (!f) steps.push({ kind: "addField", field: name, def: nf });
    else if (!sameStorage(f, nf)) {
      steps.push({ kind: "retireField", field: name, from: f, to: nf });
      destructive.push(
        `change field "${name}" of "${next.name}" from ${describeField(f)} to ${describeField(nf)} (old values are kept in a retired column)`,
      );
    }
    fields[name] = nf;
  }
  const indexes = [...layout.indexes];
  for (const ix of next.indexes) if (!indexes.some((o) => ixKey(o) === ixKey(ix))) indexes.push(ix);
  const after: SchemaDef = { ...next, fields, indexes };
  steps.push(...indexSteps(layout, after, false));
  return { schema: next.name, before: layout, after, steps, destructive };
}

/** One line per step, for `burrow schema apply` and API answers. */
export function describePlan(plan: Plan): string[] {
  return plan.steps.map((s) => {
    switch (s.kind) {
      case "createTable":
        return `+ create schema ${plan.schema}`;
      case "renameKey":
        return `~ ${plan.schema}: rename primary key ${s.from} -> ${s.to}`;
      case "addField":
        return `+ ${plan.schema}.${s.field} (${describeField(s.def)})`;
      case "dropField":
        return `- ${plan.schema}.${s.field} (${describeField(s.def)})`;
      case "changeField":
      case "retireField":
        return `~ ${plan.schema}.${s.field}: ${describeField(s.from)} -> ${describeField(s.to)}`;
      case "addIndex":
        return `+ ${plan.schema} index (${s.fields.join(", ")})`;
      case "dropIndex":
        return `- ${plan.schema} index (${s.fields.join(", ")})`;
    }
    const unknown: never = s;
    return String(unknown);
  });
}
