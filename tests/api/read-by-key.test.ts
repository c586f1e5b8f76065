// Select and expand on GET /<schema>/<id>: the same semantics as lists (projection, depth 1-3, errors for
// selecting inside an unexpanded relationship), HEAD, and nested upserts read back by key.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/country", { fields: { name: { type: "string" }, continent: { type: "string" } } });
  await t.admin("PUT", "/schemas/city", { fields: { name: { type: "string" }, country: { type: "relationship", schema: "country" } } });
  await t.admin("PUT", "/schemas/person", {
    fields: {
      name: { type: "string" },
      age: { type: "integer" },
      city: { type: "relationship", schema: "city" },
      friends: { type: "relationship", schema: "person", many: true },
    },
  });
  await t.request("POST", "/country", { body: [{ country_id: "no", name: "Norway", continent: "Europe" }] });
  await t.request("POST", "/city", { body: [{ city_id: "oslo", name: "Oslo", country: "no" }] });
  await t.request("POST", "/person", {
    body: [
      { person_id: "ann", name: "Ann", age: 31, city: "oslo", friends: ["bob", "ghost"] },
      { person_id: "bob", name: "Bob", age: 25, city: "oslo", friends: ["ann"] },
    ],
  });
});
afterAll(() => t.close());

const byKey = (path: string, headers: Record<string, string> = {}) => t.request("GET", path, { headers });
/** The same query as a list restricted to the key: what a read by key must equal. */
const asList = async (key: string, headers: Record<string, string> = {}, query = "") =>
  (await t.request("GET", `/person?person_id=${key}${query}`, { headers })).body[0];

test("without headers a read by key is the plain object", async () => {
  const r = await byKey("/person/ann");
  expect(r.body).toMatchObject({ person_id: "ann", name: "Ann", city: "oslo", friends: ["bob", "ghost"] });
});

test("select returns only those fields plus the key", async () => {
  const r = await byKey("/person/ann", { "x-service-select": "name,age" });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ person_id: "ann", name: "Ann", age: 31 });
  expect(r.body).toEqual(await asList("ann", { "x-service-select": "name,age" }));
});

test("expand 1 to 3 by key, by header or _expand, equals the list's expansion", async () => {
  for (const depth of ["1", "2", "3"]) {
    const r = await byKey("/person/ann", { "x-service-expand": depth });
    expect(r.body).toEqual(await asList("ann", { "x-service-expand": depth }));
    expect((await byKey(`/person/ann?_expand=${depth}`)).body).toEqual(r.body);
  }
  const d1 = (await byKey("/person/ann", { "x-service-expand": "1" })).body;
  expect(d1.city).toMatchObject({ city_id: "oslo", country: "no" });
  expect(d1.friends[0]).toMatchObject({ person_id: "bob", friends: ["ann"] });
  expect(d1.friends[1]).toBe("ghost");
  const d3 = (await byKey("/person/ann", { "x-service-expand": "3" })).body;
  expect(d3.city.country).toMatchObject({ country_id: "no", continent: "Europe" });
  // Depth 3 expands three levels and leaves the fourth as keys.
  expect(d3.friends[0].friends[0].friends[0]).toMatchObject({ person_id: "bob", friends: ["ann"] });
});

test("select and expand together, with dotted paths", async () => {
  const headers = { "x-service-expand": "2", "x-service-select": "name,city.name,city.country.continent" };
  const r = await byKey("/person/ann", headers);
  expect(r.body).toEqual({
    person_id: "ann",
    name: "Ann",
    city: { city_id: "oslo", name: "Oslo", country: { country_id: "no", continent: "Europe" } },
  });
  expect(r.body).toEqual(await asList("ann", headers));
});

test("errors are the list's: selecting inside an unexpanded relationship, bad depth, unknown field", async () => {
  const err = async (headers: Record<string, string>, path = "/person/ann") => {
    const r = await byKey(path, headers);
    expect(r.status).toBe(400);
    return r.body.error as string;
  };
  expect(await err({ "x-service-select": "city.name" })).toContain('"city" is not expanded');
  expect(await err({ "x-service-expand": "1", "x-service-select": "city.country.name" })).toContain('"city.country" is not expanded');
  expect(await err({ "x-service-expand": "4" })).toContain("expand depth");
  expect(await err({}, "/person/ann?_expand=1&_expand=2")).toContain("more than once");
  expect(await err({ "x-service-select": "shoe" })).toContain('unknown field "shoe"');
});

test("a missing object is 404 with or without a shape; HEAD carries the shaped read's status", async () => {
  expect((await byKey("/person/nobody", { "x-service-expand": "1" })).status).toBe(404);
  expect((await byKey("/person/nobody", { "x-service-select": "name" })).status).toBe(404);
  const head = await t.request("HEAD", "/person/ann", { headers: { "x-service-expand": "2" } });
  expect([head.status, head.text]).toEqual([200, ""]);
  expect((await t.request("HEAD", "/person/ann", { headers: { "x-service-select": "city.name" } })).status).toBe(400);
});

test("an upsert with X-Service-Relations reads back by key with expand", async () => {
  const relations = "city=city&city.country=country&friends=person";
  const up = await t.request("POST", "/person", {
    headers: { "x-service-relations": relations },
    body: {
      person_id: "cid",
      name: "Cid",
      city: { city_id: "rome", name: "Rome", country: { country_id: "it", name: "Italy", continent: "Europe" } },
      friends: [{ person_id: "dee", name: "Dee" }, "ann"],
    },
  });
  expect(up.status).toBe(201);
  const back = (await byKey("/person/cid", { "x-service-expand": "2" })).body;
  expect(back.city).toMatchObject({ city_id: "rome", name: "Rome", country: { country_id: "it", name: "Italy" } });
  expect(back.friends.map((f: { person_id: string }) => f.person_id)).toEqual(["dee", "ann"]);
  expect(back.friends[1].city).toMatchObject({ city_id: "oslo", name: "Oslo" });
  expect((await byKey("/person/cid")).body.city).toBe("rome");
});
