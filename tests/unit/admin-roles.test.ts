// Admin roles (src/system/admin-roles.ts): the order of the roles, which may use a route that needs which, their
// names with articles, and what counts as a role. Which role each admin route needs is declared next to the route;
// tests/api/admin-roles.test.ts checks the routes against a matrix and that none goes unguarded.

import { expect, test } from "bun:test";
import { ROLES, type Role, allows, isRole, withArticle } from "../../src/system/admin-roles.ts";

test("a role may use what needs it or less: owner > editor > viewer", () => {
  const table: [Role, Role, boolean][] = [
    ["owner", "owner", true],
    ["owner", "editor", true],
    ["owner", "viewer", true],
    ["editor", "owner", false],
    ["editor", "editor", true],
    ["editor", "viewer", true],
    ["viewer", "owner", false],
    ["viewer", "editor", false],
    ["viewer", "viewer", true],
  ];
  for (const [have, need, ok] of table) expect([have, need, allows(have, need)]).toEqual([have, need, ok]);
});

test("names with their article", () => {
  expect(ROLES.map(withArticle)).toEqual(["an owner", "an editor", "a viewer"]);
});

test("isRole", () => {
  for (const r of ROLES) expect(isRole(r)).toBe(true);
  for (const v of ["Owner", "admin", "", " owner", null, undefined, 1, ["owner"], { role: "owner" }, "__proto__", "toString"])
    expect(isRole(v)).toBe(false);
});
