// Hooks through HTTP: before-hooks changing and refusing objects on every write path (create, batch, update,
// counters, save, relationship paths, update and delete by query, the console, custom code), failures and time
// limits as 500 with nothing written, the depth limit, sign-up hooks, and after-hooks queued in the write's own
// transaction and run with the change's id, caller and source (a cascade included).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { systemContext } from "../../src/request-context.ts";

let t: TestApp;

const MODULE = `
const audit = (services, change, extra = {}) =>
  services.data.create("audit", {
    ref: change.key ?? change.object?.order_id ?? "?",
    event: change.event,
    source: change.source,
    who: change.user ?? "-",
    auth: change.auth,
    change: change.id,
    title: (change.object ?? change.previous)?.title ?? "",
    before: change.previous?.title ?? "",
    ...extra,
  });
export const hooks = {
  order: {
    beforeCreate(change) {
      const o = change.object;
      if (o.title === "refuse") throw reject(422, "orders need a real title");
      if (o.title === "throw") throw new Error("boom");
      if (o.title === "slow") return new Promise(() => {});
      if (o.title === "array") return [1, 2];
      if (o.title === "badtype") return { ...o, total: "many" };
      return { ...o, title: String(o.title ?? "").trim(), status: o.status ?? "new", seen_source: change.source };
    },
    afterCreate: (change, services) => audit(services, change),
    beforeUpdate(change) {
      if (change.object.total < 0) throw reject(400, "total cannot be negative");
      if (change.changes.title === "upper") return { ...change.object, title: "UPPER" };
      if (change.changes.title === "drop-status") { const { status, ...rest } = change.object; return rest; }
    },
    afterUpdate: (change, services) => audit(services, change),
    beforeDelete(change) {
      if (change.previous.status === "locked") throw reject(409, "locked orders stay");
    },
    afterDelete: (change, services) => audit(services, change),
  },
  line: {
    beforeDelete(change) {
      if (change.previous.label === "KEEP") throw reject(409, "this line stays (" + change.source + ")");
    },
    beforeCreate(change) {
      if (change.object.label === "no") throw reject(400, "no lines labelled no");
      return { ...change.object, label: String(change.object.label).toUpperCase() };
    },
  },
  flaky: {
    afterCreate(change) {
      if (change.object.fail) throw new Error("the audit service is down");
    },
  },
  chain: {
    async afterCreate(change, services) {
      await services.data.create("chain", { n: change.object.n + 1 });
    },
  },
  loop: {
    async beforeCreate(change, services) {
      await services.data.create("loop", { n: change.object.n + 1 });
    },
  },
  user: {
    beforeSignup(change) {
      if (!change.object.email) throw reject(400, "an email is needed to sign up");
      if (change.object.password !== undefined) throw reject(500, "the hook saw a password");
    },
    afterSignup: (change, services) => audit(services, { ...change, key: change.key }),
  },
};
export const methods = [
  { name: "make_order", async execute(r, services) { return { body: await services.data.create("order", { title: "  from code " }) }; } },
  { name: "retitle", params: ["status", "title"], async execute(r, services) {
    try {
      return { body: { changed: await services.data.updateWhere("order", { where: { status: r.params.status } }, { set: { title: r.params.title } }) } };
    } catch (e) { return { status: 418, body: { error: String(e.message) } }; }
  } },
];`;

const open = { create: "open", read: "open", update: "open", delete: "open" };

/** The audit rows of an object once its after-hooks ran (waits up to 5 s for `count` of them). */
async function auditOf(ref: string, count = 1): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 100; i++) {
    const r = await t.request("GET", `/audit?ref=${encodeURIComponent(ref)}`, { headers: { "x-service-orderby": "change" } });
    if (r.status === 200 && (r.body as unknown[]).length >= count) return r.body as Record<string, unknown>[];
    await Bun.sleep(50);
  }
  throw new Error(`no audit rows for ${ref}`);
}

beforeAll(async () => {
  t = await makeTestApp();
  const fields = {
    title: { type: "string" },
    status: { type: "string" },
    total: { type: "integer" },
    seen_source: { type: "string" },
    lines: { type: "relationship", schema: "line", many: true },
  };
  expect((await t.admin("PUT", "/schemas/line", { fields: { label: { type: "string" } }, permissions: open })).status).toBeLessThan(300);
  expect((await t.admin("PUT", "/schemas/order", { fields, permissions: open })).status).toBeLessThan(300);
  const auditFields = Object.fromEntries(
    ["ref", "event", "source", "who", "auth", "title", "before"].map((f) => [f, { type: "string" }]),
  ) as Record<string, unknown>;
  auditFields.change = { type: "integer" };
  expect((await t.admin("PUT", "/schemas/audit", { fields: auditFields, permissions: open })).status).toBeLessThan(300);
  expect((await t.admin("PUT", "/schemas/flaky", { fields: { fail: { type: "boolean" } }, permissions: open })).status).toBeLessThan(300);
  expect((await t.admin("PUT", "/schemas/chain", { fields: { n: { type: "integer" } }, permissions: open })).status).toBeLessThan(300);
  expect((await t.admin("PUT", "/schemas/loop", { fields: { n: { type: "integer" } }, permissions: open })).status).toBeLessThan(300);
  const up = await upload(t, MODULE);
  expect(up.status).toBe(200);
  expect(up.body.hooks).toEqual({
    order: ["beforeCreate", "afterCreate", "beforeUpdate", "afterUpdate", "beforeDelete", "afterDelete"],
    chain: ["afterCreate"],
    loop: ["beforeCreate"],
    line: ["beforeDelete", "beforeCreate"],
    flaky: ["afterCreate"],
    user: ["beforeSignup", "afterSignup"],
  });
  expect((await t.admin("PUT", "/settings/development", { code: { hooks: { timeoutMs: 500 } } })).status).toBe(200);
});
afterAll(() => t.close());

describe("before-hooks", () => {
  test("a create is written as the hook returned it; the after-hook runs once with the change's id and source", async () => {
    const r = await t.request("POST", "/order", { body: { title: "  tea  ", total: 3 } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ title: "tea", status: "new", total: 3, seen_source: "api" });
    const [a] = await auditOf(r.body.order_id);
    expect(a).toMatchObject({ event: "afterCreate", source: "api", who: "-", auth: "public key", title: "tea" });
    expect(typeof a!.change).toBe("number");
    await Bun.sleep(200);
    expect((await auditOf(r.body.order_id)).length).toBe(1);
  });

  test("a refusal answers the hook's status and message; a failure or a time-out is 500; nothing is written", async () => {
    const before = (await t.request("GET", "/order")).body.length;
    const refused = await t.request("POST", "/order", { body: { title: "refuse" } });
    expect([refused.status, refused.body]).toEqual([422, { error: "orders need a real title" }]);
    const thrown = await t.request("POST", "/order", { body: { title: "throw" } });
    expect(thrown.status).toBe(500);
    expect(thrown.body.error).toBe("hook order.beforeCreate failed: boom");
    const slow = await t.request("POST", "/order", { body: { title: "slow" } });
    expect(slow.status).toBe(500);
    expect(slow.body.error).toBe("hook order.beforeCreate failed: the hook ran longer than 500 ms");
    const arr = await t.request("POST", "/order", { body: { title: "array" } });
    expect([arr.status, arr.body.error]).toEqual([
      500,
      "hook order.beforeCreate returned an array: a before-hook returns the object to write, or nothing",
    ]);
    // What a hook returns is checked as if the client had sent it.
    const bad = await t.request("POST", "/order", { body: { title: "badtype" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("total");
    expect((await t.request("GET", "/order")).body.length).toBe(before);
    const logs = await t.admin("GET", "/logs?source=code&env=development&limit=20");
    expect(JSON.stringify(logs.body)).toContain("hook order.beforeCreate failed: boom");
  });

  test("a batch runs the hook per object: a refused one is failed in its place", async () => {
    const r = await t.request("POST", "/order", { body: [{ title: " a " }, { title: "refuse" }, { order_id: "kept-b", title: "b" }] });
    expect(r.status).toBe(200);
    expect(r.body.failed).toEqual(["1"]);
    expect(r.body.succeeded.length).toBe(2);
    expect(r.body.succeeded[1]).toBe("kept-b");
    const first = await t.request("GET", `/order/${r.body.succeeded[0]}`);
    expect(first.body).toMatchObject({ title: "a", seen_source: "batch" });
    expect((await auditOf("kept-b"))[0]).toMatchObject({ source: "batch" });
  });

  test("updates: the hook sees the object as it would be, the stored one and the changes; counters stay atomic", async () => {
    const o = (await t.request("POST", "/order", { body: { title: "u", total: 5 } })).body;
    const up = await t.request("PUT", `/order/${o.order_id}`, { body: { title: "upper" } });
    expect([up.status, up.body.title]).toEqual([200, "UPPER"]);
    const neg = await t.request("PUT", `/order/${o.order_id}`, { body: { "total[inc]": -10 } });
    expect([neg.status, neg.body]).toEqual([400, { error: "total cannot be negative" }]);
    const inc = await t.request("PUT", `/order/${o.order_id}`, { body: { "total[inc]": 2 } });
    expect([inc.status, inc.body.total]).toEqual([200, 7]);
    const dropped = await t.request("PUT", `/order/${o.order_id}`, { body: { title: "drop-status" } });
    expect(dropped.status).toBe(200);
    expect(dropped.body.status).toBeUndefined();
    const rows = await auditOf(o.order_id, 4);
    expect(rows.map((r) => [r.event, r.source])).toEqual([
      ["afterCreate", "api"],
      ["afterUpdate", "api"],
      ["afterUpdate", "counter"],
      ["afterUpdate", "api"],
    ]);
    expect(rows[1]).toMatchObject({ title: "UPPER", before: "u" });
  });

  test("deletes: a refusal keeps the object; by query, one refusal refuses the whole write", async () => {
    const locked = (await t.request("POST", "/order", { body: { title: "l", status: "locked" } })).body;
    const gone = (await t.request("POST", "/order", { body: { title: "g", status: "q" } })).body;
    const del = await t.request("DELETE", `/order/${locked.order_id}`);
    expect([del.status, del.body]).toEqual([409, { error: "locked orders stay" }]);
    expect((await t.request("GET", `/order/${locked.order_id}`)).status).toBe(200);
    const byQuery = await t.request("DELETE", "/order?status[in]=locked,q");
    expect(byQuery.status).toBe(409);
    expect((await t.request("GET", `/order/${gone.order_id}`)).status).toBe(200);
    const ok = await t.request("DELETE", "/order?status=q");
    expect(ok.status).toBe(200);
    expect((await t.request("GET", `/order/${gone.order_id}`)).status).toBe(404);
    const rows = await auditOf(gone.order_id, 2);
    expect(rows[1]).toMatchObject({ event: "afterDelete", source: "query", before: "g" });
  });

  test("update by query runs the hook per object, each written as its hook returned it", async () => {
    const a = (await t.request("POST", "/order", { body: { title: "qa", status: "batch-q" } })).body;
    const b = (await t.request("POST", "/order", { body: { title: "qb", status: "batch-q" } })).body;
    const r = await t.request("GET", "/retitle?status=batch-q&title=upper");
    expect([r.status, r.body]).toEqual([200, { changed: 2 }]);
    for (const o of [a, b]) expect((await t.request("GET", `/order/${o.order_id}`)).body.title).toBe("UPPER");
    expect((await t.admin("PUT", "/settings/development", { code: { hooks: { maxPerQuery: 1 } } })).status).toBe(200);
    const over = await t.request("GET", "/retitle?status=batch-q&title=x");
    expect(over.status).toBe(418);
    expect(over.body.error).toContain("more than 1 objects of order");
    expect((await t.admin("PUT", "/settings/development", { code: { hooks: { maxPerQuery: null } } })).status).toBe(200);
    // Written by custom code: the source says so.
    expect((await auditOf(a.order_id, 2))[1]).toMatchObject({ source: "code", title: "UPPER" });
  });

  test("save, the console and custom code report their source", async () => {
    const saved = await t.request("POST", "/order", {
      body: { order_id: "saved-1", title: " s " },
      headers: { "x-service-relations": "" },
    });
    expect([saved.status, saved.body.seen_source]).toEqual([201, "save"]);
    const consoled = await t.admin("POST", "/data/development/order", { title: " c " });
    expect(consoled.status).toBe(201);
    expect(consoled.body).toMatchObject({ title: "c", seen_source: "console" });
    expect((await auditOf(consoled.body.order_id))[0]).toMatchObject({ source: "console", auth: "admin" });
    const coded = await t.request("GET", "/make_order");
    expect(coded.status).toBe(200);
    expect(coded.body).toMatchObject({ title: "from code", seen_source: "code" });
    expect((await auditOf(coded.body.order_id))[0]).toMatchObject({ source: "code", auth: "code" });
  });

  test("relationship paths run the parent's beforeUpdate; a cascade's after-hooks say so", async () => {
    const o = (await t.request("POST", "/order", { body: { title: "rel" } })).body;
    const made = await t.request("POST", `/order/${o.order_id}/lines`, { body: { label: "x" } });
    expect(made.status).toBeLessThan(300);
    const line = await t.request("GET", `/line/${made.body.succeeded[0]}`);
    expect(line.body.label).toBe("X");
    const refused = await t.request("POST", `/order/${o.order_id}/lines`, { body: { label: "no" } });
    expect([refused.status, refused.body]).toEqual([400, { error: "no lines labelled no" }]);
    // Pulled with cascade: the related object's beforeDelete runs first, and may refuse.
    const kept = await t.request("POST", `/order/${o.order_id}/lines`, { body: { label: "keep" } });
    const keptId = kept.body.succeeded[0];
    const pull = await t.request("DELETE", `/order/${o.order_id}/lines/${keptId}`, { headers: { "x-service-cascadedelete": "true" } });
    expect([pull.status, pull.body]).toEqual([409, { error: "this line stays (cascade)" }]);
    expect((await t.request("GET", `/line/${keptId}`)).status).toBe(200);
    const gone = await t.request("DELETE", `/order/${o.order_id}/lines/${made.body.succeeded[0]}`, {
      headers: { "x-service-cascadedelete": "true" },
    });
    expect(gone.status).toBeLessThan(300);
    expect((await t.request("GET", `/line/${made.body.succeeded[0]}`)).status).toBe(404);
    const rows = await auditOf(o.order_id, 2);
    expect(rows[1]).toMatchObject({ event: "afterUpdate", source: "relationship" });
  });

  test("a nested save runs every object's before-hook before its one transaction", async () => {
    const r = await t.request("POST", "/order", {
      body: { title: " nest ", lines: [{ label: "a" }, { label: "b" }] },
      headers: { "x-service-relations": "lines=line" },
    });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe("nest");
    expect(r.body.lines.map((l: { label: string }) => l.label)).toEqual(["A", "B"]);
    const refused = await t.request("POST", "/order", {
      body: { order_id: "nest-no", title: "n", lines: [{ label: "a" }, { label: "no" }] },
      headers: { "x-service-relations": "lines=line" },
    });
    expect([refused.status, refused.body]).toEqual([400, { error: "no lines labelled no" }]);
    expect((await t.request("GET", "/order/nest-no")).status).toBe(404);
    // Saved again: the existing order runs beforeUpdate (title "upper" becomes "UPPER").
    const again = await t.request("POST", "/order", {
      body: { order_id: r.body.order_id, title: "upper", lines: [{ label: "c" }] },
      headers: { "x-service-relations": "lines=line" },
    });
    expect([again.status, again.body.title, again.body.lines[0].label]).toEqual([200, "UPPER", "C"]);
  });

  test("hooks writing what runs them again stop at depth 3 with a clear error", async () => {
    const r = await t.request("POST", "/loop", { body: { n: 0 } });
    expect(r.status).toBe(500);
    expect(r.body.error).toContain("hooks nested too deep");
    expect((await t.request("GET", "/loop")).body).toEqual([]);
  });
});

describe("sign-up hooks", () => {
  test("beforeSignup refuses or lets through (without the password); afterSignup runs once", async () => {
    const refused = await t.request("POST", "/user", { body: { username: "nomail", password: "secret-1" } });
    expect([refused.status, refused.body]).toEqual([400, { error: "an email is needed to sign up" }]);
    const ok = await t.request("POST", "/user", { body: { username: "mailer", password: "secret-1", email: "m@example.com" } });
    expect(ok.status).toBe(201);
    expect((await auditOf("mailer"))[0]).toMatchObject({ event: "afterSignup", source: "api", auth: "public key" });
    // The account signs in with the password the hook never saw.
    const login = await t.request("POST", "/user/accessToken", {
      raw: "grant_type=password&username=mailer&password=secret-1&token_type=mac",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(login.status).toBe(200);
  });
});

describe("after-hooks", () => {
  test("after-hooks writing what runs them again stop at depth 3: the last change is dead at once", async () => {
    expect((await t.request("POST", "/chain", { body: { n: 0 } })).status).toBe(201);
    let dead: Record<string, unknown>[] = [];
    for (let i = 0; i < 100 && dead.length === 0; i++) {
      await Bun.sleep(50);
      dead = (await t.admin("GET", "/hooks/dead?env=development")).body.dead.filter((d: { schema: string }) => d.schema === "chain");
    }
    expect(dead.length).toBe(1);
    expect(dead[0]!.attempts).toBe(1);
    expect(String(dead[0]!.error)).toContain("hooks nested too deep");
    const made = (await t.request("GET", "/chain", { headers: { "x-service-orderby": "n" } })).body.map((o: { n: number }) => o.n);
    expect(made).toEqual([0, 1, 2]);
    expect((await t.admin("DELETE", `/hooks/dead/${dead[0]!.id}?env=development`)).status).toBe(200);
  });

  test("a user's deletion clears the owner of its objects: their afterUpdate says cascade", async () => {
    await t.request("POST", "/user", { body: { username: "owner1", password: "secret-1", email: "o@example.com" } });
    const login = await t.request("POST", "/user/accessToken", {
      raw: "grant_type=password&username=owner1&password=secret-1&token_type=mac",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(login.status).toBe(200);
    const consoled = await t.admin("POST", "/data/development/order", { title: "owned", sm_owner: "user/owner1" });
    expect(consoled.status).toBe(201);
    const id = consoled.body.order_id as string;
    expect((await t.admin("DELETE", "/data/development/user/owner1")).status).toBeLessThan(300);
    const rows = await auditOf(id, 2);
    expect(rows[1]).toMatchObject({ event: "afterUpdate", source: "cascade", title: "owned" });
  });

  test("a failing after-hook is tried again, then listed as dead; retried or removed through the admin API", async () => {
    expect((await t.admin("PUT", "/settings/development", { code: { hooks: { attempts: 2 } } })).status).toBe(200);
    const made = await t.request("POST", "/flaky", { body: { fail: true } });
    expect(made.status).toBe(201);
    let dead: Record<string, unknown>[] = [];
    for (let i = 0; i < 100 && dead.length === 0; i++) {
      await Bun.sleep(50);
      dead = (await t.admin("GET", "/hooks/dead?env=development")).body.dead;
    }
    expect(dead.length).toBe(1);
    expect(dead[0]).toMatchObject({
      schema: "flaky",
      event: "afterCreate",
      key: made.body.flaky_id,
      attempts: 2,
      source: "api",
      error: "hook flaky.afterCreate failed: the audit service is down",
    });
    const overview = await t.admin("GET", "/hooks?env=development");
    expect(overview.body.queue).toMatchObject({ queued: 0, dead: 1 });
    expect(overview.body.hooks.flaky).toEqual(["afterCreate"]);
    const logs = await t.admin("GET", "/logs?source=code&env=development&limit=50");
    expect(JSON.stringify(logs.body)).toContain("the audit service is down");
    // Retried: it fails again (twice more), so it comes back to the list.
    const retry = await t.admin("POST", `/hooks/dead/${dead[0]!.id}/retry?env=development`);
    expect(retry.status).toBe(202);
    expect((await t.admin("GET", "/hooks/dead?env=development")).body.dead).toEqual([]);
    for (let i = 0; i < 100 && (await t.admin("GET", "/hooks/dead?env=development")).body.dead.length === 0; i++) await Bun.sleep(50);
    expect((await t.admin("DELETE", `/hooks/dead/${dead[0]!.id}?env=development`)).status).toBe(200);
    expect((await t.admin("DELETE", `/hooks/dead/${dead[0]!.id}?env=development`)).status).toBe(404);
    expect((await t.admin("POST", "/hooks/dead/x/retry?env=development")).status).toBe(400);
    expect((await t.admin("GET", "/hooks/dead?env=staging")).status).toBe(404);
    expect((await t.admin("PUT", "/settings/development", { code: { hooks: { attempts: null } } })).status).toBe(200);
  });
});

describe("imports", () => {
  const ctx = () => systemContext("development", t.burrow.envDbs.development, t.burrow.catalog.development(), () => "http://127.0.0.1");

  test("run no hooks by default; with hooks each row goes through beforeCreate and queues its after-hooks", async () => {
    const plain = await t.burrow.data.importRows(ctx(), "order", [{ line: 1, body: { order_id: "imp-1", title: "  raw  " } }]);
    expect(plain).toEqual({ inserted: 1, rejected: [] });
    expect((await t.request("GET", "/order/imp-1")).body.title).toBe("  raw  ");
    const hooked = await t.burrow.data.importRows(
      ctx(),
      "order",
      [
        { line: 1, body: { order_id: "imp-2", title: "  cooked  " } },
        { line: 2, body: { order_id: "imp-3", title: "refuse" } },
      ],
      new Map(),
      [],
      false,
      true,
    );
    expect(hooked).toEqual({ inserted: 1, rejected: [{ line: 2, reason: "orders need a real title" }] });
    expect((await t.request("GET", "/order/imp-2")).body).toMatchObject({ title: "cooked", seen_source: "import" });
    expect((await auditOf("imp-2"))[0]).toMatchObject({ event: "afterCreate", source: "import" });
    await Bun.sleep(300);
    expect((await t.request("GET", "/audit?ref=imp-1")).body).toEqual([]);
  });
});

describe("versions", () => {
  test("production version N runs version N's hooks, for its clients, after a newer deploy too", async () => {
    const p = await makeTestApp();
    try {
      const open2 = { create: "open", read: "open", update: "open", delete: "open" };
      await p.admin("PUT", "/schemas/note", { fields: { title: { type: "string" }, by: { type: "string" } }, permissions: open2 });
      await p.admin("PUT", "/schemas/trail", { fields: { ref: { type: "string" }, v: { type: "string" } }, permissions: open2 });
      const code = (v: string) => `export const hooks = { note: {
        beforeCreate(c) { return { ...c.object, by: "${v}" }; },
        async afterCreate(c, s) { await s.data.create("trail", { ref: c.key, v: "${v}" }); },
      } };`;
      expect((await upload(p, code("v1"))).status).toBe(200);
      expect((await p.admin("POST", "/deploy", {})).status).toBeLessThan(300);
      expect((await upload(p, code("v2"))).status).toBe(200);
      expect((await p.admin("POST", "/deploy", {})).status).toBeLessThan(300);
      const prod = (version: number, body: unknown) => p.request("POST", "/note", { body, version, key: KEYS.prodPublic });
      const one = await prod(1, { title: "a" });
      const two = await prod(2, { title: "b" });
      expect([one.status, one.body.by, two.status, two.body.by]).toEqual([201, "v1", 201, "v2"]);
      const trail = async (ref: string) => {
        for (let i = 0; i < 100; i++) {
          const r = await p.request("GET", `/trail?ref=${ref}`, { version: 2, key: KEYS.prodPublic });
          if (r.body.length) return r.body[0].v;
          await Bun.sleep(50);
        }
        return null;
      };
      expect([await trail(one.body.note_id), await trail(two.body.note_id)]).toEqual(["v1", "v2"]);
      // A change queued under version 3 whose hook fails once runs again with version 3's code after version 4's deploy.
      const flaky = (v: string) => `export const hooks = { note: { async afterCreate(c, s) {
        if (!(await s.cache.get("t" + c.id))) { await s.cache.set("t" + c.id, "1", 60000); throw new Error("the first try fails"); }
        await s.data.create("trail", { ref: c.key, v: "${v}" });
      } } };`;
      expect((await upload(p, flaky("v3"))).status).toBe(200);
      expect((await p.admin("POST", "/deploy", {})).status).toBeLessThan(300);
      const three = await prod(3, { title: "c" });
      expect(three.status).toBe(201);
      expect((await upload(p, flaky("v4"))).status).toBe(200);
      expect((await p.admin("POST", "/deploy", {})).status).toBeLessThan(300);
      expect(await trail(three.body.note_id)).toBe("v3");
      // Development runs the newest upload.
      expect((await upload(p, code("dev"))).status).toBe(200);
      expect((await p.request("POST", "/note", { body: { title: "c" } })).body.by).toBe("dev");
    } finally {
      await p.close();
    }
  });
});
