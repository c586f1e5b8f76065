// Arrays and relationships as sub-resources: create related objects, append, pull, cascade delete.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  expect((await t.admin("PUT", "/schemas/book", { fields: { title: { type: "string" }, pages: { type: "integer" } } })).status).toBe(201);
  expect(
    (
      await t.admin("PUT", "/schemas/author", {
        fields: {
          name: { type: "string" },
          tags: { type: "array", items: "string" },
          scores: { type: "array", items: "integer" },
          books: { type: "relationship", schema: "book", many: true },
          fav: { type: "relationship", schema: "book" },
        },
      })
    ).status,
  ).toBe(201);
  await t.request("POST", "/author", { body: { author_id: "a1", name: "Ann", tags: ["x"], scores: [1, 3, 3] } });
});
afterAll(() => t.close());

const author = async (id = "a1") => (await t.request("GET", `/author/${id}`)).body;

describe("POST /<schema>/<id>/<relation>", () => {
  test("creates the objects in the related schema and appends their keys", async () => {
    await t.request("POST", "/book", { body: { book_id: "taken", title: "old" } });
    const r = await t.request("POST", "/author/a1/books", {
      body: [{ title: "One", pages: 10 }, { book_id: "b2", title: "Two" }, { book_id: "taken" }, { pages: "many" }],
    });
    expect(r.status).toBe(200);
    expect(r.body.succeeded).toHaveLength(2);
    expect(r.body.succeeded[1]).toBe("b2");
    expect(r.body.failed).toEqual(["taken", "3"]);
    expect((await author()).books).toEqual(r.body.succeeded);
    expect((await t.request("GET", `/book/${r.body.succeeded[0]}`)).body).toMatchObject({ title: "One", pages: 10 });
    const again = await t.request("POST", "/author/a1/books", { body: [{ book_id: "b3", title: "Three" }] });
    expect((await author()).books).toEqual([...r.body.succeeded, "b3"]);
    expect(again.body).toEqual({ succeeded: ["b3"], failed: [] });
  });

  test("a one-to-one relationship takes one object; a missing parent creates nothing", async () => {
    const r = await t.request("POST", "/author/a1/fav", { body: { book_id: "fav1", title: "Fav" } });
    expect(r.body.succeeded).toEqual(["fav1"]);
    expect((await author()).fav).toBe("fav1");
    expect((await t.request("POST", "/author/a1/fav", { body: [{}, {}] })).status).toBe(400);
    const missing = await t.request("POST", "/author/nobody/books", { body: [{ book_id: "never" }] });
    expect(missing.status).toBe(404);
    expect((await t.request("GET", "/book/never")).status).toBe(404);
  });

  test("only relationship fields; unknown fields are 400", async () => {
    expect((await t.request("POST", "/author/a1/tags", { body: [{}] })).status).toBe(400);
    expect((await t.request("POST", "/author/a1/nothing", { body: [{}] })).status).toBe(400);
  });
});

describe("PUT /<schema>/<id>/<field> appends", () => {
  test("arrays keep duplicates and are type-checked", async () => {
    const r = await t.request("PUT", "/author/a1/tags", { body: ["x", "y", "y"] });
    expect(r.status).toBe(200);
    expect(r.body.tags).toEqual(["x", "x", "y", "y"]);
    expect(r.body.name).toBe("Ann");
    const bad = await t.request("PUT", "/author/a1/scores", { body: [1, "two"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("scores has invalid type");
    expect((await t.request("PUT", "/author/a1/tags", { body: "x" })).status).toBe(400);
  });

  test("relationships take keys, deduplicated, also keys no object has (yet); an expand leaves those keys", async () => {
    await t.request("POST", "/book", { body: [{ book_id: "k1" }, { book_id: "k2" }] });
    const before = (await author()).books;
    const r = await t.request("PUT", "/author/a1/books", { body: ["k1", "k2", "k1", "b2"] });
    expect(r.body.books).toEqual([...before, "k1", "k2"]);
    const loose = await t.request("PUT", "/author/a1/books", { body: ["k1", "ghost", "phantom", "ghost"] });
    expect(loose.status).toBe(200);
    expect(loose.body.books).toEqual([...r.body.books, "ghost", "phantom"]);
    const expanded = (await t.request("GET", "/author/a1?_expand=1")).body.books as (string | { book_id: string })[];
    expect(expanded.filter((b) => typeof b === "string")).toEqual(["ghost", "phantom"]);
    // Values that are not keys stay a 400.
    for (const bad of [[1], [null], [{}], [""], ["x".repeat(300)]])
      expect((await t.request("PUT", "/author/a1/books", { body: bad })).status).toBe(400);
  });

  test("a missing object is 404", async () => {
    expect((await t.request("PUT", "/author/nobody/tags", { body: ["x"] })).status).toBe(404);
  });

  test("concurrent appends are atomic", async () => {
    await t.request("POST", "/author", { body: { author_id: "busy", tags: [] } });
    await Promise.all(Array.from({ length: 60 }, (_, i) => t.request("PUT", "/author/busy/tags", { body: [`v${i}`] })));
    const tags = (await author("busy")).tags;
    expect(tags).toHaveLength(60);
    expect(new Set(tags).size).toBe(60);
  });
});

describe("DELETE /<schema>/<id>/<field>/<values>", () => {
  test("pulls every occurrence from arrays; an emptied array is [] not NULL", async () => {
    await t.request("POST", "/author", { body: { author_id: "p1", tags: ["a", "b", "a", "a,b"], scores: [1, 2, 2, 3] } });
    expect((await t.request("DELETE", "/author/p1/tags/a")).status).toBe(200);
    expect((await author("p1")).tags).toEqual(["b", "a,b"]);
    await t.request("DELETE", `/author/p1/tags/${encodeURIComponent("a,b")},b`);
    expect((await author("p1")).tags).toEqual([]);
    await t.request("DELETE", "/author/p1/scores/2,3");
    expect((await author("p1")).scores).toEqual([1]);
    expect((await t.request("DELETE", "/author/p1/scores/x")).status).toBe(400);
  });

  test("removes references; the related objects stay unless cascade is asked for", async () => {
    await t.request("POST", "/author", { body: { author_id: "c1" } });
    await t.request("POST", "/author/c1/books", { body: [{ book_id: "cb1" }, { book_id: "cb2" }, { book_id: "cb3" }, { book_id: "cb4" }] });
    await t.request("DELETE", "/author/c1/books/cb1", { headers: { "x-service-cascadedelete": "false" } });
    expect((await author("c1")).books).toEqual(["cb2", "cb3", "cb4"]);
    expect((await t.request("GET", "/book/cb1")).status).toBe(200);
    await t.request("DELETE", "/author/c1/books/cb2,cb3", { headers: { "x-service-cascadedelete": "true" } });
    expect((await author("c1")).books).toEqual(["cb4"]);
    expect((await t.request("GET", "/book/cb2")).status).toBe(404);
    expect((await t.request("GET", "/book/cb3")).status).toBe(404);
    await t.request("DELETE", "/author/c1/books/cb4,notthere", { headers: { "x-service-cascadedelete": "yes" } });
    expect((await author("c1")).books).toEqual([]);
    expect((await t.request("GET", "/book/cb4")).status).toBe(404);
  });

  test("one-to-one: the reference becomes NULL; a missing object is 404 This object does not exist", async () => {
    await t.request("POST", "/author", { body: { author_id: "f1", fav: "k1" } });
    await t.request("DELETE", "/author/f1/fav/k1");
    expect(await author("f1")).not.toHaveProperty("fav");
    const r = await t.request("DELETE", "/author/ghost/tags/a");
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("This object does not exist");
  });
});

describe("expand and counts over relationships made by every path", () => {
  test("expand sees created, appended and upserted references; Range counts stay right", async () => {
    await t.request("POST", "/author", { body: { author_id: "e1" } });
    await t.request("POST", "/author/e1/books", { body: [{ book_id: "e-b1", title: "created" }] });
    await t.request("PUT", "/author/e1/books", { body: ["k1"] });
    const e = (await t.request("GET", "/author?author_id=e1", { headers: { "x-service-expand": "1" } })).body[0];
    expect(e.books.map((b: any) => b.book_id)).toEqual(["e-b1", "k1"]);
    expect(e.books[0].title).toBe("created");
    const count = await t.request("GET", "/author?books[in]=k1", { headers: { range: "objects=0-0" } });
    expect(count.headers.get("content-range")).toBe("objects 0-0/2");
  });
});
