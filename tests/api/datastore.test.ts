// The Datastore called directly, as custom code will call it (no Request): it applies access control itself,
// counts only what the caller may read, and the system principal of the status API counts everything. Login
// reads the user row once.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Accounts, type UserRows } from "../../src/auth/accounts.ts";
import { MemoryRateLimiter } from "../../src/auth/rate-limit.ts";
import { andScope } from "../../src/datastore/access.ts";
import { userRows } from "../../src/datastore/user-rows.ts";
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

beforeAll(async () => {
  t = await makeTestApp();
  for (const [name, read] of [
    ["mine", "owner"],
    ["hidden", "none"],
    ["pub", "open"],
  ] as const) {
    const r = await t.admin("PUT", `/schemas/${name}`, {
      fields: { text: { type: "string" } },
      permissions: { create: "open", read, update: read, delete: read },
    });
    expect(r.status).toBe(201);
  }
  const data = t.burrow.data;
  expect(
    (
      await data.create(app(), "user", [
        { username: "ann", password: "ann-password" },
        { username: "bob", password: "bob-password" },
      ])
    ).succeeded,
  ).toEqual(["ann", "bob"]);
  await data.create(app(), "mine", [
    { text: "a1", sm_owner: "user/ann" },
    { text: "a2", sm_owner: "user/ann" },
    { text: "b1", sm_owner: "user/bob" },
  ]);
  await data.create(app(), "pub", [{ text: "p" }]);
});
afterAll(() => t.close());

describe("andScope", () => {
  test("ANDs a scope and appends its arguments; without one the clause is unchanged", () => {
    expect(andScope("t.k = ?", ["x"], { sql: `t."sm_owner" = ?`, args: ["user/ann"] })).toEqual({
      sql: `t.k = ? AND (t."sm_owner" = ?)`,
      args: ["x", "user/ann"],
    });
    expect(andScope("t.k = ?", ["x"], null)).toEqual({ sql: "t.k = ?", args: ["x"] });
  });
});

describe("the datastore checks access itself", () => {
  test("counts cover what the caller may read; the system principal counts everything", async () => {
    const data = t.burrow.data;
    const ann = await data.counts(user("ann"));
    expect(ann.mine).toBe(2);
    expect(ann.pub).toBe(1);
    expect("hidden" in ann).toBe(false);
    expect("mine" in (await data.counts(ctx({ kind: "anonymous" })))).toBe(false);
    const all = await data.counts(devContext(t));
    expect([all.mine, all.pub, all.hidden]).toEqual([3, 1, 0]);
  });

  test("reads, lists and deletes stay inside the caller's scope", async () => {
    const data = t.burrow.data;
    const tree = { where: [], or: null, select: null, expand: 0, orderBy: [], range: null };
    expect(JSON.parse((await data.list(user("bob"), "mine", tree)).body).map((o: { text: string }) => o.text)).toEqual(["b1"]);
    expect(await status(data.list(ctx({ kind: "anonymous" }), "mine", tree))).toBe(401);
    expect(await status(data.list(app(), "hidden", tree))).toBe(405);
    const a1 = JSON.parse(
      (await data.list(user("ann"), "mine", { ...tree, where: [{ field: "text", op: "eq", value: "a1", key: "text" }] })).body,
    )[0].mine_id;
    expect(await status(data.get(user("bob"), "mine", a1))).toBe(404);
    expect(JSON.parse(await data.get(user("ann"), "mine", a1, { select: [["text"]], expand: 0 }))).toEqual({ mine_id: a1, text: "a1" });
    expect(await data.removeWhere(user("bob"), "mine", { where: [{ field: "text", op: "eq", value: "a1", key: "text" }], or: null })).toBe(
      0,
    );
    expect(await status(data.remove(user("bob"), "mine", a1))).toBe(404);
    await data.remove(user("ann"), "mine", a1);
    expect((await data.counts(user("ann"))).mine).toBe(1);
  });
});

test("login reads the user row once (JSON and hash together)", async () => {
  const calls: string[] = [];
  const users = Object.fromEntries(
    Object.entries(userRows).map(([name, fn]) => [
      name,
      (...args: unknown[]) => (calls.push(name), (fn as (...a: unknown[]) => unknown)(...args)),
    ]),
  ) as unknown as UserRows;
  const accounts = new Accounts({
    sessions: (c) => t.burrow.sessions[c.env],
    limiter: new MemoryRateLimiter(),
    users,
    mailer: { send: async () => ({}), isAddress: () => true, keepUnsent: async () => ({}) },
    limits: () => ({ ipPerMinute: 100, failedLoginsPerAccount: 5, failedLoginWindowMinutes: 1, signupsPerIpPerHour: 100 }),
    appName: () => "test",
  });
  const anonymous = ctx({ kind: "anonymous" });
  const r = JSON.parse(
    await accounts.login(anonymous, accounts.userSchema(anonymous, "user"), { username: "ann", password: "ann-password" }, null),
  );
  expect(r.service.user.username).toBe("ann");
  expect(r.service.user.password).toBeUndefined();
  expect(calls).toEqual(["forLogin"]);
});
