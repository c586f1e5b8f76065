// `data.read` answered on the custom code threads from their own connection (embedded store): the same JSON as
// the REST API and the main thread, a method sees the writes it awaited and the writes other requests made
// before it, a schema change is seen at once, production's version keeps its own shape, and every argument the
// main thread refuses is still refused with the same message. On a libSQL store every read goes to the main
// thread, and the same answers are checked there.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { oauthAuth } from "../helpers/sign.ts";
import { REMOTE_STORE } from "../helpers/sqld.ts";

let t: TestApp;
/** Reads the main thread's datastore served (the code threads ask it only for what they cannot answer). */
let mainReads = 0;

const CODE = `
export const methods = [
  { name: "read", params: ["schema", "id"], async execute(r, s) { return { body: { found: await s.data.read(r.params.schema, r.params.id) } }; } },
  { name: "read_raw", async execute(r, s) {
      try { return { body: { found: await s.data.read(...JSON.parse(r.body).args) } }; }
      catch (e) { return { status: 400, body: { error: String(e.message) } }; } } },
  { name: "write_then_read", params: ["id", "title"], async execute(r, s) {
      await s.data.update("note", r.params.id, { set: { title: r.params.title } });
      return { body: await s.data.read("note", r.params.id) }; } },
  { name: "read_twice", params: ["id"], async execute(r, s) {
      const a = await s.data.read("note", r.params.id);
      const b = await s.data.read("NOTE", r.params.id);
      return { body: [a, b] }; } },
];`;

const call = async (path: string, opts: Parameters<TestApp["request"]>[2] = {}) => (await t.request("GET", path, opts)).body;
const readRaw = async (...args: unknown[]) => t.request("POST", "/read_raw", { body: { args } });

beforeAll(async () => {
  t = await makeTestApp();
  expect((await t.admin("PUT", "/schemas/note", { fields: { title: { type: "string" }, n: { type: "integer" } } })).status).toBeLessThan(
    300,
  );
  for (const [id, title, n] of [
    ["a", "first", 1],
    ["b", "second", 2],
  ] as const)
    expect((await t.request("POST", "/note", { body: { note_id: id, title, n } })).status).toBe(201);
  expect((await upload(t, CODE)).status).toBe(200);
  const get = t.burrow.data.get.bind(t.burrow.data);
  t.burrow.data.get = (...args: Parameters<typeof get>) => {
    mainReads++;
    return get(...args);
  };
});
afterAll(() => t.close());

/** Reads the main thread served while `fn` ran. */
async function mainReadsDuring(fn: () => Promise<void>): Promise<number> {
  const before = mainReads;
  await fn();
  return mainReads - before;
}

describe("data.read on the code threads", () => {
  test("answers what REST answers; after a schema's first read the threads answer it themselves", async () => {
    const rest = (await t.request("GET", "/note/a")).body;
    expect(await call("/read?schema=note&id=a")).toEqual({ found: rest });
    const b = (await t.request("GET", "/note/b")).body;
    const later = await mainReadsDuring(async () => {
      for (let i = 0; i < 40; i++) expect(await call(`/read?schema=note&id=${i % 2 ? "a" : "b"}`)).toEqual({ found: i % 2 ? rest : b });
    });
    // Every thread learns the schema with its first read of it; the rest are local (none on a libSQL store).
    if (REMOTE_STORE) expect(later).toBe(40);
    else expect(later).toBeLessThanOrEqual(4);
    expect(await call("/read?schema=note&id=missing")).toEqual({ found: null });
    expect(await call("/read_twice?id=a")).toEqual([rest, rest]);
  });

  test("a method sees the write it awaited, and writes other requests made before the call", async () => {
    expect(await call("/write_then_read?id=a&title=changed")).toMatchObject({ note_id: "a", title: "changed" });
    expect((await t.request("PUT", "/note/b", { body: { n: 22 } })).status).toBe(200);
    expect(await call("/read?schema=note&id=b")).toEqual({ found: expect.objectContaining({ note_id: "b", n: 22 }) });
    expect((await t.request("DELETE", "/note/b")).status).toBe(200);
    expect(await call("/read?schema=note&id=b")).toEqual({ found: null });
    expect((await t.request("POST", "/note", { body: { note_id: "b", title: "again" } })).status).toBe(201);
    expect(await call("/read?schema=note&id=b")).toEqual({ found: expect.objectContaining({ note_id: "b", title: "again" }) });
  });

  test("a schema change is seen by the next read: a new field, and a removed schema", async () => {
    await call("/read?schema=note&id=a");
    expect(
      (await t.admin("PUT", "/schemas/note", { fields: { title: { type: "string" }, n: { type: "integer" }, tag: { type: "string" } } }))
        .status,
    ).toBeLessThan(300);
    expect((await t.request("PUT", "/note/a", { body: { tag: "new" } })).status).toBe(200);
    expect(await call("/read?schema=note&id=a")).toEqual({ found: (await t.request("GET", "/note/a")).body });
    expect((await call("/read?schema=note&id=a")).found.tag).toBe("new");
    // A schema read once, then removed: the plan is stale, so the main thread answers (its 404 as the guest sees it).
    expect((await t.admin("PUT", "/schemas/gone", { fields: { x: { type: "string" } } })).status).toBeLessThan(300);
    expect((await t.request("POST", "/gone", { body: { gone_id: "g", x: "y" } })).status).toBe(201);
    expect((await call("/read?schema=gone&id=g")).found).toMatchObject({ gone_id: "g", x: "y" });
    expect((await t.admin("DELETE", "/schemas/gone")).status).toBeLessThan(300);
    expect((await readRaw("gone", "g")).body).toEqual({ error: 'data.read: schema "gone" does not exist' });
  });

  test("production reads with its deployed version's schemas, development with its own", async () => {
    const d = await t.admin("POST", "/deploy", {});
    expect(d.status).toBe(200);
    const v = d.body.version as number;
    const signed = (method: string, path: string, body?: unknown) =>
      t.request(method, path, {
        body,
        version: v,
        key: null,
        headers: { authorization: oauthAuth(KEYS.prodPublic, KEYS.prodPrivate, method, `http://localhost${path}`) },
      });
    expect((await signed("POST", "/note", { note_id: "p", title: "prod", tag: "t" })).status).toBe(201);
    const prodRest = (await signed("GET", "/note/p")).body;
    const prodCall = async () => (await t.request("GET", "/read?schema=note&id=p", { version: v, key: KEYS.prodPublic })).body;
    expect(await prodCall()).toEqual({ found: prodRest });
    // Development moves on: a field production's version does not have.
    expect(
      (
        await t.admin("PUT", "/schemas/note", {
          fields: { title: { type: "string" }, n: { type: "integer" }, tag: { type: "string" }, extra: { type: "string" } },
        })
      ).status,
    ).toBeLessThan(300);
    expect((await t.request("PUT", "/note/a", { body: { extra: "dev only" } })).status).toBe(200);
    const dev = (await call("/read?schema=note&id=a")).found;
    expect(dev.extra).toBe("dev only");
    expect(dev).toEqual((await t.request("GET", "/note/a")).body);
    expect(await prodCall()).toEqual({ found: prodRest });
    expect(Object.keys(prodRest)).not.toContain("extra");
  });

  test("arguments the main thread refuses are refused the same way; a shape goes to the main thread", async () => {
    expect((await readRaw("note", 5)).body.error).toContain("read: id: expected an object key");
    expect((await readRaw("note", "")).body.error).toContain("read: id: expected an object key");
    expect((await readRaw("note", "a\u0001")).body.error).toContain("read: id: expected an object key");
    expect((await readRaw("\u212Aote", "a")).body.error).toContain("is not a schema name");
    expect((await readRaw("__proto__", "a")).body.error).toContain("is not a schema name");
    expect((await readRaw("note")).body.error).toContain("read: id: missing");
    expect((await readRaw("note", "a", null, 1)).body.error).toContain("takes at most 3 arguments");
    const shaped = await readRaw("note", "a", { select: ["title"] });
    expect(shaped.body.found).toEqual({ note_id: "a", title: "changed" });
    expect((await readRaw("NoTe", "a")).body.found.note_id).toBe("a");
  });
});
