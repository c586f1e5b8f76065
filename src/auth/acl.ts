// Access-control decisions (docs/api/permissions.md): from a schema's permission for an operation and the
// caller, decide allow, deny (with the exact status and message of the original service), a role check, or a
// row scope that the query ANDs in. Pure.

import { type ApiError, methodNotAllowed, unauthorized } from "../errors.ts";
import { type Principal, ownerOf } from "../request-context.ts";
import type { Operation, Permission } from "../schema/definition.ts";

export type RowScope =
  /** Rows whose sm_owner is the caller; in the caller's own user schema also the caller's user object. */
  | { kind: "owner"; owner: string; schema: string; username: string }
  /** Rows whose relationship field references the caller. */
  | { kind: "relationship"; field: string; schema: string; username: string }
  /** Rows whose owner's user object references the caller in `field`. */
  | { kind: "ownerRelationship"; field: string; schema: string; username: string };

type Decision =
  | { kind: "allow" }
  | { kind: "deny"; error: ApiError }
  | { kind: "role"; role: string; schema: string; username: string }
  | { kind: "scope"; scope: RowScope };

export function decide(permission: Permission, op: Operation, p: Principal): Decision {
  if (p.kind === "system") return { kind: "allow" };
  if (permission === "none") return { kind: "deny", error: methodNotAllowed() };
  if (permission === "open" || p.kind === "app") return { kind: "allow" };
  if (permission === "private_key" || p.kind === "anonymous") return { kind: "deny", error: unauthorized() };
  // A logged-in user from here on.
  if (permission === "logged_in") return { kind: "allow" };
  if (typeof permission === "object" && "role" in permission)
    return { kind: "role", role: permission.role, schema: p.schema, username: p.username };
  // Owner and relationship rules cannot be checked before an object exists: creating needs a login only.
  if (op === "create") return { kind: "allow" };
  if (permission === "owner")
    return { kind: "scope", scope: { kind: "owner", owner: ownerOf(p)!, schema: p.schema, username: p.username } };
  if ("relationship" in permission)
    return { kind: "scope", scope: { kind: "relationship", field: permission.relationship, schema: p.schema, username: p.username } };
  return {
    kind: "scope",
    scope: { kind: "ownerRelationship", field: permission.ownerRelationship, schema: p.schema, username: p.username },
  };
}
