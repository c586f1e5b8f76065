// Custom code's `data` service called directly with a system context, against real SQLite: every operation,
// every query operator (translated to the REST query tree), conditional and by-query updates, relations, user
// schemas and files, and the ugly inputs untrusted guest code can send (each a 400 naming the op and argument).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DATA_OPS, dataService } from "../../src/code/services/data-service.ts";
import { RawJson } from "../../src/code/raw-json.ts";
import { EARTH_RADIUS_KM, haversine } from "../../src/datastore/query/geo.ts";
import { ApiError } from "../../src/errors.ts";
import { formatUpload } from "../../src/files/upload.ts";
import { devContext, makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;

/** A fresh service over the current schemas (definitions change during the tests). */
const svc = () => dataService(t.burrow.data, devContext(t));

/** Call an op; RawJson answers are parsed (and checked to be RawJson where objects are expected). */
async function call(op: string, ...args: unknown[]): Promise<any> {
  const r = await svc()(op, args);
  return r instanceof RawJson ? JSON.parse(r.text) : r;
}

/** The error of a call that must fail. */
async function failure(op: string, args: unknown[]): Promise<ApiError> {
  try {
    await svc()(op, args);
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error(`${op}(${JSON.stringify(args).slice(0, 200)}) did not fail`);
}

/** Keys of a query's answer, in order. */
const ids = async (schema: string, query: unknown, pk = `${schema}_id`) =>
  ((await call("query", schema, query)) as any[]).map((o) => o[pk]);
/** REST read, to check what the database holds independently of the service. */
const rest = async (path: string) => (await t.request("GET", path)).body;

const people = [
  { person_id: "ann", name: "Ann", age: 31, score: 4.5, active: true, tags: ["a", "b"], nick: "", at: { lat: 59.9139, lon: 10.7522 } },
  { person_id: "bob", name: "Bob", age: 25, score: 3.0, active: false, tags: ["b"], nick: "bobby", at: { lat: 60.3913, lon: 5.3221 } },
  { person_id: "cid", name: "Cid", age: 40, score: 2.25, active: true, tags: [], at: { lat: 41.9028, lon: 12.4964 } },
  { person_id: "dee", name: "Dee", age: 19, active: false, nick: "d, the one", at: { lat: -18.1248, lon: 178.4501 } },
  { person_id: "eve", name: "Eve", tags: ["c"] },
];

beforeAll(async () => {
  t = await makeTestApp();
  const defs: Record<string, unknown> = {
    person: {
      fields: {
        name: { type: "string" },
        age: { type: "integer" },
        score: { type: "float" },
        active: { type: "boolean" },
        tags: { type: "array", items: "string" },
        nick: { type: "string" },
        at: { type: "geopoint" },
        visits: { type: "integer" },
      },
    },
    book: { fields: { title: { type: "string" }, pages: { type: "integer" } } },
    author: {
      fields: {
        name: { type: "string" },
        books: { type: "relationship", schema: "book", many: true },
        fav: { type: "relationship", schema: "book" },
        scores: { type: "array", items: "integer" },
      },
    },
    doc: { fields: { label: { type: "string" }, file: { type: "binary" } } },
    // Closed to every client: the system principal of custom code passes anyway.
    vault: {
      fields: { secret: { type: "string" }, n: { type: "integer" } },
      permissions: { create: "none", read: "none", update: "none", delete: "none" },
    },
  };
  for (const [name, def] of Object.entries(defs)) expect((await t.admin("PUT", `/schemas/${name}`, def)).status).toBe(201);
  expect((await call("createMany", "person", people)).failed).toEqual([]);
});
afterAll(() => t.close());

test("DATA_OPS are exactly the DataService methods of sandbox/burrow.d.ts", () => {
  const dts = readFileSync(join(import.meta.dir, "../../sandbox/burrow.d.ts"), "utf8");
  const body = /interface DataService \{([\s\S]*?)\n {2}\}/.exec(dts)![1]!;
  const methods = [...body.matchAll(/^\s+([A-Za-z]+)\(/gm)].map((m) => m[1]);
  expect(methods.length).toBeGreaterThan(10);
  expect([...DATA_OPS].sort()).toEqual(methods.sort() as string[]);
});

describe("create and read", () => {
  test("create answers the stored object as JSON text; read finds it, null when missing", async () => {
    const raw = await svc()("create", ["book", { book_id: "b1", title: "One", pages: 100 }]);
    expect(raw).toBeInstanceOf(RawJson);
    expect(JSON.parse((raw as RawJson).text)).toMatchObject({ book_id: "b1", title: "One", pages: 100 });
    expect(await rest("/book/b1")).toMatchObject({ title: "One", pages: 100 });
    const read = await svc()("read", ["book", "b1"]);
    expect(read).toBeInstanceOf(RawJson);
    expect(JSON.parse((read as RawJson).text).title).toBe("One");
    expect(await call("read", "book", "nope")).toBeNull();
    expect(await call("read", "book", "nope", { select: ["title"] })).toBeNull();
    expect(await call("read", "book", "b1", null)).toMatchObject({ title: "One" });
    const dup = await failure("create", ["book", { book_id: "b1" }]);
    expect(dup.status).toBe(409);
    expect(dup.message).toStartWith("data.create: ");
  });

  test("read with select and expand", async () => {
    await call("createMany", "book", [
      { book_id: "b2", title: "Two", pages: 2 },
      { book_id: "b3", title: "Three", pages: 3 },
    ]);
    await call("create", "author", { author_id: "au", name: "Al", books: ["b2", "b3"], fav: "b2" });
    expect(await call("read", "author", "au", { select: ["name"] })).toEqual({ author_id: "au", name: "Al" });
    const deep = await call("read", "author", "au", { expand: 1, select: ["books.title", "fav"] });
    expect(deep.books.map((b: any) => b.title)).toEqual(["Two", "Three"]);
    expect(deep.fav.book_id).toBe("b2");
    expect((await call("read", "author", "au")).books).toEqual(["b2", "b3"]);
  });

  test("createMany reports failures in posted order; an unknown schema is a 404", async () => {
    const r = await call("createMany", "book", [{ book_id: "m1", title: "M" }, { book_id: "b1" }, { pages: "many" }]);
    expect(r).toEqual({ succeeded: ["m1"], failed: ["b1", "2"] });
    expect(await rest("/book/m1")).toMatchObject({ title: "M" });
    const missing = await failure("read", ["nosuch", "x"]);
    expect(missing.status).toBe(404);
    expect(missing.message).toContain('schema "nosuch" does not exist');
    expect((await failure("query", ["nosuch"])).status).toBe(404);
  });

  test("a schema closed to every client is open to custom code", async () => {
    await call("create", "vault", { vault_id: "v", secret: "s", n: 1 });
    expect(await call("read", "vault", "v")).toMatchObject({ secret: "s" });
    expect((await call("update", "vault", "v", { increment: { n: 2 } })).n).toBe(3);
    expect(await call("count", "vault")).toBe(1);
    expect(await call("delete", "vault", "v")).toBe(true);
    expect((await t.request("GET", "/vault")).status).not.toBe(200);
  });
});

describe("query operators", () => {
  test("equality, booleans, numbers and the comparison operators", async () => {
    expect(await ids("person", { where: { name: "Ann" } })).toEqual(["ann"]);
    expect(await ids("person", { where: { active: true } })).toEqual(["ann", "cid"]);
    expect(await ids("person", { where: { active: { eq: false } } })).toEqual(["bob", "dee"]);
    expect(await ids("person", { where: { age: 25 } })).toEqual(["bob"]);
    expect(await ids("person", { where: { name: { ne: "Ann" } } })).toEqual(["bob", "cid", "dee", "eve"]);
    expect(await ids("person", { where: { age: { gt: 25 } } })).toEqual(["ann", "cid"]);
    expect(await ids("person", { where: { age: { gte: 25, lt: 40 } } })).toEqual(["ann", "bob"]);
    expect(await ids("person", { where: { age: { lte: 25 } } })).toEqual(["bob", "dee"]);
    expect(await ids("person", { where: { score: { gt: 2.5 } } })).toEqual(["ann", "bob"]);
    expect(await ids("person", { where: { score: { lt: 2.3 } } })).toEqual(["cid"]);
    expect(await ids("person", { where: { tags: "b" } })).toEqual(["ann", "bob"]);
    expect(await ids("person", { where: { person_id: "cid" } })).toEqual(["cid"]);
  });

  test("in and nin (a value may not contain a comma)", async () => {
    expect(await ids("person", { where: { name: { in: ["Ann", "Cid", "Zed"] } } })).toEqual(["ann", "cid"]);
    expect(await ids("person", { where: { age: { in: [19, 40] } } })).toEqual(["cid", "dee"]);
    expect(await ids("person", { where: { age: { nin: [19, 40] } } })).toEqual(["ann", "bob", "eve"]);
    expect(await ids("person", { where: { tags: { in: ["c", "a"] } } })).toEqual(["ann", "eve"]);
    expect(await ids("person", { where: { tags: { nin: ["b"] } } })).toEqual(["cid", "dee", "eve"]);
    const comma = await failure("query", ["person", { where: { nick: { in: ["x", "d, the one"] } } }]);
    expect(comma.status).toBe(400);
    expect(comma.message).toStartWith("data.query: where.nick.in[1]: ");
    expect(comma.message).toContain("comma");
    expect(await ids("person", { where: { nick: "d, the one" } })).toEqual(["dee"]);
  });

  test("null and empty", async () => {
    expect(await ids("person", { where: { age: { null: true } } })).toEqual(["eve"]);
    expect(await ids("person", { where: { score: { null: false } } })).toEqual(["ann", "bob", "cid"]);
    expect(await ids("person", { where: { nick: { empty: true } } })).toEqual(["ann"]);
    // As in REST, [empty]=false also matches unset fields; ANDed with null: false it does not.
    expect(await ids("person", { where: { nick: { empty: false } } })).toEqual(["bob", "cid", "dee", "eve"]);
    expect(await ids("person", { where: { nick: { empty: false, null: false } } })).toEqual(["bob", "dee"]);
    expect(await ids("person", { where: { at: { null: true } } })).toEqual(["eve"]);
  });

  test("or: alternatives ANDed with where", async () => {
    expect(await ids("person", { or: [{ name: "Ann" }, { age: { lt: 20 } }] })).toEqual(["ann", "dee"]);
    expect(await ids("person", { where: { active: true }, or: [{ name: "Ann" }, { age: { gt: 35 }, tags: { null: false } }] })).toEqual([
      "ann",
      "cid",
    ]);
    expect(await ids("person", { where: { active: false }, or: [{ name: "Ann" }, { name: "Cid" }] })).toEqual([]);
  });

  test("near: nearest first with the distance in radians, optionally within a radius", async () => {
    const rs = await call("query", "person", { where: { at: { near: { lat: 59.9, lon: 10.7 } } } });
    expect(rs.map((p: any) => p.person_id)).toEqual(["ann", "bob", "cid", "dee"]);
    for (const p of rs) expect(Math.abs(p.at.distance - haversine(59.9, 10.7, p.at.lat, p.at.lon))).toBeLessThan(1e-9);
    const radius = 500 / EARTH_RADIUS_KM;
    expect(await ids("person", { where: { at: { near: { lat: 59.9, lon: 10.7, radius } } } })).toEqual(["ann", "bob"]);
    expect(await ids("person", { where: { at: { near: { lat: 59.9, lon: 10.7, radius: null } }, active: false } })).toEqual(["bob", "dee"]);
  });

  test("within a radius and within a box", async () => {
    expect(await ids("person", { where: { at: { within: { lat: 42, lon: 12.5, radius: 100 / EARTH_RADIUS_KM } } } })).toEqual(["cid"]);
    expect(await ids("person", { where: { at: { within: { lat: 59.9, lon: 10.7, radius: 500 / EARTH_RADIUS_KM } } } })).toEqual([
      "ann",
      "bob",
    ]);
    expect(await ids("person", { where: { at: { within: { box: [55, 0, 65, 20] } } } })).toEqual(["ann", "bob"]);
    // Across the antimeridian: lower-left east of upper-right.
    expect(await ids("person", { where: { at: { within: { box: [-30, 170, -10, -170] } } } })).toEqual(["dee"]);
  });

  test("select, expand, orderBy, start, end and limit", async () => {
    expect(await call("query", "person", { where: { name: "Bob" }, select: ["name", "age"] })).toEqual([
      { person_id: "bob", name: "Bob", age: 25 },
    ]);
    expect(await ids("person", { orderBy: ["age:desc"] })).toEqual(["cid", "ann", "bob", "dee", "eve"]);
    expect(await ids("person", { orderBy: [["age", "asc"]] })).toEqual(["eve", "dee", "bob", "ann", "cid"]);
    expect(await ids("person", { orderBy: ["active:desc", "name"] })).toEqual(["ann", "cid", "bob", "dee", "eve"]);
    expect(await ids("person", { orderBy: ["name"], start: 1, end: 2 })).toEqual(["bob", "cid"]);
    expect(await ids("person", { orderBy: ["name"], start: 3 })).toEqual(["dee", "eve"]);
    expect(await ids("person", { orderBy: ["name"], limit: 2 })).toEqual(["ann", "bob"]);
    expect(await ids("person", { orderBy: ["name"], start: 4, limit: 10 })).toEqual(["eve"]);
    expect(await ids("person", { orderBy: ["name"], end: 0 })).toEqual(["ann"]);
    expect(await call("query", "person", { limit: 0 })).toEqual([]);
    expect(await ids("person", { start: 99 })).toEqual([]);
    expect(await ids("person", { orderBy: ["name"], limit: 1_000_000_000, start: 1 })).toEqual(["bob", "cid", "dee", "eve"]);
    const expanded = await call("query", "author", { where: { author_id: "au" }, expand: 1 });
    expect(expanded[0].books.map((b: any) => b.book_id)).toEqual(["b2", "b3"]);
    expect(await call("query", "person")).toHaveLength(5);
  });

  test("count gives the exact total of the conditions", async () => {
    expect(await call("count", "person")).toBe(5);
    expect(await call("count", "person", {})).toBe(5);
    expect(await call("count", "person", { where: { active: true } })).toBe(2);
    expect(await call("count", "person", { or: [{ age: { lt: 20 } }, { age: { null: true } }] })).toBe(2);
    expect(await call("count", "person", { where: { at: { near: { lat: 59.9, lon: 10.7, radius: 500 / EARTH_RADIUS_KM } } } })).toBe(2);
    expect(await call("count", "person", { where: { name: "nobody" } })).toBe(0);
  });
});

describe("update", () => {
  test("set, unset and increment; the whole object back; a missing object is null", async () => {
    await call("create", "person", { person_id: "upd", name: "U", visits: 1, age: 50 });
    const r = await svc()("update", ["person", "upd", { set: { name: "U2", age: null }, increment: { visits: 4 } }]);
    expect(r).toBeInstanceOf(RawJson);
    const updated = JSON.parse((r as RawJson).text);
    expect(updated).toMatchObject({ person_id: "upd", name: "U2", visits: 5 });
    expect("age" in updated).toBe(false); // unset fields are left out
    expect(await rest("/person/upd")).toMatchObject({ name: "U2", visits: 5 });
    expect(await ids("person", { where: { person_id: "upd", age: { null: true } } })).toEqual(["upd"]);
    expect((await call("update", "person", "upd", { increment: { visits: -7 } })).visits).toBe(-2);
    expect((await call("update", "person", "upd", { increment: { age: 3 } })).age).toBe(3);
    expect(await call("update", "person", "ghost", { set: { name: "x" } })).toBeNull();
    expect(await rest("/person/ghost")).toMatchObject({ error: expect.any(String) });
    expect(await call("update", "person", "upd", {})).toMatchObject({ name: "U2" });
  });

  test("conditional update: changes only when the object also matches where", async () => {
    await call("create", "person", { person_id: "cond", name: "C", visits: 10, active: true });
    expect(await call("update", "person", "cond", { increment: { visits: 1 } }, { where: { visits: { lt: 5 } } })).toBeNull();
    expect((await rest("/person/cond")).visits).toBe(10);
    const hit = await call(
      "update",
      "person",
      "cond",
      { set: { name: "C2" }, increment: { visits: -3 } },
      { where: { visits: { gte: 10 }, active: true } },
    );
    expect(hit).toMatchObject({ name: "C2", visits: 7 });
    expect(await rest("/person/cond")).toMatchObject({ name: "C2", visits: 7 });
    expect(await call("update", "person", "cond", { set: { name: "C3" } }, { where: { name: "C" } })).toBeNull();
    expect(await call("update", "person", "nobody", { set: { name: "x" } }, { where: { name: "C2" } })).toBeNull();
    expect((await rest("/person/cond")).name).toBe("C2");
    expect(await call("update", "person", "cond", { set: { name: "C4" } }, { where: {} })).toMatchObject({ name: "C4" });
    expect(
      await call("update", "person", "cond", { set: { name: "C5" } }, { where: { at: { within: { box: [0, 0, 1, 1] } } } }),
    ).toBeNull();
    // Compare-and-set from many concurrent callers: exactly one wins.
    await call("update", "person", "cond", { set: { visits: 0 } });
    const wins = await Promise.all(
      Array.from({ length: 20 }, () => call("update", "person", "cond", { increment: { visits: 1 } }, { where: { visits: 0 } })),
    );
    expect(wins.filter((w) => w !== null)).toHaveLength(1);
    expect((await rest("/person/cond")).visits).toBe(1);
  });

  test("counters stay within ±(2^53−1) and only on integer fields", async () => {
    await call("create", "person", { person_id: "big", visits: Number.MAX_SAFE_INTEGER - 1 });
    const over = await failure("update", ["person", "big", { increment: { visits: 5 } }]);
    expect(over.status).toBe(400);
    expect(over.message).toContain("exceed");
    expect((await rest("/person/big")).visits).toBe(Number.MAX_SAFE_INTEGER - 1);
    expect((await failure("update", ["person", "big", { increment: { score: 1 } }])).message).toContain("[inc] needs an integer field");
    expect((await failure("update", ["person", "big", { increment: { visits: 1.5 } }])).message).toStartWith(
      "data.update: changes.increment.visits: expected an integer",
    );
    expect((await failure("update", ["person", "big", { set: { visits: 1 }, increment: { visits: 1 } }])).message).toContain(
      "set and incremented",
    );
  });

  test("updateWhere changes every match in one statement and answers how many", async () => {
    await call("createMany", "book", [
      { book_id: "w1", title: "batch", pages: 1 },
      { book_id: "w2", title: "batch", pages: 2 },
      { book_id: "w3", title: "other", pages: 3 },
    ]);
    expect(await call("updateWhere", "book", { where: { title: "batch" } }, { set: { title: "done" }, increment: { pages: 10 } })).toBe(2);
    expect((await rest("/book/w1")).pages).toBe(11);
    expect((await rest("/book/w2")).title).toBe("done");
    expect(await rest("/book/w3")).toMatchObject({ title: "other", pages: 3 });
    expect(await call("updateWhere", "book", { or: [{ book_id: "w1" }, { book_id: "w3" }] }, { set: { pages: 0 } })).toBe(2);
    expect((await rest("/book/w3")).pages).toBe(0);
    expect(await call("updateWhere", "book", { where: { title: "nothing matches" } }, { set: { pages: 9 } })).toBe(0);
    // Geo selections work inside the UPDATE (the R*Tree subquery on the updated table).
    expect(await call("updateWhere", "person", { where: { at: { within: { box: [55, 0, 65, 20] } } } }, { increment: { visits: 2 } })).toBe(
      2,
    );
    expect([(await rest("/person/ann")).visits, (await rest("/person/bob")).visits, (await rest("/person/cid")).visits]).toEqual([
      2,
      2,
      undefined,
    ]);
    const near = { at: { within: { lat: 42, lon: 12.5, radius: 100 / EARTH_RADIUS_KM } } };
    expect(await call("update", "person", "cid", { set: { visits: 7 } }, { where: near })).toMatchObject({ person_id: "cid", visits: 7 });
    expect(await call("update", "person", "ann", { set: { visits: 7 } }, { where: near })).toBeNull();
    expect((await rest("/person/ann")).visits).toBe(2);
    const all = await failure("updateWhere", ["book", {}, { set: { pages: 1 } }]);
    expect([all.status, all.message]).toEqual([400, expect.stringContaining("at least one condition")]);
  });

  test("updateWhere is all or nothing when a counter would overflow", async () => {
    await call("createMany", "book", [
      { book_id: "o1", title: "ovf", pages: 1 },
      { book_id: "o2", title: "ovf", pages: Number.MAX_SAFE_INTEGER },
    ]);
    const e = await failure("updateWhere", ["book", { where: { title: "ovf" } }, { increment: { pages: 1 } }]);
    expect(e.message).toContain("exceed");
    expect((await rest("/book/o1")).pages).toBe(1);
  });

  test("delete and deleteWhere", async () => {
    await call("createMany", "book", [
      { book_id: "d1", title: "del" },
      { book_id: "d2", title: "del" },
      { book_id: "d3", title: "keep" },
    ]);
    expect(await call("delete", "book", "d1")).toBe(true);
    expect(await call("delete", "book", "d1")).toBe(false);
    expect(await call("read", "book", "d1")).toBeNull();
    expect(await call("deleteWhere", "book", { where: { title: "del" } })).toBe(1);
    expect(await call("deleteWhere", "book", { where: { book_id: "d2" } })).toBe(0);
    expect(await call("deleteWhere", "book", { where: { book_id: "nope" } })).toBe(0);
    expect(await call("deleteWhere", "book", { or: [{ title: "keep" }, { title: "x" }] })).toBe(1);
    expect(await call("read", "book", "d3")).toBeNull();
    expect((await failure("deleteWhere", ["book", {}])).message).toContain("at least one condition");
    expect((await failure("deleteWhere", ["book", { where: { title: { near: { lat: 0, lon: 0 } } } }])).status).toBe(400);
  });
});

describe("relationships and arrays", () => {
  test("addRelated appends keys (and array values), also keys no object has yet; values that are not keys are refused", async () => {
    await call("createMany", "book", [
      { book_id: "r1", title: "R1" },
      { book_id: "r2", title: "R2" },
    ]);
    await call("create", "author", { author_id: "ra", name: "Rel", scores: [1] });
    const r = await svc()("addRelated", ["author", "ra", "books", ["r1", "r2", "r1"]]);
    expect(r).toBeInstanceOf(RawJson);
    expect(JSON.parse((r as RawJson).text).books).toEqual(["r1", "r2"]);
    expect((await call("addRelated", "author", "ra", "scores", [2, 2])).scores).toEqual([1, 2, 2]);
    expect((await call("addRelated", "author", "ra", "fav", ["r2"])).fav).toBe("r2");
    expect((await call("addRelated", "author", "ra", "books", ["ghost"])).books).toEqual(["r1", "r2", "ghost"]);
    expect((await failure("addRelated", ["author", "ra", "books", [42]])).status).toBe(400);
    expect(await call("removeRelated", "author", "ra", "books", ["ghost"])).toBeUndefined();
    expect((await rest("/author/ra")).books).toEqual(["r1", "r2"]);
  });

  test("createRelated creates objects in the related schema and appends their keys", async () => {
    const r = await call("createRelated", "author", "ra", "books", [{ book_id: "r3", title: "R3" }, { title: "R4" }, { book_id: "r1" }]);
    expect(r.succeeded).toHaveLength(2);
    expect(r.failed).toEqual(["r1"]);
    expect((await rest("/author/ra")).books).toEqual(["r1", "r2", ...r.succeeded]);
    expect(await rest(`/book/${r.succeeded[1]}`)).toMatchObject({ title: "R4" });
    expect((await failure("createRelated", ["author", "nobody", "books", [{ title: "x" }]])).status).toBe(404);
  });

  test("removeRelated pulls keys, deleting the related objects only with cascade", async () => {
    expect(await call("removeRelated", "author", "ra", "books", ["r1"])).toBeUndefined();
    expect((await rest("/author/ra")).books).toEqual(["r2", "r3", expect.any(String)]);
    expect(await call("read", "book", "r1")).not.toBeNull();
    await call("removeRelated", "author", "ra", "books", ["r2", "r3"], { cascade: true });
    expect((await rest("/author/ra")).books).toHaveLength(1);
    expect(await call("read", "book", "r2")).toBeNull();
    expect(await call("read", "book", "r3")).toBeNull();
    await call("removeRelated", "author", "ra", "scores", [2]);
    expect((await rest("/author/ra")).scores).toEqual([1]);
    await call("removeRelated", "author", "ra", "fav", ["r2"], { cascade: false });
    expect((await rest("/author/ra")).fav).toBeUndefined();
    expect(await call("read", "book", "r2")).toBeNull(); // r2 was already gone; nothing else was deleted
    expect(await call("count", "book", { where: { book_id: { in: ["r1", "b2"] } } })).toBe(2);
  });
});

describe("schemas, users and files", () => {
  test("custom code may set sm_owner (like the private key); clients cannot", async () => {
    const o = await call("create", "book", { book_id: "owned", title: "O", sm_owner: "user/cara" });
    expect(o.sm_owner).toBe("user/cara");
    expect((await call("update", "book", "owned", { set: { sm_owner: "user/dan" } })).sm_owner).toBe("user/dan");
    await t.request("PUT", "/book/owned", { body: { sm_owner: "user/eve" } });
    expect((await rest("/book/owned")).sm_owner).toBe("user/dan");
  });

  test("schemas() and userSchema()", async () => {
    const names = await call("schemas");
    expect(names).toEqual([...names].sort());
    for (const n of ["aclrole", "author", "book", "doc", "person", "user", "vault"]) expect(names).toContain(n);
    expect(await call("userSchema")).toBe("user");
  });

  test("user passwords are hashed as REST does: login works, the password never shows", async () => {
    const u = await call("create", "user", { username: "cara", password: "cara-password", email: "c@example.com" });
    expect(u.username).toBe("cara");
    expect(u.password).toBeUndefined();
    const login = (password: string) =>
      t.request("POST", "/user/accessToken", {
        raw: new URLSearchParams({ username: "cara", password, token_type: "mac" }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
    expect((await login("cara-password")).status).toBe(200);
    await call("update", "user", "cara", { set: { password: "new-password" } });
    expect((await login("cara-password")).status).not.toBe(200);
    expect((await login("new-password")).status).toBe(200);
    expect((await failure("query", ["user", { where: { password: "new-password" } }])).message).toContain("cannot be queried");
    expect((await failure("updateWhere", ["user", { where: { username: "cara" } }, { set: { password: "x" } }])).message).toContain(
      "password",
    );
    expect((await failure("create", ["user", { username: "nopass" }])).status).toBe(400);
  });

  test("binary fields: uploads stored as URLs, cleared one by one or by query, never uploaded by query", async () => {
    const upload = formatUpload("text/plain", "a.txt", new TextEncoder().encode("hello"));
    const d = await call("create", "doc", { doc_id: "f1", label: "x", file: upload });
    expect(d.file).toStartWith("http://localhost/_files/");
    expect(await (await t.app.handle(new Request(d.file))).text()).toBe("hello");
    expect((await call("update", "doc", "f1", { set: { label: "y", file: d.file } })).file).toBe(d.file);
    const refused = await failure("updateWhere", ["doc", { where: { label: "y" } }, { set: { file: upload } }]);
    expect(refused.message).toContain("one object at a time");
    expect(await call("updateWhere", "doc", { where: { label: "y" } }, { set: { file: null } })).toBe(1);
    expect((await rest("/doc/f1")).file).toBeUndefined();
    expect((await rest("/doc/f1")).label).toBe("y");
    expect((await t.app.handle(new Request(d.file))).status).toBe(404);
  });
});

describe("ugly inputs are 400s naming the op and the argument", () => {
  const cases: [string, unknown[], string][] = [
    // wrong types and missing arguments
    ["query", [42], "data.query: schema: expected a schema name"],
    ["query", ["person", "age > 3"], "data.query: query: expected an object"],
    ["query", ["person", []], "data.query: query: expected an object"],
    ["read", ["person"], "data.read: id: missing"],
    ["read", ["person", 5], "data.read: id: expected an object key"],
    ["read", ["person", "ann", { select: "name" }], "data.read: shape.select: expected an array"],
    ["read", ["person", "ann", null, "extra"], "data.read: takes at most 3 arguments"],
    ["create", ["person", ["a"]], "data.create: object: expected an object"],
    ["create", ["person"], "data.create: object: missing"],
    ["createMany", ["person", { name: "x" }], "data.createMany: objects: expected an array"],
    ["createMany", ["person", [{ name: "x" }, 7]], "data.createMany: objects[1]: expected an object"],
    ["update", ["person", "ann", { name: "x" }], "data.update: changes.name: unknown property"],
    ["update", ["person", "ann", { set: [] }], "data.update: changes.set: expected an object"],
    ["update", ["person", "ann", { set: { name: "x" } }, { where: { age: "old" } }], "data.update: age: expected integer"],
    ["update", ["person", "ann", { set: { name: "x" } }, { filter: {} }], "data.update: options.filter: unknown property"],
    ["count", ["person", { where: { age: 1 }, limit: 3 }], "data.count: query.limit: unknown property"],
    ["removeRelated", ["author", "ra", "books", ["x"], { cascade: "yes" }], "data.removeRelated: options.cascade: expected true or false"],
    ["addRelated", ["author", "ra", "books", "r1"], "data.addRelated: values: expected an array"],
    ["addRelated", ["author", "ra", "books", [{ k: 1 }]], "data.addRelated: values[0]: expected a string, number or boolean"],
    ["schemas", ["x"], "data.schemas: takes at most 0 arguments"],
    // conditions
    ["query", ["person", { where: { age: null } }], "data.query: where.age: null is not a condition; use {null: true}"],
    ["query", ["person", { where: { age: [1, 2] } }], "data.query: where.age: an array is not a condition; use {in: [...]}"],
    ["query", ["person", { where: { age: {} } }], "data.query: where.age: no operator given"],
    ["query", ["person", { where: { age: { between: [1, 2] } } }], "data.query: where.age.between: unknown operator"],
    ["query", ["person", { where: { age: { gt: "abc" } } }], 'data.query: age[gt]: expected integer, got "abc"'],
    ["query", ["person", { where: { age: { gt: { $ne: 1 } } } }], "data.query: where.age.gt: expected a string, number or boolean"],
    ["query", ["person", { where: { age: { null: "yes" } } }], "data.query: where.age.null: expected true or false"],
    ["query", ["person", { where: { age: { in: [] } } }], "data.query: where.age.in: expected 1 to 256 elements, got 0"],
    [
      "query",
      ["person", { where: { age: { in: Array.from({ length: 257 }, (_, i) => i) } } }],
      "data.query: where.age.in: expected 1 to 256 elements, got 257",
    ],
    ["query", ["person", { where: { age: { in: [1, [2]] } } }], "data.query: where.age.in[1]: expected a string, number or boolean"],
    ["query", ["person", { where: { nick: { empty: true }, age: { empty: true } } }], "data.query: [empty] works only on string fields"],
    ["query", ["person", { where: { nosuch: 1 } }], 'data.query: unknown field "nosuch"'],
    ["query", ["person", { where: { name: "x".repeat(1025) } }], "data.query: where.name: at most 1024 characters"],
    ["query", ["person", { where: { at: { near: { lat: 91, lon: 0 } } } }], "data.query: Latitude value must be between -90 and 90"],
    ["query", ["person", { where: { at: { near: { lat: "1", lon: 0 } } } }], "data.query: where.at.near.lat: expected a number"],
    ["query", ["person", { where: { at: { near: { lat: 1, lon: 0, far: true } } } }], "data.query: where.at.near.far: unknown property"],
    ["query", ["person", { where: { at: { within: { lat: 1, lon: 0 } } } }], "data.query: where.at.within: expected {lat, lon, radius}"],
    ["query", ["person", { where: { at: { within: { box: [1, 2, 3] } } } }], "data.query: where.at.within.box: expected 4 to 4 elements"],
    [
      "query",
      ["person", { where: { at: { within: { box: [10, 0, 5, 1] } } } }],
      "data.query: at[within]: the first corner is the lower left",
    ],
    [
      "query",
      ["person", { where: { at: { near: { lat: -1, lon: 0, radius: -1 } } } }],
      "data.query: the radius (radians) must be a non-negative number",
    ],
    [
      "query",
      ["person", { where: { name: { near: { lat: 1, lon: 1 } } } }],
      'data.query: [near] works only on geopoint fields, and "name" is not one',
    ],
    ["query", ["person", { where: { at: 1 } }], 'data.query: geopoint field "at" takes [near], [within] or [null]'],
    // or
    ["query", ["person", { or: [] }], "data.query: or: expected 1 to 16 elements, got 0"],
    ["query", ["person", { or: Array.from({ length: 17 }, () => ({ age: 1 })) }], "data.query: or: expected 1 to 16 elements, got 17"],
    ["query", ["person", { or: [{ age: 1 }, {}] }], "data.query: or[1]: an alternative needs at least one condition"],
    ["query", ["person", { or: [{ age: 1 }, "age=2"] }], "data.query: or[1]: expected an object"],
    ["query", ["person", { or: [{ age: { gt: "x" } }, { age: 1 }] }], 'data.query: or[0].age[gt]: expected integer, got "x"'],
    [
      "query",
      ["person", { or: [{ age: 1 }, { age: 2 }], orderBy: ["name"] }],
      "data.query: or: an OR block cannot be combined with orderBy",
    ],
    [
      "query",
      ["person", { or: [{ at: { near: { lat: 1, lon: 1 } } }, { age: 2 }] }],
      "data.query: or: an OR block cannot be combined with geo conditions",
    ],
    ["count", ["person", { or: [{ age: 1 }], where: { name: { lt: 1, gt: 2, foo: 3 } } }], "data.count: where.name.foo: unknown operator"],
    // select, expand, orderBy, ranges
    ["query", ["person", { select: [] }], "data.query: select: expected 1 to 128 elements, got 0"],
    ["query", ["person", { select: Array.from({ length: 129 }, () => "name") }], "data.query: select: expected 1 to 128 elements, got 129"],
    ["query", ["person", { select: ["name", "a.b.c.d.e"] }], "data.query: select[1]: "],
    ["query", ["person", { select: [7] }], "data.query: select[0]: expected a field path"],
    ["query", ["person", { expand: 4 }], "data.query: expand: expected an integer from 0 to 3, got number 4"],
    ["query", ["person", { expand: "1" }], "data.query: expand: expected an integer from 0 to 3"],
    ["query", ["person", { orderBy: "name" }], "data.query: orderBy: expected an array"],
    ["query", ["person", { orderBy: ["name:sideways"] }], 'data.query: orderBy[0]: the direction is "asc" or "desc"'],
    ["query", ["person", { orderBy: [["name", "desc", "x"]] }], "data.query: orderBy[0]: expected"],
    ["query", ["person", { orderBy: ["a:b:c"] }], "data.query: orderBy[0]: expected"],
    ["query", ["person", { orderBy: Array.from({ length: 9 }, () => "name") }], "data.query: orderBy: expected 0 to 8 elements, got 9"],
    ["query", ["person", { orderBy: ["tags"] }], 'data.query: cannot order by "tags"'],
    ["query", ["person", { start: -1 }], "data.query: start: expected an integer from 0 to 1000000000, got number -1"],
    ["query", ["person", { start: 1.5 }], "data.query: start: expected an integer from 0 to 1000000000"],
    ["query", ["person", { end: 1e12 }], "data.query: end: expected an integer from 0 to 1000000000, got number 1000000000000"],
    ["query", ["person", { limit: -5 }], "data.query: limit: expected an integer from 0 to 1000000000"],
    ["query", ["person", { start: "0" }], "data.query: start: expected an integer"],
    ["query", ["person", { start: 5, end: 2 }], "data.query: end: the last index (2) is before the first (5)"],
    ["query", ["person", { end: 2, limit: 2 }], "data.query: limit: give either end or limit, not both"],
    ["query", ["person", { where: { age: 1 }, range: "0-1" }], "data.query: query.range: unknown property"],
    // injection attempts: names never reach SQL unvalidated
    ["query", ["person", { where: { "a; DROP TABLE x": 1 } }], 'data.query: where["a; DROP TABLE x"]: not a field name'],
    ["query", ["person", { where: { 'name" = name OR "1': 1 } }], 'data.query: where["name\\" = name OR \\"1"]: not a field name'],
    ["query", ["person", { orderBy: ["name; DROP TABLE person"] }], "data.query: orderBy[0]: not a field name"],
    ["query", ["person", { select: ["name) FROM x --"] }], "data.query: select[0]: "],
    ["query", ["person; DROP TABLE person"], "data.query: schema: "],
    ["update", ["person", "ann", { set: { "name = 'x'; --": 1 } }], "data.update: changes.set[\"name = 'x'; --\"]: not a field name"],
    [
      "update",
      ["person", "ann", { increment: { "visits) + 1 --": 1 } }],
      'data.update: changes.increment["visits) + 1 --"]: not a field name',
    ],
    ["addRelated", ["author", "ra", "books; DROP TABLE author", ["r1"]], "data.addRelated: field: not a field name"],
    ["create", ["person", { "x; DROP TABLE person": 1 }], "data.create: "],
    // too many of anything
    [
      "query",
      ["person", { where: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}`, 1])) }],
      "data.query: where.f64: at most 64 conditions per query",
    ],
    [
      "query",
      [
        "person",
        {
          where: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, 1])),
          or: [Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`g${i}`, 1]))],
        },
      ],
      "at most 64 conditions per query",
    ],
    ["createMany", ["book", Array.from({ length: 1001 }, () => ({}))], "data.createMany: objects: expected 0 to 1000 elements, got 1001"],
    [
      "addRelated",
      ["author", "ra", "books", Array.from({ length: 1001 }, () => "r1")],
      "data.addRelated: values: expected 1 to 1000 elements, got 1001",
    ],
    ["removeRelated", ["author", "ra", "books", []], "data.removeRelated: values: expected 1 to 1000 elements, got 0"],
    // near cannot select what to change
    [
      "update",
      ["person", "ann", { set: { name: "x" } }, { where: { at: { near: { lat: 1, lon: 1 } } } }],
      "data.update: [near] sorts results and cannot select what to update",
    ],
    [
      "updateWhere",
      ["person", { where: { at: { near: { lat: 1, lon: 1 } } } }, { set: { name: "x" } }],
      "data.updateWhere: [near] sorts results and cannot select what to update",
    ],
    [
      "updateWhere",
      ["person", { where: { age: 1 } }, { set: { person_id: "x" } }],
      "data.updateWhere: person_id: unable to update primary key",
    ],
  ];
  for (const [op, args, message] of cases)
    test(`${op} ${JSON.stringify(args).slice(0, 90)}`, async () => {
      const e = await failure(op, args);
      expect(e.status).toBe(400);
      expect(e.message).toContain(message);
      expect(e.message).toStartWith(`data.${op}: `);
    });

  test("__proto__ as a field name, a key of where, an operator or deep in a body", async () => {
    const parsed = (json: string) => JSON.parse(json) as unknown;
    const proto: [string, unknown[], string][] = [
      [
        "query",
        ["person", parsed('{"where": {"__proto__": {"eq": 1}}}')],
        'data.query: where.__proto__: "__proto__" is not allowed as a field name',
      ],
      ["query", ["person", parsed('{"where": {"age": {"__proto__": 1}}}')], "data.query: where.age.__proto__: unknown operator"],
      ["query", ["person", parsed('{"__proto__": {"where": {}}}')], "data.query: query.__proto__: unknown property"],
      ["query", ["person", { where: { constructor: 1 } }], 'data.query: where.constructor: "constructor" is not allowed'],
      ["query", ["person", { orderBy: ["__proto__"] }], 'data.query: orderBy[0]: "__proto__" is not allowed'],
      ["query", ["person", { select: ["__proto__"] }], "data.query: select[0]: "],
      ["create", ["person", parsed('{"name": "p", "__proto__": {"age": 1}}')], 'data.create: object: "__proto__" is not allowed'],
      [
        "create",
        ["person", parsed('{"name": "p", "at": {"lat": 1, "lon": 2, "__proto__": {}}}')],
        'data.create: object: "__proto__" is not allowed',
      ],
      ["createMany", ["person", parsed('[{"name": "p"}, {"__proto__": 1}]')], 'data.createMany: objects: "__proto__" is not allowed'],
      [
        "update",
        ["person", "ann", parsed('{"set": {"__proto__": {"name": "x"}}}')],
        'data.update: changes.set.__proto__: "__proto__" is not allowed as a field name',
      ],
      [
        "update",
        ["person", "ann", parsed('{"increment": {"__proto__": 1}}')],
        'data.update: changes.increment.__proto__: "__proto__" is not allowed',
      ],
      [
        "update",
        ["person", "ann", parsed('{"set": {"tags": [{"__proto__": 1}]}}')],
        'data.update: changes.set.tags: "__proto__" is not allowed',
      ],
      [
        "createRelated",
        ["author", "ra", "books", parsed('[{"__proto__": {"title": 1}}]')],
        'data.createRelated: objects: "__proto__" is not allowed',
      ],
      ["read", ["__proto__", "x"], "data.read: schema: "],
      ["addRelated", ["author", "ra", "__proto__", ["r1"]], 'data.addRelated: field: "__proto__" is not allowed'],
    ];
    for (const [op, args, message] of proto) {
      const e = await failure(op, args);
      expect([op, e.status, e.message]).toEqual([op, 400, expect.stringContaining(message)]);
    }
    expect(({} as any).age).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, "name")).toBe(false);
  });

  test("unknown operations and malformed calls", async () => {
    for (const op of ["drop", "__proto__", "constructor", "toString", ""]) {
      const e = await failure(op, []);
      expect([op, e.status]).toEqual([op, 400]);
      expect(e.message).toStartWith("data has no operation");
    }
    expect(await svc()("query", "person" as never).catch((e: ApiError) => e.message)).toContain("the arguments are an array");
  });

  test("after every attempt the tables and data are intact", async () => {
    expect(await ids("person", { where: { person_id: { in: people.map((p) => p.person_id) } } })).toEqual(people.map((p) => p.person_id));
    expect(await call("read", "person", "ann")).toMatchObject({ name: "Ann", age: 31, tags: ["a", "b"] });
    expect(await call("count", "person", { where: { name: "x" } })).toBe(0);
    expect((await rest("/author/ra")).name).toBe("Rel");
  });
});
