// NULL fields are omitted from every response object (docs/api/README.md#null-fields-are-omitted): create, read, list, update, batch,
// upsert, relationship sub-resources, expansion at every depth, select, login; queries on NULL are unchanged.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp, type TestResponse } from "../helpers/app.ts";
import { macAuth } from "../helpers/sign.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/country", { fields: { name: { type: "string" } } });
  await t.admin("PUT", "/schemas/city", { fields: { name: { type: "string" }, country: { type: "relationship", schema: "country" } } });
  await t.admin("PUT", "/schemas/person", {
    fields: {
      name: { type: "string" },
      age: { type: "integer" },
      score: { type: "float" },
      active: { type: "boolean" },
      tags: { type: "array", items: "string" },
      home: { type: "geopoint" },
      photo: { type: "binary" },
      city: { type: "relationship", schema: "city" },
      manager: { type: "relationship", schema: "person" },
      friends: { type: "relationship", schema: "person", many: true },
    },
  });
});
afterAll(() => t.close());

const AUTO = ["createddate", "lastmoddate"];
const keys = (o: object) => Object.keys(o).sort();
/** No member anywhere in the answer is JSON null (strings holding "null" are fine). */
const noNulls = (r: TestResponse) => expect(r.text).not.toMatch(/:null[,}\]]/);
const get = (path: string, headers: Record<string, string> = {}) => t.request("GET", path, { headers });

describe("writes", () => {
  test("create and read by key answer only the fields that have a value", async () => {
    const c = await t.request("POST", "/person", { body: { person_id: "sparse", name: "Sparse", age: null, tags: "NULL" } });
    expect(c.status).toBe(201);
    noNulls(c);
    expect(keys(c.body)).toEqual(["createddate", "lastmoddate", "name", "person_id"]);
    const g = await get("/person/sparse");
    noNulls(g);
    expect(g.body).toEqual(c.body);
  });

  test("values keep their types and exact digits: 2^53-1, 1/3, false, unicode, arrays, geopoints", async () => {
    const full = {
      person_id: "full",
      name: 'Zoë "😀" \\ \u2028',
      age: Number.MAX_SAFE_INTEGER,
      score: 1 / 3,
      active: false,
      tags: ["ä", "b,c", ""],
      home: { lat: 59.91, lon: 10.75 },
      friends: [],
    };
    const c = await t.request("POST", "/person", { body: full });
    expect(c.body).toEqual({ ...full, createddate: c.body.createddate, lastmoddate: c.body.lastmoddate });
    expect(c.text).toContain(`"age":${Number.MAX_SAFE_INTEGER}`);
    const neg = await t.request("POST", "/person", {
      body: { person_id: "neg", age: -Number.MAX_SAFE_INTEGER, score: -1e300, active: true },
    });
    expect(neg.body).toMatchObject({ age: -Number.MAX_SAFE_INTEGER, score: -1e300, active: true });
    expect((await get("/person/full")).body).toEqual(c.body);
  });

  test("update: a field cleared with null or NULL disappears from the answer and from reads", async () => {
    await t.request("POST", "/person", { body: { person_id: "upd", name: "U", age: 3, home: { lat: 1, lon: 2 }, manager: "full" } });
    const u = await t.request("PUT", "/person/upd", { body: { age: null, home: null, manager: "NULL" } });
    expect(u.status).toBe(200);
    noNulls(u);
    expect(keys(u.body)).toEqual([...AUTO, "name", "person_id"].sort());
    expect(keys((await get("/person/upd")).body)).toEqual(keys(u.body));
  });

  test("batch create stores objects whose NULL fields read back omitted", async () => {
    const r = await t.request("POST", "/person", {
      body: [
        { person_id: "b1", name: "B1" },
        { person_id: "b2", age: 2, name: null },
      ],
    });
    expect(r.body).toEqual({ succeeded: ["b1", "b2"], failed: [] });
    const list = await get("/person?person_id[in]=b1,b2");
    noNulls(list);
    expect(list.body.map(keys)).toEqual([[...AUTO, "name", "person_id"].sort(), [...AUTO, "age", "person_id"].sort()]);
  });

  test("nested upsert: the parent and every nested object omit NULL fields", async () => {
    const r = await t.request("POST", "/person", {
      headers: { "x-service-relations": "city=city&city.country=country&friends=person" },
      body: { person_id: "up", name: "Up", city: { city_id: "nowhere", name: "Nowhere" }, friends: [{ person_id: "upf", age: 7 }, "full"] },
    });
    expect(r.status).toBe(201);
    noNulls(r);
    expect(keys(r.body)).toEqual([...AUTO, "city", "friends", "name", "person_id"].sort());
    expect(r.body.city).toEqual({
      city_id: "nowhere",
      name: "Nowhere",
      createddate: r.body.city.createddate,
      lastmoddate: r.body.city.lastmoddate,
    });
    expect(keys(r.body.friends[0])).toEqual([...AUTO, "age", "person_id"].sort());
    expect(r.body.friends[1]).toBe("full");
    // Upserting again clears a nested field with null: it disappears from the nested answer.
    const again = await t.request("POST", "/person", {
      headers: { "x-service-relations": "city=city" },
      body: { person_id: "up", city: { city_id: "nowhere", name: null } },
    });
    expect(again.status).toBe(200);
    noNulls(again);
    expect(keys(again.body.city)).toEqual([...AUTO, "city_id"].sort());
  });

  test("relationship sub-resources answer the parent without NULL fields", async () => {
    await t.request("POST", "/person", { body: { person_id: "sub", name: "Sub" } });
    const appended = await t.request("PUT", "/person/sub/tags", { body: ["x"] });
    noNulls(appended);
    expect(keys(appended.body)).toEqual([...AUTO, "name", "person_id", "tags"].sort());
    await t.request("PUT", "/person/sub/manager", { body: ["full"] });
    await t.request("DELETE", "/person/sub/manager/full");
    expect(await get("/person/sub").then((g) => g.body)).not.toHaveProperty("manager");
  });
});

describe("reads", () => {
  beforeAll(async () => {
    // Level 0 -> friends (1) -> manager (2) -> city (3) -> country (not expanded). Each level has a NULL relationship.
    await t.request("POST", "/country", { body: { country_id: "no", name: "Norway" } });
    await t.request("POST", "/city", {
      body: [
        { city_id: "oslo", name: "Oslo", country: "no" },
        { city_id: "void", name: "Void" },
      ],
    });
    await t.request("POST", "/person", {
      body: [
        { person_id: "l3", name: "L3", city: "void" },
        { person_id: "l2", name: "L2", manager: "l3" },
        { person_id: "l1", name: "L1", friends: ["l2", "ghost"] },
        { person_id: "l0", name: "L0", friends: ["l1"], city: "oslo" },
      ],
    });
  });

  test("a list answers no NULL member for any object", async () => {
    const r = await get("/person");
    expect(r.body.length).toBeGreaterThan(8);
    noNulls(r);
    for (const o of r.body) for (const v of Object.values(o)) expect(v).not.toBeNull();
  });

  test("expand depth 1 to 3: NULL relationships are omitted at every depth; missing targets stay keys", async () => {
    const d1 = (await get("/person?person_id=l0", { "x-service-expand": "1" })).body[0];
    expect(d1).not.toHaveProperty("manager");
    expect(d1.city).toEqual({
      city_id: "oslo",
      name: "Oslo",
      country: "no",
      createddate: d1.city.createddate,
      lastmoddate: d1.city.lastmoddate,
    });
    expect(d1.friends[0]).not.toHaveProperty("manager");
    expect(d1.friends[0].friends).toEqual(["l2", "ghost"]);

    const d2 = await get("/person?person_id=l0&_expand=2");
    noNulls(d2);
    const l1 = d2.body[0].friends[0];
    expect(l1.friends[0]).toMatchObject({ person_id: "l2", manager: "l3" });
    expect(l1.friends[0]).not.toHaveProperty("city");
    expect(l1.friends[1]).toBe("ghost");
    expect(d2.body[0].city.country).toMatchObject({ country_id: "no", name: "Norway" });

    const d3 = await get("/person/l0", { "x-service-expand": "3" });
    noNulls(d3);
    const l2 = d3.body.friends[0].friends[0];
    expect(l2).not.toHaveProperty("city");
    expect(l2.manager).toMatchObject({ person_id: "l3", city: "void" });
    expect(l2.manager).not.toHaveProperty("manager");
    expect(l2.manager).not.toHaveProperty("friends");
    const viaL1 = (await get("/person/l1?_expand=3")).body.friends[0].manager.city;
    expect(viaL1).toEqual({ city_id: "void", name: "Void", createddate: viaL1.createddate, lastmoddate: viaL1.lastmoddate });
  });

  test("an explicitly selected NULL field is omitted too", async () => {
    const r = await get("/person?person_id=sparse", { "x-service-select": "name,age,home,manager" });
    expect(r.body).toEqual([{ person_id: "sparse", name: "Sparse" }]);
    const one = await get("/person/sparse", { "x-service-select": "age" });
    expect(one.body).toEqual({ person_id: "sparse" });
    const nested = await get("/person/l0", { "x-service-select": "city.country,friends.manager", "x-service-expand": "1" });
    expect(nested.body).toEqual({ person_id: "l0", city: { city_id: "oslo", country: "no" }, friends: [{ person_id: "l1" }] });
  });

  test("[null]=true still matches NULL fields, and counts include them", async () => {
    const nullAge = (await get("/person?age[null]=true&person_id[in]=sparse,full,b1,b2")).body.map((o: any) => o.person_id);
    expect(nullAge).toEqual(["sparse", "b1"]);
    const noHome = (await get("/person?home[null]=true&person_id[in]=full,upd")).body.map((o: any) => o.person_id);
    expect(noHome).toEqual(["upd"]);
    const counted = await t.request("GET", "/person?person_id[in]=sparse,full,b1,b2", { headers: { range: "objects=0-0" } });
    expect(counted.headers.get("content-range")).toBe("objects 0-0/4");
  });

  test("ordering with NULLs is unchanged: first ascending, last descending, creation order among them", async () => {
    const ids = async (order: string) =>
      (await get("/person?person_id[in]=sparse,full,neg,b1,b2", { "x-service-orderby": order })).body.map((o: any) => o.person_id);
    expect(await ids("age:asc")).toEqual(["sparse", "b1", "neg", "b2", "full"]);
    expect(await ids("age:desc")).toEqual(["full", "b2", "neg", "sparse", "b1"]);
  });

  test("a NULL geopoint is omitted; near queries answer located objects with their distance", async () => {
    expect(await get("/person/sparse").then((g) => g.body)).not.toHaveProperty("home");
    const near = await get("/person?home[near]=59.9,10.7&person_id[in]=full,sparse");
    noNulls(near);
    expect(near.body.map((o: any) => o.person_id)).toEqual(["full"]);
    expect(keys(near.body[0].home)).toEqual(["distance", "lat", "lon"]);
  });
});

describe("users", () => {
  test("the user object of login and loggedInUser leaves out NULL fields (no email, no sm_owner)", async () => {
    expect((await t.request("POST", "/user", { body: { username: "nomail", password: "nomail-password" } })).status).toBe(201);
    const login = await t.request("POST", "/user/accessToken", { body: { username: "nomail", password: "nomail-password" } });
    expect(login.status).toBe(200);
    noNulls(login);
    expect(keys(login.body.service.user)).toEqual([...AUTO, "username"].sort());
    const c = { access_token: login.body.access_token, mac_key: login.body.mac_key };
    const me = await t.request("GET", "/user/loggedInUser", { headers: { authorization: macAuth(c, "GET", "/user/loggedInUser") } });
    expect(me.status).toBe(200);
    noNulls(me);
    expect(me.body).toEqual(login.body.service.user);
  });
});
