// The schema editor's form state: a definition as editable rows (fields in order, indexes as text) and back, and
// the choices the form offers (field types, permission words).

import type { FieldDef, SchemaDef } from "../values.ts";

export const FIELD_TYPES: FieldDef["type"][] = [
  "string",
  "integer",
  "float",
  "boolean",
  "array",
  "geopoint",
  "binary",
  "relationship",
  "password",
];
export const ITEM_TYPES = ["string", "integer", "float", "boolean"] as const;
export const OPERATIONS = ["create", "read", "update", "delete"] as const;
export const WORDS = ["open", "logged_in", "owner", "private_key", "none"] as const;
export const PERM_KEYS = ["role", "relationship", "ownerRelationship"] as const;

export interface FieldRow {
  name: string;
  def: FieldDef;
}

export interface Draft {
  name: string;
  fields: FieldRow[];
  permissions: Record<string, unknown>;
  indexes: string[];
  user: SchemaDef["user"] | null;
}

export function toDraft(d: SchemaDef): Draft {
  return {
    name: d.name,
    fields: Object.entries(d.fields).map(([name, def]) => ({ name, def: { ...def } })),
    permissions: { ...d.permissions },
    indexes: d.indexes.map((ix) => ix.join(", ")),
    user: d.user ? { ...d.user } : null,
  };
}

export function fromDraft(d: Draft): SchemaDef {
  const fields: Record<string, FieldDef> = {};
  for (const f of d.fields) if (f.name.trim()) fields[f.name.trim()] = clean(f.def);
  const def: SchemaDef = {
    name: d.name.trim(),
    fields,
    permissions: d.permissions as SchemaDef["permissions"],
    indexes: d.indexes
      .map((s) =>
        s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .filter((ix) => ix.length > 0),
  };
  if (d.user) def.user = d.user;
  return def;
}

/** Only the members the type takes (the server refuses "items" on a string). */
export function clean(f: FieldDef): FieldDef {
  if (f.type === "array") return { type: "array", items: f.items ?? "string" };
  if (f.type === "relationship") return { type: "relationship", schema: f.schema ?? "", many: !!f.many };
  return { type: f.type };
}

export const EMPTY: SchemaDef = {
  name: "",
  fields: {},
  permissions: { create: "open", read: "open", update: "owner", delete: "owner" },
  indexes: [],
};
