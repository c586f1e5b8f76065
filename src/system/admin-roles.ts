// Admin roles: an owner does everything; an editor everything but admin management, keys, settings, test mail and
// backup downloads; a viewer only reads (outside the outbox, which holds temporary passwords) and logs out. Each
// admin route declares the least role it needs next to it (`{ role: "editor" }`); src/http/admin-guard.ts enforces
// it. Pure.

export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(v: unknown): v is Role {
  return typeof v === "string" && (ROLES as readonly string[]).includes(v);
}

const RANK: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };

/** Whether an admin of role `have` may use a route that needs `need`. */
export function allows(have: Role, need: Role): boolean {
  return RANK[have] >= RANK[need];
}

/** "an owner", "an editor", "a viewer". */
export function withArticle(role: Role): string {
  return `${role === "viewer" ? "a" : "an"} ${role}`;
}
