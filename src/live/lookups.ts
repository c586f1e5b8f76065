// The data beyond an object that live read rules need, fetched once per write for all subscribers: the members of
// every role (the built-in aclrole schema, kept until a change to it), and relationship fields of owners' user
// objects (ownerRelationship permissions).

import type { Client } from "@libsql/core/api";
import { q } from "../db/sql.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { RoleMembers } from "./dispatch.ts";

type Db = Pick<Client, "execute">;

const list = (v: unknown): string[] => {
  if (typeof v !== "string") return [];
  if (!v.startsWith("[")) return [v];
  try {
    const a = JSON.parse(v) as unknown;
    return Array.isArray(a) ? a.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
};

/** Every role with the user schema its `users` relate to and their keys. */
export async function loadRoles(db: Db, aclrole: CompiledSchema | undefined): Promise<RoleMembers> {
  const out = new Map<string, { schema: string; users: ReadonlySet<string> }>();
  const users = aclrole?.fields.get("users");
  if (!aclrole || users?.type !== "relationship" || !users.schema) return out;
  const rs = await db.execute(`SELECT ${q(aclrole.pk)} AS r, "users" AS u FROM ${aclrole.table}`);
  for (const row of rs.rows) out.set(row.r as string, { schema: users.schema, users: new Set(list(row.u)) });
  return out;
}

/**
 * Fill `out` with `<userSchema>/<key>\0<field>` -> the field's value (an array for many) for each needed owner, one
 * query per user schema and field.
 */
export async function loadOwnerFields(
  db: Db,
  schemas: ReadonlyMap<string, { table: string; pk: string }>,
  needs: ReadonlySet<string>,
  out: Map<string, unknown>,
): Promise<void> {
  const groups = new Map<string, { schema: string; field: string; keys: string[] }>();
  for (const need of needs) {
    if (out.has(need)) continue;
    const [owner, field] = need.split("\0") as [string, string];
    const slash = owner.indexOf("/");
    const schema = owner.slice(0, slash);
    const g = groups.get(`${schema}\0${field}`) ?? { schema, field, keys: [] };
    g.keys.push(owner.slice(slash + 1));
    groups.set(`${schema}\0${field}`, g);
    out.set(need, undefined);
  }
  for (const g of groups.values()) {
    const s = schemas.get(g.schema);
    if (!s) continue;
    const rs = await db.execute({
      sql: `SELECT ${q(s.pk)} AS k, ${q(g.field)} AS v FROM ${s.table} WHERE ${q(s.pk)} IN (${g.keys.map(() => "?").join(", ")})`,
      args: g.keys,
    });
    for (const row of rs.rows) {
      const v = row.v;
      out.set(`${g.schema}/${row.k as string}\0${g.field}`, typeof v === "string" && v.startsWith("[") ? list(v) : v);
    }
  }
}
