// Schemas a fresh data directory starts with in development.

import type { SchemaDef } from "./definition.ts";

const open = { create: "open", read: "open", update: "open", delete: "open" } as const;

export const DEFAULT_SCHEMAS: SchemaDef[] = [
  {
    name: "user",
    fields: { email: { type: "string", visibility: "owner" }, password: { type: "password" } },
    // Sign-up and reading are open; only the user itself changes or deletes its account (the owner of a user
    // object is that user). The password field is write-only whatever the permissions say; the email is answered
    // to the user itself (and the private key, admins, custom code) only.
    permissions: { create: "open", read: "open", update: "owner", delete: "owner" },
    indexes: [],
    user: { key: "username", password: "password", email: "email" },
  },
  {
    // Roles for {"role": "<name>"} permissions: the object's key is the role name, `users` its members.
    name: "aclrole",
    fields: { users: { type: "relationship", schema: "user", many: true } },
    permissions: { create: "private_key", read: "private_key", update: "private_key", delete: "private_key" },
    indexes: [],
  },
];

export function openSchema(name: string): SchemaDef {
  return { name, fields: {}, permissions: { ...open }, indexes: [] };
}
