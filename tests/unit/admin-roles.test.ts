// Admin roles: which role each admin API request needs, from its method and path alone (src/system/admin-roles.ts).

import { describe, expect, test } from "bun:test";
import { ROLES, type Role, adminMayDo, isRole, neededRole } from "../../src/system/admin-roles.ts";

/** method, path after /_admin/api, the least role that may. */
const VECTORS: [string, string, Role][] = [
  // Reads: every role, except the owner-only paths and the outbox.
  ["GET", "/status", "viewer"],
  ["HEAD", "/status", "viewer"],
  ["get", "/schemas", "viewer"],
  ["GET", "/schemas/:name", "viewer"],
  ["GET", "/deploys", "viewer"],
  ["GET", "/code", "viewer"],
  ["GET", "/logs", "viewer"],
  ["GET", "/push/queue", "viewer"],
  ["GET", "/me", "viewer"],
  ["GET", "/users/:env/:schema/:key/social", "viewer"],
  ["GET", "/data/:env/:schema", "viewer"],
  ["GET", "/data/:env/:schema/:key", "viewer"],
  ["GET", "/outbox", "editor"],
  ["HEAD", "/outbox", "editor"],
  // Backups: viewers list them, editors make and delete them, only owners download one (it holds keys, settings, admins).
  ["GET", "/backups", "viewer"],
  ["GET", "/backups/:id", "viewer"],
  ["POST", "/backups", "editor"],
  ["DELETE", "/backups/:id", "editor"],
  ["GET", "/backups/:id/download", "owner"],
  ["HEAD", "/backups/:id/download", "owner"],
  ["GET", "/backups/burrow-20261123T211203Z-ab12/download", "owner"],
  ["GET", "/backups/x/download/", "owner"],
  ["GET", "/backups/%78/Download", "owner"],
  // Logging out: every role.
  ["POST", "/logout", "viewer"],
  ["GET", "/logout", "viewer"],
  // Writes: editor.
  ["PUT", "/schemas/:name", "editor"],
  ["DELETE", "/schemas/:name", "editor"],
  ["POST", "/deploy", "editor"],
  ["PUT", "/code", "editor"],
  ["DELETE", "/code", "editor"],
  ["POST", "/data/:env/:schema", "editor"],
  ["PUT", "/data/:env/:schema/:key", "editor"],
  ["DELETE", "/data/:env/:schema/:key", "editor"],
  ["PUT", "/users/:env/:schema/:key/password", "editor"],
  ["DELETE", "/users/:env/:schema/:key/sessions", "editor"],
  ["DELETE", "/users/:env/:schema/:key/social/:provider", "editor"],
  ["PATCH", "/status", "editor"],
  ["OPTIONS", "/status", "editor"],
  ["DELETE", "/logout", "editor"],
  ["POST", "/logout/x", "editor"],
  ["POST", "/future-thing", "editor"],
  // Owner only, whatever the method.
  ["GET", "/keys", "owner"],
  ["HEAD", "/keys", "owner"],
  ["GET", "/settings/:env", "owner"],
  ["PUT", "/settings/:env", "owner"],
  ["GET", "/admins", "owner"],
  ["POST", "/admins", "owner"],
  ["PUT", "/admins/:id", "owner"],
  ["DELETE", "/admins/:id", "owner"],
  ["POST", "/mail/test", "owner"],
  ["GET", "/mail/test", "owner"],
  // Segment-wise prefixes; spelling variants are not a way around them.
  ["GET", "/keysx", "viewer"],
  ["GET", "/adminsx", "viewer"],
  ["GET", "/mail", "viewer"],
  ["POST", "/mail/testing", "editor"],
  ["GET", "/keys/", "owner"],
  ["GET", "//keys", "owner"],
  ["GET", "/KEYS", "owner"],
  ["GET", "/%6beys", "owner"],
  ["GET", "/settings%2Fdevelopment", "owner"],
  ["GET", "keys", "owner"],
  ["GET", "/%E0%A4%A", "viewer"],
  ["GET", "", "viewer"],
  ["POST", "", "editor"],
];

describe("neededRole", () => {
  test.each(VECTORS)("%s %s needs %s", (method, path, role) => {
    expect(neededRole(method, path)).toBe(role);
  });
});

describe("adminMayDo", () => {
  test("a role may do what needs it or less; otherwise the answer names the role needed", () => {
    const rank = (r: Role) => ROLES.length - 1 - ROLES.indexOf(r);
    for (const [method, path, need] of VECTORS)
      for (const role of ROLES) {
        const expected: ReturnType<typeof adminMayDo> = rank(role) >= rank(need) ? { ok: true } : { ok: false, need };
        expect([method, path, role, adminMayDo(role, method, path)]).toEqual([method, path, role, expected]);
      }
  });

  test("the brief's examples", () => {
    expect(adminMayDo("viewer", "PUT", "/schemas/book")).toEqual({ ok: false, need: "editor" });
    expect(adminMayDo("viewer", "POST", "/deploy")).toEqual({ ok: false, need: "editor" });
    expect(adminMayDo("viewer", "GET", "/keys")).toEqual({ ok: false, need: "owner" });
    expect(adminMayDo("editor", "GET", "/settings/production")).toEqual({ ok: false, need: "owner" });
    expect(adminMayDo("editor", "PUT", "/schemas/book")).toEqual({ ok: true });
    expect(adminMayDo("owner", "DELETE", "/admins/1")).toEqual({ ok: true });
    expect(adminMayDo("viewer", "POST", "/logout")).toEqual({ ok: true });
  });
});

test("isRole", () => {
  for (const r of ROLES) expect(isRole(r)).toBe(true);
  for (const v of ["Owner", "admin", "", " owner", null, undefined, 1, ["owner"], { role: "owner" }, "__proto__", "toString"]) expect(isRole(v)).toBe(false);
});
