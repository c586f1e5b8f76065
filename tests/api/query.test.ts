// GET /<schema> queries: every operator, OR blocks, select, expand, order, Range, counts, DELETE by query.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
const people = [
  {
    person_id: "ann",
    name: "Ann",
    age: 31,
    score: 7.5,
    active: true,
    tags: ["a", "b"],
    nums: [1, 2],
    friends: ["bob", "cid"],
    manager: "cid",
    city: "oslo",
  },
  {
    person_id: "bob",
    name: "Bob",
    age: 25,
    score: 3.25,
    active: false,
    tags: ["b"],
    nums: [3],
    friends: ["ann"],
    manager: "cid",
    city: "rome",
  },
  { person_id: "cid", name: "Cid", age: 47, score: 9, active: true, tags: [], nums: [], friends: [], city: "oslo" },
  { person_id: "dee", name: "", age: 25, active: true, tags: ["c"], friends: ["ann", "ghost"], manager: "ann" },
  { person_id: "eve", name: "Eve", age: 19, score: -1, tags: ["a"], manager: "bob", city: "lima" },
];

beforeAll(async () => {
  t = await makeTestApp();
  const put = async (name: string, def: unknown) => expect((await t.admin("PUT", `/schemas/${name}`, def)).status).toBeLessThan(300);
  await put("country", { fields: { name: { type: "string" }, continent: { type: "string" } } });
  await put("city", { fields: { name: { type: "string" }, country: { type: "relationship", schema: "country" } } });
  await put("person", {
    fields: {
      name: { type: "string" },
      age: { type: "integer" },
      score: { type: "float" },
      active: { type: "boolean" },
      tags: { type: "array", items: "string" },
      nums: { type: "array", items: "integer" },
      friends: { type: "relationship", schema: "person", many: true },
      manager: { type: "relationship", schema: "person" },
      city: { type: "relationship", schema: "city" },
    },
    indexes: [["age"], ["name"]],
  });
  await t.request("POST", "/country", {
    body: [
      { country_id: "no", name: "Norway", continent: "Europe" },
      { country_id: "it", name: "Italy", continent: "Europe" },
      { country_id: "pe", name: "Peru", continent: "America" },
    ],
  });
  await t.request("POST", "/city", {
    body: [
      { city_id: "oslo", name: "Oslo", country: "no" },
      { city_id: "rome", name: "Rome", country: "it" },
      { city_id: "lima", name: "Lima", country: "pe" },
    ],
  });
  const r = await t.request("POST", "/person", { body: people });
  expect(r.body.succeeded).toHaveLength(5);
});
afterAll(() => t.close());

async function ids(query: string, headers: Record<string, string> = {}): Promise<string[]> {
  const r = await t.request("GET", `/person${query}`, { headers });
  if (r.status !== 200 && r.status !== 206) throw new Error(`${query}: ${r.status} ${r.text}`);
  return r.body.map((o: any) => o.person_id);
}
async function error(query: string, headers: Record<string, string> = {}, path = "/person"): Promise<string> {
  const r = await t.request("GET", `${path}${query}`, { headers });
  expect([query, r.status]).toEqual([query, 400]);
  return r.body.error;
}

describe("operators", () => {
  test("equality and comparisons, values converted by field type", async () => {
    expect(await ids("?age=25")).toEqual(["bob", "dee"]);
    expect(await ids("?name=Ann")).toEqual(["ann"]);
    expect(await ids("?active=true")).toEqual(["ann", "cid", "dee"]);
    expect(await ids("?active=false")).toEqual(["bob"]);
    expect(await ids("?score=9")).toEqual(["cid"]);
    expect(await ids("?age[ne]=25")).toEqual(["ann", "cid", "eve"]);
    expect(await ids("?age[lt]=25")).toEqual(["eve"]);
    expect(await ids("?age[lte]=25")).toEqual(["bob", "dee", "eve"]);
    expect(await ids("?age[gt]=31")).toEqual(["cid"]);
    expect(await ids("?age[gte]=31")).toEqual(["ann", "cid"]);
    expect(await ids("?score[gt]=3.3&score[lt]=8")).toEqual(["ann"]);
    expect(await ids("?name[gt]=Bob")).toEqual(["cid", "eve"]);
    expect(await ids("?person_id=bob")).toEqual(["bob"]);
    expect(await ids("?createddate[gt]=0&age=47")).toEqual(["cid"]);
  });

  test("[ne] keeps objects where the field is NULL", async () => {
    expect(await ids("?active[ne]=true")).toEqual(["bob", "eve"]);
  });

  test("[null] and [empty]", async () => {
    expect(await ids("?score[null]=true")).toEqual(["dee"]);
    expect(await ids("?city[null]=false")).toEqual(["ann", "bob", "cid", "eve"]);
    expect(await ids("?name[empty]=true")).toEqual(["dee"]);
    expect(await ids("?name[empty]=false")).toEqual(["ann", "bob", "cid", "eve"]);
    expect(await error("?age[empty]=true")).toContain("[empty] works only on string fields");
    expect(await error("?tags[empty]=true")).toContain("[empty] works only on string fields");
    expect(await error("?name[null]=maybe")).toContain("true or false");
  });

  test("[in] and [nin], also on arrays and relationships", async () => {
    expect(await ids("?age[in]=25,47")).toEqual(["bob", "cid", "dee"]);
    expect(await ids("?age[nin]=25,47")).toEqual(["ann", "eve"]);
    expect(await ids("?tags[in]=a")).toEqual(["ann", "eve"]);
    expect(await ids("?tags[in]=c,b")).toEqual(["ann", "bob", "dee"]);
    expect(await ids("?tags[nin]=a")).toEqual(["bob", "cid", "dee"]);
    expect(await ids("?nums[in]=3")).toEqual(["bob"]);
    expect(await ids("?friends[in]=ann")).toEqual(["bob", "dee"]);
    expect(await ids("?manager[in]=cid,bob")).toEqual(["ann", "bob", "eve"]);
    expect(await ids("?tags=b")).toEqual(["ann", "bob"]);
  });

  test("conditions are ANDed", async () => {
    expect(await ids("?active=true&age[gt]=20&tags[in]=a")).toEqual(["ann"]);
  });

  test("values that do not convert are 400 naming the field", async () => {
    expect(await error("?age=abc")).toBe('age: expected integer, got "abc"');
    expect(await error("?age=1.5")).toBe('age: expected integer, got "1.5"');
    expect(await error("?score=x")).toBe('score: expected float, got "x"');
    expect(await error("?active=yes")).toBe('active: expected true or false, got "yes"');
    expect(await error("?nums[in]=1,x")).toBe('nums[in]: expected integer, got "x"');
    expect(await error("?age[gt]=")).toContain("needs a value");
    expect(await error("?name=")).toContain("[empty]=true");
  });

  test("unknown fields, operators and malformed keys are 400", async () => {
    expect(await error("?shoe=1")).toContain('unknown field "shoe"');
    expect(await error("?age[about]=1")).toContain("unknown operator");
    expect(await error("?age[gt=1")).toContain("invalid query parameter");
    expect(await error("?__proto__=1")).toContain("unknown field");
    expect(await error("?constructor=1")).toContain("unknown field");
    expect(await error("?tags[lt]=1")).toContain("does not apply");
  });
});

describe("OR blocks", () => {
  test("A AND (B OR C) with single clauses and AND groups", async () => {
    expect(await ids("?[or1].age=19&[or1].age=47")).toEqual(["cid", "eve"]);
    expect(await ids("?active=true&[or1].age=19&[or1].age=47")).toEqual(["cid"]);
    expect(await ids("?[or1].[and1].age=25&[or1].[and1].active=true&[or1].name=Ann")).toEqual(["ann", "dee"]);
    expect(await ids("?[or1].[and1].age[gt]=20&[or1].[and1].age[lt]=30&[or1].[and2].name=Eve&[or1].[and2].score[lt]=0")).toEqual([
      "bob",
      "dee",
      "eve",
    ]);
  });

  test("the OR block's rules: one block, one level of AND groups, no sorting or geo", async () => {
    expect(await error("?[or1].age=1&[or2].age=2")).toContain("only one OR block");
    expect(await error("?[or1].[and1].[or2].age=1")).toContain("nesting deeper");
    expect(await error("?[or1].[and1].[and2].age=1")).toContain("nesting deeper");
    expect(await error("?[and1].age=1")).toContain("only inside an [or");
    expect(await error("?[or1].age=1&[or1].age=2", { "x-service-orderby": "age:asc" })).toContain("X-Service-OrderBy");
  });
});

describe("ordering and pagination", () => {
  test("X-Service-OrderBy with several keys", async () => {
    expect(await ids("", { "x-service-orderby": "age:desc" })).toEqual(["cid", "ann", "bob", "dee", "eve"]);
    expect(await ids("", { "x-service-orderby": "age:asc,name:desc" })).toEqual(["eve", "bob", "dee", "ann", "cid"]);
    expect(await ids("?active=true", { "x-service-orderby": "name" })).toEqual(["dee", "ann", "cid"]);
    expect(await error("", { "x-service-orderby": "age:up" })).toContain("X-Service-OrderBy");
    expect(await error("", { "x-service-orderby": "shoe:asc" })).toContain('unknown field "shoe"');
    expect(await error("", { "x-service-orderby": "tags:asc" })).toContain("cannot order by");
  });

  test("Range: 206 with Content-Range when part of the total, 200 without it otherwise", async () => {
    const order = { "x-service-orderby": "age:asc" };
    const first = await t.request("GET", "/person", { headers: { ...order, range: "objects=0-1" } });
    expect(first.status).toBe(206);
    expect(first.headers.get("content-range")).toBe("objects 0-1/5");
    expect(first.body.map((o: any) => o.person_id)).toEqual(["eve", "bob"]);
    const open = await t.request("GET", "/person", { headers: { ...order, range: "objects=3-" } });
    expect(open.status).toBe(206);
    expect(open.headers.get("content-range")).toBe("objects 3-4/5");
    const clamp = await t.request("GET", "/person", { headers: { ...order, range: "objects=4-100" } });
    expect(clamp.headers.get("content-range")).toBe("objects 4-4/5");
    const all = await t.request("GET", "/person", { headers: { range: "objects=0-9" } });
    expect(all.status).toBe(200);
    expect(all.headers.get("content-range")).toBeNull();
    const past = await t.request("GET", "/person", { headers: { range: "objects=10-19" } });
    expect(past.status).toBe(200);
    expect(past.body).toEqual([]);
    const filtered = await t.request("GET", "/person?age=25", { headers: { range: "objects=0-0" } });
    expect(filtered.headers.get("content-range")).toBe("objects 0-0/2");
  });

  test("the count call: Range objects=0-0, also as HEAD", async () => {
    const r = await t.request("HEAD", "/person?active=true", { headers: { range: "objects=0-0" } });
    expect(r.status).toBe(206);
    expect(r.headers.get("content-range")).toBe("objects 0-0/3");
    expect(r.text).toBe("");
    const one = await t.request("GET", "/person?age=47", { headers: { range: "objects=0-0" } });
    expect(one.status).toBe(200);
    expect(one.headers.get("content-range")).toBeNull();
    expect(one.body).toHaveLength(1);
  });

  test("malformed Range is 400", async () => {
    for (const range of ["objects=5-2", "bytes=0-1", "objects=-3", "objects=a-b", "objects=99999999999-"])
      expect(await error("", { range })).toContain("Range");
  });
});

describe("select and expand", () => {
  test("X-Service-Select narrows to the named fields plus the key; passwords never appear", async () => {
    const r = await t.request("GET", "/person?person_id=ann", { headers: { "x-service-select": "name,age" } });
    expect(r.body).toEqual([{ person_id: "ann", name: "Ann", age: 31 }]);
    const u = await t.request("GET", "/user", { headers: { "x-service-select": "password,username" } });
    expect(u.status).toBe(200);
    expect(await error("", { "x-service-select": "shoe" })).toContain('unknown field "shoe"');
  });

  test("expand depth 1 to 3, header or _expand", async () => {
    const d1 = (await t.request("GET", "/person?person_id=ann", { headers: { "x-service-expand": "1" } })).body[0];
    expect(d1.manager).toMatchObject({ person_id: "cid", name: "Cid" });
    expect(d1.manager).not.toHaveProperty("manager");
    expect(d1.friends.map((f: any) => f.person_id)).toEqual(["bob", "cid"]);
    expect(d1.friends[0].friends).toEqual(["ann"]);
    expect(d1.city).toMatchObject({ city_id: "oslo", country: "no" });
    const d3 = (await t.request("GET", "/person?person_id=ann&_expand=3")).body[0];
    expect(d3.city.country).toMatchObject({ country_id: "no", name: "Norway" });
    expect(d3.friends[0].friends[0].friends.map((f: any) => f.person_id ?? f)).toEqual(["bob", "cid"]);
    expect(d3.friends[0].friends[0].friends[0].friends).toEqual(["ann"]);
    const missing = (await t.request("GET", "/person?person_id=dee&_expand=1")).body[0];
    expect(missing.friends.map((f: any) => (typeof f === "string" ? f : f.person_id))).toEqual(["ann", "ghost"]);
    expect(typeof missing.friends[1]).toBe("string");
    const none = (await t.request("GET", "/person?person_id=ann", { headers: { "x-service-expand": "0" } })).body[0];
    expect(none.manager).toBe("cid");
  });

  test("expand outside 0-3 is 400", async () => {
    expect(await error("", { "x-service-expand": "4" })).toContain("expand depth");
    expect(await error("?_expand=-1")).toContain("expand depth");
    expect(await error("?_expand=x")).toContain("expand depth");
  });

  test("dotted select into expanded relationships, *, and the error for unexpanded ones", async () => {
    const r = await t.request("GET", "/person?person_id=ann", {
      headers: { "x-service-expand": "2", "x-service-select": "name,city.name,city.country.continent,manager.*" },
    });
    expect(r.body[0]).toEqual({
      person_id: "ann",
      name: "Ann",
      city: { city_id: "oslo", name: "Oslo", country: { country_id: "no", continent: "Europe" } },
      manager: expect.objectContaining({ person_id: "cid", name: "Cid", age: 47, friends: [] }),
    });
    expect(await error("?person_id=ann", { "x-service-select": "city.name" })).toContain('"city" is not expanded');
    expect(await error("?person_id=ann", { "x-service-expand": "1", "x-service-select": "city.country.name" })).toContain(
      '"city.country" is not expanded',
    );
    expect(await error("", { "x-service-expand": "1", "x-service-select": "name.first" })).toContain("is not a relationship");
  });

  test("expand is batched: one query per level and relationship field, never one per object", async () => {
    const db = t.burrow.envDbs.development;
    const original = db.execute.bind(db);
    let calls = 0;
    (db as any).execute = (...a: any[]) => {
      calls++;
      return (original as any)(...a);
    };
    try {
      const r = await t.request("GET", "/person", { headers: { "x-service-expand": "1" } });
      expect(r.body).toHaveLength(5);
      expect(calls).toBe(1 + 3); // the page, then friends, manager, city
    } finally {
      (db as any).execute = original;
    }
  });
});

describe("DELETE by query", () => {
  test("deletes every match; refuses without a condition", async () => {
    await t.request("POST", "/city", {
      body: [
        { city_id: "x1", name: "Tmp" },
        { city_id: "x2", name: "Tmp" },
        { city_id: "x3", name: "Keep" },
      ],
    });
    const r = await t.request("DELETE", "/city?name=Tmp");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({});
    expect((await t.request("GET", "/city?name[in]=Tmp,Keep")).body.map((c: any) => c.city_id)).toEqual(["x3"]);
    expect((await t.request("DELETE", "/city?name=Nothing")).status).toBe(200);
    expect((await t.request("DELETE", "/city")).status).toBe(400);
    expect((await t.request("DELETE", "/city?shoe=1")).status).toBe(400);
  });
});

describe("indexes", () => {
  test("a schema's indexes are used by queries on them", async () => {
    const db = t.burrow.envDbs.development;
    const plan = async (sql: string, args: unknown[]) =>
      (await db.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: args as never })).rows.map((r) => String(r.detail)).join(" | ");
    expect(await plan(`SELECT 1 FROM o_person AS t WHERE t."age" = ?`, [25])).toContain("ix$person$age");
    expect(await plan(`SELECT 1 FROM o_person AS t WHERE t."name" > ?`, ["B"])).toContain("ix$person$name");
  });
});
