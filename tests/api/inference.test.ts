// Development inference of schemas and fields on write (docs/api/datastore.md#inference-in-development), and --no-infer.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

describe("inference", () => {
  test("a write to an unknown schema creates it with open permissions and inferred types", async () => {
    const r = await t.request("POST", "/car", {
      body: { make: "saab", doors: 4, litres: 1.9, electric: false, owners: ["a"], parked: { lat: 1, lon: 2 } },
    });
    expect(r.status).toBe(201);
    const def = (await t.admin("GET", "/schemas/car")).body;
    expect(def.fields).toEqual({
      make: { type: "string" },
      doors: { type: "integer" },
      litres: { type: "float" },
      electric: { type: "boolean" },
      owners: { type: "array", items: "string" },
      parked: { type: "geopoint" },
    });
    expect(def.permissions).toEqual({ create: "open", read: "open", update: "open", delete: "open" });
  });

  test("a new field on update is added; existing objects read NULL for it (omitted)", async () => {
    const c = await t.request("POST", "/car", { body: { make: "volvo" } });
    const u = await t.request("PUT", `/car/${c.body.car_id}`, { body: { colour: "red" } });
    expect(u.body.colour).toBe("red");
    const other = (await t.request("GET", "/car")).body.find((x: any) => x.make === "saab");
    expect(other).not.toHaveProperty("colour");
  });

  test("X-Service-Relations declares relationships (one and many), creating the target schema", async () => {
    const r = await t.request("POST", "/garage", {
      body: { keeper: "bob", cars: ["c1", "c2"] },
      headers: { "x-service-relations": "keeper=person&cars=car" },
    });
    expect(r.status).toBe(201);
    const def = (await t.admin("GET", "/schemas/garage")).body;
    expect(def.fields.keeper).toEqual({ type: "relationship", schema: "person", many: false });
    expect(def.fields.cars).toEqual({ type: "relationship", schema: "car", many: true });
    expect((await t.admin("GET", "/schemas/person")).status).toBe(200);
  });

  test("malformed X-Service-Relations is 400", async () => {
    for (const h of ["keeper", "keeper=", "=user", "Keeper=user", "a.b.c.d=user", "a=b&a=c"]) {
      const r = await t.request("POST", "/garage", { body: { x: 1 }, headers: { "x-service-relations": h } });
      expect([h, r.status]).toEqual([h, 400]);
    }
  });

  test("values that cannot be inferred are 400 and change nothing", async () => {
    const cases: Record<string, unknown>[] = [
      { mystery: null },
      { mystery: "NULL" },
      { mystery: [1, "a"] },
      { mystery: { a: 1 } },
      { mystery: [[1]] },
    ];
    for (const body of cases) {
      const r = await t.request("POST", "/car", { body });
      expect([body, r.status]).toEqual([body, 400]);
    }
    expect((await t.admin("GET", "/schemas/car")).body.fields.mystery).toBeUndefined();
  });

  test("a batch infers from all objects; integers and floats widen to float", async () => {
    const r = await t.request("POST", "/reading", { body: [{ v: 1 }, { v: 2.5 }] });
    expect(r.body.succeeded).toHaveLength(2);
    expect((await t.admin("GET", "/schemas/reading")).body.fields.v).toEqual({ type: "float" });
  });

  test("invalid schema and field names are refused", async () => {
    expect((await t.request("POST", "/bad-name", { body: { a: 1 } })).status).toBe(400);
    for (const name of ["Upper", "1abc", "with space", "_hidden", "constructor", "a".repeat(65)]) {
      const r = await t.request("POST", "/car", { body: { [name]: 1 } });
      expect([name, r.status]).toEqual([name, 400]);
    }
  });

  test("concurrent first writes of the same new field infer it once", async () => {
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => t.request("POST", "/race", { body: { n: i, label: `x${i}` } })));
    expect(rs.every((r) => r.status === 201)).toBe(true);
    expect((await t.request("GET", "/race")).body).toHaveLength(20);
  });
});

describe("--no-infer", () => {
  test("development without inference: unknown schema 404, unknown field 400", async () => {
    const n = await makeTestApp({ flags: { "--no-infer": true } });
    try {
      expect((await n.request("POST", "/car", { body: { make: "x" } })).status).toBe(404);
      const f = await n.request("POST", "/user", { body: { username: "u", password: "pw-123456", age: 3 } });
      expect(f.status).toBe(400);
      expect(f.body.error).toBe("age does not exist in schema user");
    } finally {
      await n.close();
    }
  });
});
