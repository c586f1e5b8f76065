// Access control applied: the decision for an operation on a schema becomes nothing (allowed), an error, a
// role-membership check against the built-in `aclrole` schema, or an SQL scope over the alias `t` that every
// read, update and delete ANDs in (through andScope, the one place that writes `AND (<scope>)`), so lists,
// counts and Content-Range only ever cover what the caller may see.

import type { InValue } from "@libsql/core/api";
import { type RowScope, decide } from "../auth/acl.ts";
import { q } from "../db/sql.ts";
import { unauthorized } from "../errors.ts";
import type { ApiContext } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { Operation } from "../schema/definition.ts";
import type { SqlPart } from "./query/compile.ts";

const NOTHING: SqlPart = { sql: "0", args: [] };

/** The scope an operation is limited to (null: every object), or throws 401/405 as the original service did. */
export async function access(ctx: ApiContext, s: CompiledSchema, op: Operation): Promise<SqlPart | null> {
  const d = decide(s.def.permissions[op], op, ctx.principal);
  switch (d.kind) {
    case "allow":
      return null;
    case "deny":
      throw d.error;
    case "role":
      if (!(await isRoleMember(ctx, d.role, d.schema, d.username))) throw unauthorized();
      return null;
    case "scope":
      return scopeSql(ctx, s, d.scope);
  }
}

/** `where AND (scope)` with the scope's arguments after `args`; `where` and `args` alone without a scope. Pure. */
export function andScope(where: string, args: readonly InValue[], scope: SqlPart | null): SqlPart {
  return scope ? { sql: `${where} AND (${scope.sql})`, args: [...args, ...scope.args] } : { sql: where, args: [...args] };
}

/** Whether a user is in a role: the aclrole object named after the role lists the user in `users`. */
async function isRoleMember(ctx: ApiContext, role: string, schema: string, username: string): Promise<boolean> {
  const roles = ctx.schemas.schemas.get("aclrole");
  const users = roles?.fields.get("users");
  if (!roles || users?.type !== "relationship" || users.schema !== schema) return false;
  const member = users.many ? `EXISTS (SELECT 1 FROM json_each(t."users") WHERE value = ?)` : `t."users" = ?`;
  const rs = await ctx.db.execute({
    sql: `SELECT 1 FROM ${roles.table} AS t WHERE t.${q(roles.pk)} = ? AND ${member}`,
    args: [role, username],
  });
  return rs.rows.length > 0;
}

/** `alias.field` holds (or, for many, contains) the key. */
function references(alias: string, field: string, many: boolean): string {
  return many ? `EXISTS (SELECT 1 FROM json_each(${alias}.${q(field)}) WHERE value = ?)` : `${alias}.${q(field)} = ?`;
}

function scopeSql(ctx: ApiContext, s: CompiledSchema, scope: RowScope): SqlPart {
  switch (scope.kind) {
    case "owner":
      // The owner of a user object is that user (whoever created it), as well as any recorded sm_owner.
      if (s.def.user && s.name === scope.schema)
        return { sql: `t."sm_owner" = ? OR t.${q(s.pk)} = ?`, args: [scope.owner, scope.username] };
      return { sql: `t."sm_owner" = ?`, args: [scope.owner] };
    case "relationship": {
      const f = s.fields.get(scope.field);
      if (f?.type !== "relationship" || f.schema !== scope.schema) return NOTHING;
      return { sql: references("t", scope.field, !!f.many), args: [scope.username] };
    }
    case "ownerRelationship": {
      // The owner's user object may live in any user schema that has the field relating to the caller's schema.
      const parts: string[] = [];
      const args: string[] = [];
      for (const u of ctx.schemas.schemas.values()) {
        const f = u.fields.get(scope.field);
        if (!u.def.user || f?.type !== "relationship" || f.schema !== scope.schema) continue;
        parts.push(
          `EXISTS (SELECT 1 FROM ${u.table} AS o WHERE t."sm_owner" = '${u.name}/' || o.${q(u.pk)} AND ${references("o", scope.field, !!f.many)})`,
        );
        args.push(scope.username);
      }
      return parts.length ? { sql: parts.join(" OR "), args } : NOTHING;
    }
  }
}
