// The Datastore's count, conditional update (updateIf) and update by query (updateWhere) called directly: each
// stays inside the caller's scopes like every other operation, and a single-key removeWhere may answer 0.

import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Conditions } from "../../src/datastore/query/tree.ts";
import type { ApiContext, Principal } from "../../src/request-context.ts";
import { devContext, makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
const ctx = (principal: Principal): ApiContext => devContext(t, principal);
const app = () => ctx({ kind: "app" });
const user = (username: string) => ctx({ kind: "user", schema: "user", username, family: "f" });
const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status?: number }) => e.status ?? 500,
  );
const eq = (field: string, value: string): Conditions => ({ where: [{ field, op: "eq", value, key: field }], or: null });
const text = async (key: string) => JSON.parse(await t.burrow.data.get(app(), "mine", key)).text;

beforeAll(async () => {
  t = await makeTestApp();
  const r = await t.admin("PUT", "/schemas/mine", {
    fields: { text: { type: "string" }, n: { type: "integer" } },
    permissions: { create: "open", read: "owner", update: "owner", delete: "owner" },
  });
  expect(r.status).toBe(201);
  const data = t.burrow.data;
  await data.create(app(), "user", [
    { username: "ann", password: "ann-password" },
    { username: "bob", password: "bob-password" },
  ]);
  await data.create(app(), "mine", [
    { mine_id: "a1", text: "x", n: 1, sm_owner: "user/ann" },
    { mine_id: "a2", text: "x", n: 2, sm_owner: "user/ann" },
    { mine_id: "b1", text: "x", n: 3, sm_owner: "user/bob" },
  ]);
});
afterAll(() => t.close());

test("count covers the matches the caller may read", async () => {
  const data = t.burrow.data;
  expect(await data.count(user("ann"), "mine", eq("text", "x"))).toBe(2);
  expect(await data.count(user("bob"), "mine", eq("text", "x"))).toBe(1);
  expect(await data.count(app(), "mine", { where: [], or: null })).toBe(3);
  expect(await status(data.count(ctx({ kind: "anonymous" }), "mine", eq("text", "x")))).toBe(401);
});

test("updateWhere changes only what the caller may update", async () => {
  const data = t.burrow.data;
  expect(await data.updateWhere(user("bob"), "mine", eq("text", "x"), { text: "bob was here", "n[inc]": 10 })).toBe(1);
  expect([await text("a1"), await text("a2"), await text("b1")]).toEqual(["x", "x", "bob was here"]);
  expect(JSON.parse(await data.get(app(), "mine", "b1")).n).toBe(13);
  expect(await data.updateWhere(app(), "mine", eq("text", "x"), { "n[inc]": 1 })).toBe(2);
  expect(JSON.parse(await data.get(app(), "mine", "a2")).n).toBe(3);
  expect(await status(data.updateWhere(app(), "mine", { where: [], or: null }, { text: "all" }))).toBe(400);
});

test("updateIf: another user's object is null and unchanged; the owner's changes when it matches", async () => {
  const data = t.burrow.data;
  expect(await data.updateIf(user("bob"), "mine", "a1", { text: "stolen" }, eq("text", "x"))).toBeNull();
  expect(await text("a1")).toBe("x");
  expect(await data.updateIf(user("ann"), "mine", "a1", { text: "mine" }, eq("text", "not x"))).toBeNull();
  expect(await text("a1")).toBe("x");
  expect(JSON.parse((await data.updateIf(user("ann"), "mine", "a1", { text: "mine" }, eq("text", "x")))!).text).toBe("mine");
  expect(await data.updateIf(app(), "mine", "nobody", { text: "y" }, eq("text", "x"))).toBeNull();
  expect(await status(data.update(app(), "mine", "nobody", { text: "y" }))).toBe(404);
});

test("passwords change only by the private key or the server itself", async () => {
  const data = t.burrow.data;
  expect(await status(data.update(user("ann"), "user", "ann", { password: "new-password" }))).toBe(400);
  expect(await status(data.update(app(), "user", "ann", { password: "new-password" }))).toBe(200);
  const system = devContext(t);
  expect(await status(data.update(system, "user", "ann", { password: "newer-password" }))).toBe(200);
});

test("removeWhere by a missing key: 404 by default, 0 when asked", async () => {
  const data = t.burrow.data;
  expect(await status(data.removeWhere(app(), "mine", eq("mine_id", "ghost")))).toBe(404);
  expect(await data.removeWhere(app(), "mine", eq("mine_id", "ghost"), { missingKeyIs404: false })).toBe(0);
  expect(await data.removeWhere(app(), "mine", eq("mine_id", "a2"), { missingKeyIs404: false })).toBe(1);
});
