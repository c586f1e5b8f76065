// The change log: while a live stream exists, every write path adds its rows in the write's own transaction (database
// triggers), with the object before and after as full JSON; nothing is logged for reads, refused writes, quiet
// imports, or when no stream exists; ended sessions are logged; ids only grow, also after pruning; migrations keep the
// triggers in step with the columns.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { pruneChanges } from "../../src/live/change-feed.ts";
import { sweepStreams } from "../../src/live/stream-store.ts";

let t: TestApp;
const db = () => t.burrow.envDbs.development;

interface Row {
  kind: string;
  schema: string | null;
  object: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

async function lastId(): Promise<number> {
  const rs = await db().execute("SELECT coalesce(max(id), 0) AS m FROM _burrow_changes");
  return Number(rs.rows[0]!.m);
}

/** The change log rows a write added. */
async function changesOf(write: () => Promise<unknown>): Promise<Row[]> {
  const from = await lastId();
  await write();
  const rs = await db().execute({
    sql: "SELECT kind, schema, object, before, after FROM _burrow_changes WHERE id > ? ORDER BY id",
    args: [from],
  });
  return rs.rows.map((r) => ({
    kind: r.kind as string,
    schema: (r.schema as string | null) ?? null,
    object: (r.object as string | null) ?? null,
    before: r.before === null ? null : JSON.parse(r.before as string),
    after: r.after === null ? null : JSON.parse(r.after as string),
  }));
}

const brief = (rows: Row[]) => rows.map((r) => [r.kind, r.schema, r.object]);

async function ok<T extends { status: number; text: string }>(p: Promise<T>, status = 200): Promise<T> {
  const r = await p;
  expect([r.status, r.text.slice(0, 200)]).toEqual([status, r.text.slice(0, 200)]);
  return r;
}

const CODE = `
export const methods = [
  { name: "code_write", async execute(r, s) {
      const [op, ...args] = JSON.parse(r.body);
      return { body: { v: (await s.data[op](...args)) ?? null } };
  } },
];`;

beforeAll(async () => {
  t = await makeTestApp();
  await ok(t.admin("PUT", "/schemas/kid", { fields: { name: { type: "string" } } }), 201);
  await ok(
    t.admin("PUT", "/schemas/thing", {
      fields: {
        title: { type: "string" },
        n: { type: "integer" },
        tags: { type: "array", items: "string" },
        kids: { type: "relationship", schema: "kid", many: true },
        owner: { type: "relationship", schema: "user" },
      },
    }),
    201,
  );
  await ok(upload(t, CODE));
  // Writes are logged while any live stream exists.
  await ok(t.request("POST", "/_live/streams"), 201);
});
afterAll(() => t.close());

describe("every write path logs its changes", () => {
  test("create, batch, update, counters, delete: one row each, with the full object before and after", async () => {
    const created = await changesOf(() => ok(t.request("POST", "/thing", { body: { thing_id: "a", title: "A", n: 1 } }), 201));
    expect(brief(created)).toEqual([["create", "thing", "a"]]);
    expect(created[0]!.before).toBeNull();
    expect(created[0]!.after).toMatchObject({ thing_id: "a", title: "A", n: 1 });
    expect(created[0]!.after).not.toHaveProperty("tags"); // NULL fields are left out, as in answers

    const batch = await changesOf(() =>
      ok(t.request("POST", "/thing", { body: [{ thing_id: "b" }, { thing_id: "c" }, { thing_id: "a" }] })),
    );
    expect(brief(batch)).toEqual([
      ["create", "thing", "b"],
      ["create", "thing", "c"],
    ]);

    const updated = await changesOf(() => ok(t.request("PUT", "/thing/a", { body: { title: "A2", "n[inc]": 2 } })));
    expect(brief(updated)).toEqual([["update", "thing", "a"]]);
    expect([updated[0]!.before!.title, updated[0]!.before!.n, updated[0]!.after!.title, updated[0]!.after!.n]).toEqual(["A", 1, "A2", 3]);

    const deleted = await changesOf(() => ok(t.request("DELETE", "/thing/c")));
    expect(brief(deleted)).toEqual([["delete", "thing", "c"]]);
    expect(deleted[0]!.before).toMatchObject({ thing_id: "c" });
    expect(deleted[0]!.after).toBeNull();
  });

  test("save, nested upsert, relationship paths and a cascade", async () => {
    const saved = await changesOf(() =>
      ok(t.request("POST", "/thing", { body: { thing_id: "b", title: "saved" }, headers: { "x-service-relations": "" } })),
    );
    expect(brief(saved)).toEqual([["update", "thing", "b"]]);

    const nested = await changesOf(() =>
      ok(
        t.request("POST", "/thing", {
          body: { thing_id: "d", kids: [{ kid_id: "k1", name: "one" }] },
          headers: { "x-service-relations": "kids=kid" },
        }),
        201,
      ),
    );
    expect(brief(nested).sort()).toEqual([
      ["create", "kid", "k1"],
      ["create", "thing", "d"],
    ]);

    const related = await changesOf(() => ok(t.request("POST", "/thing/d/kids", { body: { kid_id: "k2", name: "two" } })));
    expect(brief(related)).toEqual([
      ["create", "kid", "k2"],
      ["update", "thing", "d"],
    ]);

    const appended = await changesOf(() => ok(t.request("PUT", "/thing/d/tags", { body: ["x", "y"] })));
    expect(brief(appended)).toEqual([["update", "thing", "d"]]);
    expect(appended[0]!.after!.tags).toEqual(["x", "y"]);

    const cascade = await changesOf(() => ok(t.request("DELETE", "/thing/d/kids/k1", { headers: { "x-service-cascadedelete": "true" } })));
    expect(brief(cascade).sort()).toEqual([
      ["delete", "kid", "k1"],
      ["update", "thing", "d"],
    ]);
  });

  test("update and delete by query, the console's data API and custom code", async () => {
    const byQuery = await changesOf(() =>
      ok(
        t.request("POST", "/code_write", {
          raw: JSON.stringify(["updateWhere", "thing", { where: { title: "saved" } }, { set: { n: 7 } }]),
        }),
      ),
    );
    expect(brief(byQuery)).toEqual([["update", "thing", "b"]]);

    const console = await changesOf(() => ok(t.admin("PUT", "/data/development/thing/b", { title: "from the console" })));
    expect(brief(console)).toEqual([["update", "thing", "b"]]);

    const code = await changesOf(() =>
      ok(t.request("POST", "/code_write", { raw: JSON.stringify(["create", "thing", { thing_id: "e" }]) })),
    );
    expect(brief(code)).toEqual([["create", "thing", "e"]]);

    const removed = await changesOf(() => ok(t.request("DELETE", "/thing?n=7")));
    expect(brief(removed)).toEqual([["delete", "thing", "b"]]);
  });

  test("a user deleted: its objects lose their owner and its sessions end, all logged in the delete's transaction", async () => {
    await ok(t.request("POST", "/user", { body: { username: "gone", password: "pw-gone-1" } }), 201);
    const login = await ok(
      t.request("POST", "/user/accessToken", {
        raw: "grant_type=password&username=gone&password=pw-gone-1&token_type=mac",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
    );
    const family = (login.body as { access_token: string }).access_token.slice(0, 16);
    await ok(t.request("POST", "/thing", { body: { thing_id: "f", owner: "gone" } }), 201);
    const rows = await changesOf(() => ok(t.admin("DELETE", "/data/development/user/gone")));
    expect(brief(rows)).toContainEqual(["delete", "user", "gone"]);
    expect(brief(rows)).toContainEqual(["update", "thing", "f"]);
    expect(brief(rows)).toContainEqual(["session", null, family]);
    expect(rows.find((r) => r.object === "f")!.after).not.toHaveProperty("owner");
  });

  test("reads, refused writes and no-op deletes log nothing", async () => {
    const none = await changesOf(async () => {
      await ok(t.request("GET", "/thing/a"));
      await ok(t.request("GET", "/thing?n[gt]=0"));
      await ok(t.request("POST", "/thing", { body: { thing_id: "a" } }), 409);
      await ok(t.request("PUT", "/thing/a", { body: { n: "not a number" } }), 400);
      await ok(t.request("DELETE", "/thing?n=12345"));
    });
    expect(none).toEqual([]);
  });
});

describe("imports", () => {
  test("an import writes no change rows unless asked to (live), and a quiet import leaves no switch behind", async () => {
    const quiet = await changesOf(() => t.burrow.data.importRows(devCtx(), "thing", [{ line: 1, body: { thing_id: "i1" } }]));
    expect(quiet).toEqual([]);
    const after = await changesOf(() => ok(t.request("POST", "/thing", { body: { thing_id: "i2" } }), 201));
    expect(brief(after)).toEqual([["create", "thing", "i2"]]);
    const live = await changesOf(() =>
      t.burrow.data.importRows(devCtx(), "thing", [{ line: 1, body: { thing_id: "i3" } }], new Map(), [], true),
    );
    expect(brief(live)).toEqual([["create", "thing", "i3"]]);
    expect((await db().execute("SELECT count(*) AS n FROM _burrow_quiet")).rows[0]!.n).toBe(0);
  });
});

describe("migrations", () => {
  test("adding, changing and dropping fields keeps logging every column the table has", async () => {
    await ok(t.admin("PUT", "/schemas/kid", { fields: { name: { type: "string" }, age: { type: "integer" } } }));
    const added = await changesOf(() => ok(t.request("POST", "/kid", { body: { kid_id: "k9", name: "nine", age: 9 } }), 201));
    expect(added[0]!.after).toMatchObject({ kid_id: "k9", name: "nine", age: 9 });
    // A type change rebuilds the column (dropped in development): the triggers must not block it.
    await ok(t.admin("PUT", "/schemas/kid?force=true", { fields: { name: { type: "string" }, age: { type: "string" } } }));
    const changed = await changesOf(() => ok(t.request("PUT", "/kid/k9", { body: { age: "nine" } })));
    expect(changed[0]!.after).toMatchObject({ age: "nine" });
    await ok(t.admin("PUT", "/schemas/kid?force=true", { fields: { name: { type: "string" } } }));
    const dropped = await changesOf(() => ok(t.request("PUT", "/kid/k9", { body: { name: "still" } })));
    expect(dropped[0]!.after).toEqual(expect.objectContaining({ kid_id: "k9", name: "still" }));
    expect(dropped[0]!.after).not.toHaveProperty("age");
  });
});

describe("ids", () => {
  test("pruning keeps the newest row, so ids keep growing after the oldest rows are pruned", async () => {
    const before = await lastId();
    expect(await pruneChanges(db(), Date.now() + 1000, 1_000_000)).toBeGreaterThan(0);
    expect(await lastId()).toBe(before);
    const rows = await changesOf(() => ok(t.request("POST", "/thing", { body: { thing_id: "z" } }), 201));
    const rs = await db().execute("SELECT id FROM _burrow_changes WHERE object = 'z'");
    expect(rows.length).toBe(1);
    expect(Number(rs.rows[0]!.id)).toBe(before + 1);
  });

  test("without any live stream there are no change triggers and nothing is logged; the first stream turns it on", async () => {
    const triggers = async () =>
      Number((await db().execute("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'c$%'")).rows[0]!.n);
    expect(await triggers()).toBeGreaterThan(0);
    // The streams expire and the sweep removes the last one: the triggers go in the same transaction.
    await db().execute("UPDATE _burrow_live_streams SET expires = 1");
    expect(await sweepStreams(db())).toBeGreaterThan(0);
    expect(await triggers()).toBe(0);
    expect(await changesOf(() => ok(t.request("POST", "/thing", { body: { thing_id: "unlogged" } }), 201))).toEqual([]);
    await ok(t.request("POST", "/_live/streams"), 201);
    expect(await triggers()).toBeGreaterThan(0);
    expect(brief(await changesOf(() => ok(t.request("POST", "/thing", { body: { thing_id: "logged" } }), 201)))).toEqual([
      ["create", "thing", "logged"],
    ]);
  });
});

function devCtx() {
  return {
    env: "development" as const,
    version: 0,
    db: db(),
    schemas: t.burrow.catalog.development(),
    infer: false,
    principal: { kind: "app" as const },
    fileBase: () => "http://localhost",
  };
}
