// X-Service-Select against the schemas: which fields each level of the answer carries, and which
// relationships are expanded with which sub-selection. Pure.

import { ApiError } from "../../errors.ts";
import type { CompiledSchema } from "../../schema/compiled.ts";

export interface Projection {
  /** Fields rendered at this level (the key always is); null for every field. */
  fields: Set<string> | null;
  /** Sub-selections of relationship fields, for their expanded objects. */
  nested: Map<string, Projection>;
}

export const ALL: Projection = Object.freeze({ fields: null, nested: new Map() }) as Projection;

const AUTO = new Set(["createddate", "lastmoddate", "sm_owner"]);

/**
 * Build the projection of `paths` for `schema` expanded to `depth`. A dotted path must go through an expanded
 * relationship; `*` selects every field of its level; passwords are never selected.
 */
export function buildProjection(
  paths: string[][] | null,
  depth: number,
  schema: CompiledSchema,
  lookup: (name: string) => CompiledSchema | undefined,
): Projection {
  if (paths === null) return ALL;
  return level(paths, depth, schema, lookup, "");
}

function level(
  paths: string[][],
  depth: number,
  s: CompiledSchema,
  lookup: (name: string) => CompiledSchema | undefined,
  prefix: string,
): Projection {
  const out: Projection = { fields: new Set(), nested: new Map() };
  const below = new Map<string, string[][]>();
  const whole = new Set<string>();
  for (const path of paths) {
    const [head, ...rest] = path as [string, ...string[]];
    if (head === "*") {
      out.fields = null;
      continue;
    }
    const def = s.fields.get(head);
    if (!def && head !== s.pk && !AUTO.has(head))
      throw new ApiError(400, `X-Service-Select: unknown field "${prefix}${head}" (schema ${s.name})`);
    if (def?.type === "password") continue;
    out.fields?.add(head);
    if (rest.length === 0) {
      whole.add(head);
      continue;
    }
    if (def?.type !== "relationship")
      throw new ApiError(
        400,
        `X-Service-Select: "${prefix}${head}" is not a relationship, so "${prefix}${path.join(".")}" selects nothing`,
      );
    if (depth < 1)
      throw new ApiError(
        400,
        `X-Service-Select: cannot select "${prefix}${path.join(".")}" because "${prefix}${head}" is not expanded (X-Service-Expand)`,
      );
    if (!below.has(head)) below.set(head, []);
    below.get(head)!.push(rest);
  }
  for (const [field, sub] of below) {
    const target = lookup(s.fields.get(field)!.schema!);
    if (target) out.nested.set(field, level(sub, depth - 1, target, lookup, `${prefix}${field}.`));
  }
  for (const field of whole) if (!below.has(field)) out.nested.set(field, ALL);
  return out;
}
