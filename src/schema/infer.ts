// Development-mode inference: the field type a first value implies, and the X-Service-Relations header
// that declares which fields are relationships. Pure.

import { badRequest } from "../errors.ts";
import { type FieldDef, type ItemType, isValidName } from "./definition.ts";
import { isLatitude, isLongitude, looksLikeUpload } from "./values.ts";

const MAX_RELATIONS = 64;

/** Parse `X-Service-Relations: author=user&author.friends=user` into path -> schema. 400 when malformed. */
export function parseRelationsHeader(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (header === null || header.trim() === "") return out;
  const pairs = header.split("&");
  if (pairs.length > MAX_RELATIONS) throw badRequest(`X-Service-Relations: at most ${MAX_RELATIONS} entries`);
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const path = eq < 0 ? "" : pair.slice(0, eq).trim();
    const schema =
      eq < 0
        ? ""
        : pair
            .slice(eq + 1)
            .trim()
            .toLowerCase();
    const parts = path.split(".");
    if (!path || !parts.every(isValidName) || !isValidName(schema))
      throw badRequest(`X-Service-Relations: "${pair}" is not of the form <field>=<schema> (nested fields with dots)`);
    if (parts.length > 3) throw badRequest(`X-Service-Relations: "${path}" is nested deeper than 3 levels`);
    if (out.has(path)) throw badRequest(`X-Service-Relations: "${path}" is listed twice`);
    out.set(path, schema);
  }
  return out;
}

function itemTypeOf(v: unknown): ItemType | null {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "number" && Number.isFinite(v)) return Number.isSafeInteger(v) ? "integer" : "float";
  return null;
}

/** The type a value implies for a new field. `relatedSchema` comes from X-Service-Relations. */
export function inferField(field: string, value: unknown, relatedSchema?: string): FieldDef {
  if (value === null || value === "NULL") throw badRequest(`cannot infer the type of new field "${field}" from null`);
  if (relatedSchema !== undefined) {
    if (typeof value === "string") return { type: "relationship", schema: relatedSchema, many: false };
    if (Array.isArray(value) && value.every((v) => typeof v === "string"))
      return { type: "relationship", schema: relatedSchema, many: true };
    throw badRequest(`relationship field "${field}" takes a key or an array of keys`);
  }
  if (Array.isArray(value)) {
    const kinds = new Set(value.map(itemTypeOf));
    if (kinds.has(null)) throw badRequest(`array field "${field}" may only hold strings, numbers or booleans`);
    if (kinds.has("integer") && kinds.has("float")) kinds.delete("integer");
    if (kinds.size > 1) throw badRequest(`array field "${field}" mixes value types`);
    return { type: "array", items: ([...kinds][0] as ItemType | undefined) ?? "string" };
  }
  if (typeof value === "object") {
    const g = value as Record<string, unknown>;
    const keys = Object.keys(g);
    if (keys.length === 2 && isLatitude(g.lat) && isLongitude(g.lon)) return { type: "geopoint" };
    throw badRequest(`field "${field}" holds an object; nested objects need the X-Service-Relations header`);
  }
  if (typeof value === "string" && looksLikeUpload(value)) return { type: "binary" };
  const t = itemTypeOf(value);
  if (!t) throw badRequest(`cannot infer the type of new field "${field}"`);
  return { type: t };
}

/** Merge the type inferred from another value of the same new field (integer widens to float). */
export function mergeInferred(field: string, a: FieldDef, b: FieldDef): FieldDef {
  const same = a.type === b.type && a.items === b.items && a.schema === b.schema && a.many === b.many;
  if (same) return a;
  const nums = new Set(["integer", "float"]);
  if (nums.has(a.type) && nums.has(b.type)) return { type: "float" };
  if (a.type === "array" && b.type === "array" && nums.has(a.items!) && nums.has(b.items!)) return { type: "array", items: "float" };
  throw badRequest(`new field "${field}" gets values of different types`);
}
