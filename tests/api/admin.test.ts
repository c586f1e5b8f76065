// Admin API (docs/api/admin.md): login, keys, schemas with in-place migrations, deploy, settings, status.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, ADMIN, makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

const dev = () => t.burrow.envDbs.development;
const prod = () => t.burrow.envDbs.production;
async function columns(db: ReturnType<typeof dev>, table: string): Promise<string[]> {
  const rs = await db.execute({ sql: "SELECT name FROM pragma_table_info(?)", args: [table] });
  return rs.rows.map((r) => r.name as string);
}

describe("login", () => {
  test("bad credentials and missing or bad tokens are 401", async () => {
    const bad = await t.request("POST", "/_admin/api/login", { body: { email: ADMIN.email, password: "wrong" }, key: null, version: null });
    expect(bad.status).toBe(401);
    const unknown = await t.request("POST", "/_admin/api/login", {
      body: { email: "nobody@example.com", password: "x" },
      key: null,
      version: null,
    });
    expect(unknown.status).toBe(401);
    const none = await t.request("GET", "/_admin/api/keys", { key: null, version: null });
    expect(none.status).toBe(401);
    const forged = await t.request("GET", "/_admin/api/keys", { key: null, version: null, headers: { authorization: "Bearer forged" } });
    expect(forged.status).toBe(401);
    const weird = await t.request("POST", "/_admin/api/login", { body: { email: ["a"], password: { $ne: 1 } }, key: null, version: null });
    expect(weird.status).toBe(401);
  });

  test("a good login returns a token with expires_in; keys are shown", async () => {
    const r = await t.request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null });
    expect(r.status).toBe(200);
    expect(r.body.expires_in).toBeGreaterThan(0);
    const keys = await t.admin("GET", "/keys");
    expect(keys.body).toEqual({
      development: { publicKey: KEYS.devPublic, privateKey: KEYS.devPrivate },
      production: { publicKey: KEYS.prodPublic, privateKey: KEYS.prodPrivate },
    });
  });
});

describe("schemas", () => {
  test("a fresh data directory has the user and aclrole schemas", async () => {
    const r = await t.admin("GET", "/schemas");
    expect(r.body.map((d: any) => d.name)).toEqual(["aclrole", "user"]);
    expect(r.body[1].user.key).toBe("username");
    expect(r.body[0].permissions.read).toBe("private_key");
  });

  test("invalid definitions are 400 naming the problem", async () => {
    const cases: [unknown, string][] = [
      [{ fields: { a: { type: "text" } } }, 'field "a" of schema "thing": type must be one of'],
      [{ fields: { A: { type: "string" } } }, '"A" is not a valid field name'],
      [{ fields: { a: { type: "array" } } }, 'an array needs "items"'],
      [{ fields: { a: { type: "relationship" } } }, 'a relationship needs "schema"'],
      [{ fields: { a: { type: "relationship", schema: "ghost" } } }, 'relates to schema "ghost", which does not exist'],
      [{ fields: { a: { type: "geopoint" }, b: { type: "geopoint" } } }, "at most one geopoint"],
      [{ fields: { p: { type: "password" } } }, "password fields are only for user schemas"],
      [{ fields: { createddate: { type: "integer" } } }, '"createddate" is an automatic field'],
      [{ fields: { a: { type: "string" } }, indexes: [["b"]] }, 'index field "b" is not a field'],
      [{ fields: { a: { type: "array", items: "string" } }, indexes: [["a"]] }, "cannot be indexed"],
      [{ permissions: { read: "everyone" } }, 'permission "read" must be one of'],
      [{ permissions: { read: { relationship: "nope" } } }, 'names "nope", which is not a relationship field'],
      [{ colour: "blue" }, 'unknown property "colour"'],
      [{ name: "other" }, "does not match the address"],
      [[], "must be a JSON object"],
      [{ fields: { constructor: { type: "string" } } }, "not a valid field name"],
      [{ fields: { ["__proto__"]: { type: "string" } } }, "not a valid field name"],
    ];
    for (const [def, msg] of cases) {
      const r = await t.admin("PUT", "/schemas/thing", def);
      expect([def, r.status]).toEqual([def, 400]);
      expect(r.body.error).toContain(msg);
    }
    const raw = await t.request("PUT", "/_admin/api/schemas/thing", {
      raw: '{"fields": {"__proto__": {"type": "string"}}}',
      key: null,
      version: null,
      headers: { authorization: await bearer() },
    });
    expect(raw.status).toBe(400);
    expect((await t.admin("GET", "/schemas/thing")).status).toBe(404);
  });

  test("a schema becomes a typed STRICT table", async () => {
    const r = await t.admin("PUT", "/schemas/book", {
      fields: { title: { type: "string" }, pages: { type: "integer" }, where: { type: "geopoint" } },
      indexes: [["title"]],
    });
    expect(r.status).toBe(201);
    expect(r.body.changes).toContain("+ create schema book");
    const sql = await dev().execute("SELECT sql FROM sqlite_schema WHERE name = 'o_book'");
    expect(String(sql.rows[0]!.sql)).toBe(
      'CREATE TABLE "o_book" ("book_id" TEXT PRIMARY KEY NOT NULL, "title" TEXT, "pages" INTEGER, "where$lat" REAL, "where$lon" REAL, "createddate" INTEGER NOT NULL, "lastmoddate" INTEGER NOT NULL, "sm_owner" TEXT) STRICT',
    );
    const again = await t.admin("PUT", "/schemas/book", r.body);
    expect(again.status).toBe(400); // "changes" is not part of a definition
    const { changes, ...def } = r.body;
    const same = await t.admin("PUT", "/schemas/book", def);
    expect(same.status).toBe(200);
    expect(same.body.changes).toEqual([]);
  });

  test("adding fields and indexes migrates data in place, and queries use the index", async () => {
    for (let i = 0; i < 50; i++) await t.request("POST", "/book", { body: { book_id: `b${i}`, title: `T${i}`, pages: i } });
    const r = await t.admin("PUT", "/schemas/book", {
      fields: { title: { type: "string" }, pages: { type: "integer" }, where: { type: "geopoint" }, author: { type: "string" } },
      indexes: [["title"], ["author", "pages"]],
    });
    expect(r.status).toBe(200);
    expect(r.body.changes).toEqual(["+ book.author (string)", "+ book index (author, pages)"]);
    const b7 = await t.request("GET", "/book/b7");
    expect(b7.body).toMatchObject({ title: "T7", pages: 7 });
    expect(b7.body).not.toHaveProperty("author");
    const plan = await dev().execute({ sql: `EXPLAIN QUERY PLAN SELECT * FROM o_book WHERE author = ? AND pages > ?`, args: ["x", 1] });
    expect(plan.rows.map((row) => String(row.detail)).join(" ")).toContain("ix$book$author$pages");
  });

  test("destructive changes need ?force=true; forced ones convert or drop data", async () => {
    const next = { fields: { title: { type: "integer" }, where: { type: "geopoint" }, author: { type: "string" } }, indexes: [["title"]] };
    const refused = await t.admin("PUT", "/schemas/book", next);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('remove field "pages"');
    expect(refused.body.error).toContain('change field "title" of "book" from string to integer');
    expect((await t.request("GET", "/book/b7")).body.pages).toBe(7);

    await t.request("POST", "/book", { body: { book_id: "num", title: "42" } });
    const forced = await t.admin("PUT", "/schemas/book?force=true", next);
    expect(forced.status).toBe(200);
    expect(await columns(dev(), "o_book")).not.toContain("pages");
    expect((await t.request("GET", "/book/num")).body.title).toBe(42);
    expect((await t.request("GET", "/book/b7")).body).not.toHaveProperty("title");
    expect((await t.request("GET", "/book")).body).toHaveLength(51);
  });

  test("GET/DELETE of schemas; a referenced schema cannot be deleted", async () => {
    await t.admin("PUT", "/schemas/shelf", { fields: { books: { type: "relationship", schema: "book", many: true } } });
    const refused = await t.admin("DELETE", "/schemas/book");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain("shelf.books");
    expect((await t.admin("DELETE", "/schemas/shelf")).status).toBe(200);
    expect((await t.admin("GET", "/schemas/shelf")).status).toBe(404);
    expect((await t.admin("DELETE", "/schemas/shelf")).status).toBe(404);
    const tables = await dev().execute("SELECT name FROM sqlite_schema WHERE name = 'o_shelf'");
    expect(tables.rows).toHaveLength(0);
  });
});

describe("deploy", () => {
  test("development becomes production version N; production.db is migrated additively; history is kept", async () => {
    await t.admin("PUT", "/schemas/song", { fields: { title: { type: "string" }, plays: { type: "integer" } } });
    const d1 = await t.admin("POST", "/deploy", {});
    expect(d1.status).toBe(200);
    const v1 = d1.body.version;
    await t.request("POST", "/song", { version: v1, body: { song_id: "s1", title: "one", plays: 5 } });

    // v2 removes plays (forced) and adds genre; the data of plays stays in production.db.
    await t.admin("PUT", "/schemas/song?force=true", { fields: { title: { type: "string" }, genre: { type: "string" } } });
    const refused = await t.admin("POST", "/deploy", {});
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('remove field "plays" of "song" from the API');
    const d2 = await t.admin("POST", "/deploy", { force: true });
    expect(d2.body.version).toBe(v1 + 1);
    expect(await columns(prod(), "o_song")).toEqual(["song_id", "title", "plays", "createddate", "lastmoddate", "sm_owner", "genre"]);
    const viaV2 = await t.request("GET", "/song/s1", { version: v1 + 1 });
    expect(viaV2.body).toMatchObject({ title: "one" });
    expect(viaV2.body).not.toHaveProperty("genre");
    expect(viaV2.body.plays).toBeUndefined();
    const viaV1 = await t.request("GET", "/song/s1", { version: v1 });
    expect(viaV1.body.plays).toBe(5);
    expect((await t.admin("GET", `/schemas?version=${v1}`)).body.find((d: any) => d.name === "song").fields.plays).toEqual({
      type: "integer",
    });

    const history = await t.admin("GET", "/deploys");
    expect(history.body.map((h: any) => h.version).slice(0, 2)).toEqual([v1 + 1, v1]);
    expect(history.body[0].admin).toBe(ADMIN.email);
  });

  test("a forced type change in production keeps the old values in a retired column", async () => {
    await t.admin("PUT", "/schemas/song?force=true", { fields: { title: { type: "integer" }, genre: { type: "string" } } });
    const d = await t.admin("POST", "/deploy", { force: true });
    expect(d.status).toBe(200);
    const cols = await columns(prod(), "o_song");
    const retired = cols.find((c) => c.startsWith("title$retired$"))!;
    expect(retired).toBeDefined();
    const rs = await prod().execute(`SELECT "${retired}" AS old, title FROM o_song WHERE song_id = 's1'`);
    expect(rs.rows[0]!.old).toBe("one");
    expect(rs.rows[0]!.title).toBeNull();
  });

  test("explicit versions; bad versions are 400; production schemas are read-only", async () => {
    const d = await t.admin("POST", "/deploy", { version: 10, force: true });
    expect(d.body.version).toBe(10);
    expect((await t.request("GET", "/song", { version: 10 })).status).toBe(200);
    for (const version of [0, -1, 1.5, "3", 10_000_000]) expect((await t.admin("POST", "/deploy", { version })).status).toBe(400);
    expect((await t.admin("POST", "/deploy", { colour: 1 })).status).toBe(400);
    expect((await t.admin("PUT", "/schemas/song?version=10", { fields: {} })).status).toBe(400);
    expect((await t.admin("GET", "/schemas?version=7")).status).toBe(404);
  });
});

describe("settings", () => {
  test("defaults differ per environment; secrets are write-only", async () => {
    const d = await t.admin("GET", "/settings/development");
    expect(d.body.cors.origins).toEqual(["*"]);
    expect(d.body.smtp.password).toEqual({ set: false });
    expect((await t.admin("GET", "/settings/production")).body.cors.origins).toEqual([]);

    const put = await t.admin("PUT", "/settings/production", {
      smtp: { host: "127.0.0.1", password: "hunter2" },
      cors: { origins: ["https://app.example.com"] },
    });
    expect(put.status).toBe(200);
    expect(put.body.smtp).toMatchObject({ host: "127.0.0.1", password: { set: true } });
    expect(JSON.stringify(put.body)).not.toContain("hunter2");
    expect(t.burrow.settings.get("production").smtp).toMatchObject({ password: "hunter2" });

    const roundTrip = await t.admin("PUT", "/settings/production", (await t.admin("GET", "/settings/production")).body);
    expect(roundTrip.status).toBe(200);
    expect((t.burrow.settings.get("production").smtp as any).password).toBe("hunter2");

    const reset = await t.admin("PUT", "/settings/production", { smtp: { password: null } });
    expect(reset.body.smtp.password).toEqual({ set: false });
    expect((t.burrow.settings.get("development").smtp as any).host).toBe("");
  });

  test("unknown keys and wrong types are 400", async () => {
    const cases: unknown[] = [
      { smtp: { hots: "x" } },
      { smtp: { port: "25" } },
      { smtp: { port: 70000 } },
      { cors: { origins: "*" } },
      { nope: 1 },
      [1],
      "x",
      JSON.parse('{"__proto__": {"polluted": true}}'),
    ];
    for (const c of cases) expect([c, (await t.admin("PUT", "/settings/development", c)).status]).toEqual([c, 400]);
    expect(({} as any).polluted).toBeUndefined();
    expect((await t.admin("GET", "/settings/staging")).status).toBe(404);
  });
});

describe("status", () => {
  test("uptime, version and object counts per environment", async () => {
    const r = await t.admin("GET", "/status");
    expect(r.status).toBe(200);
    expect(r.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.body.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(r.body.environments.development.objects.book).toBe(51);
    expect(r.body.environments.production.objects.song).toBe(1);
    expect(r.body.environments.production.latestVersion).toBe(10);
  });
});

async function bearer(): Promise<string> {
  const r = await t.request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null });
  return `Bearer ${r.body.token}`;
}
