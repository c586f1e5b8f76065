// Counters on create (docs/api/datastore.md#counters): `"<field>[inc]": n` in a create body sets the field to n (a new counter
// starts at 0), in single and batch creates, related creates and nested upserts; an upsert of an existing
// object adds atomically. The PUT checks apply: integer field, integer amount, no plain set beside it.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/tally", {
    fields: { n: { type: "integer" }, m: { type: "integer" }, f: { type: "float" }, label: { type: "string" } },
  });
  await t.admin("PUT", "/schemas/board", {
    fields: {
      title: { type: "string" },
      views: { type: "integer" },
      top: { type: "relationship", schema: "tally" },
      all: { type: "relationship", schema: "tally", many: true },
    },
  });
});
afterAll(() => t.close());

const read = async (path: string) => (await t.request("GET", path)).body;

describe("create", () => {
  test("a single create with n[inc] sets n, negative amounts too, beside plain fields", async () => {
    const r = await t.request("POST", "/tally", { body: { tally_id: "one", "n[inc]": 5, "m[inc]": -3, label: "x" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ tally_id: "one", n: 5, m: -3, label: "x" });
    expect(await read("/tally/one")).toMatchObject({ n: 5, m: -3 });
    const edge = await t.request("POST", "/tally", { body: { tally_id: "edge", "n[inc]": Number.MAX_SAFE_INTEGER, "m[inc]": 0 } });
    expect(edge.body).toMatchObject({ n: Number.MAX_SAFE_INTEGER, m: 0 });
    // Afterwards it is an ordinary counter.
    expect((await t.request("PUT", "/tally/one", { body: { "n[inc]": 2 } })).body.n).toBe(7);
  });

  test("batch create: each object's [inc] members set its counters", async () => {
    const r = await t.request("POST", "/tally", {
      body: [
        { tally_id: "b1", "n[inc]": 1 },
        { tally_id: "b2", "n[inc]": 2, "m[inc]": 20 },
        { tally_id: "b3", "f[inc]": 1 },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ succeeded: ["b1", "b2"], failed: ["b3"] });
    expect((await read("/tally?tally_id[in]=b1,b2")).map((o: any) => [o.n, o.m])).toEqual([
      [1, undefined],
      [2, 20],
    ]);
  });

  test("related creates (POST /<schema>/<id>/<relation>) set counters too", async () => {
    await t.request("POST", "/board", { body: { board_id: "rb" } });
    const r = await t.request("POST", "/board/rb/all", { body: [{ tally_id: "rel1", "n[inc]": 9 }] });
    expect(r.body).toEqual({ succeeded: ["rel1"], failed: [] });
    expect((await read("/tally/rel1")).n).toBe(9);
  });

  test("400 on a non-integer field, a non-integer or too large amount, or together with a plain set", async () => {
    const cases: unknown[] = [
      { "f[inc]": 1 },
      { "label[inc]": 1 },
      { "n[inc]": 1.5 },
      { "n[inc]": "1" },
      { "n[inc]": null },
      { "n[inc]": 2 ** 53 },
      { "n[inc]": 1, n: 4 },
    ];
    for (const body of cases) {
      const r = await t.request("POST", "/tally", { body });
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.error).toContain("[inc]");
    }
    expect(await read("/tally?label=never")).toEqual([]);
  });

  test("development inference: a new field named by [inc] becomes an integer field", async () => {
    const r = await t.request("POST", "/score", { body: { "points[inc]": 10 } });
    expect(r.status).toBe(201);
    expect(r.body.points).toBe(10);
    expect((await t.admin("GET", "/schemas/score")).body.fields.points).toEqual({ type: "integer" });
  });
});

describe("nested upsert", () => {
  const relations = { "x-service-relations": "top=tally&all=tally" };

  test("new objects get n; existing ones add n atomically", async () => {
    const first = await t.request("POST", "/board", {
      headers: relations,
      body: { board_id: "u1", "views[inc]": 1, top: { tally_id: "ut", "n[inc]": 4 }, all: [{ tally_id: "ua", "n[inc]": 1 }] },
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ board_id: "u1", views: 1, top: { tally_id: "ut", n: 4 }, all: [{ tally_id: "ua", n: 1 }] });
    const again = await t.request("POST", "/board", {
      headers: relations,
      body: {
        board_id: "u1",
        "views[inc]": 10,
        top: { tally_id: "ut", "n[inc]": -6, label: "L" },
        all: [{ tally_id: "ua" }, { tally_id: "ub", "n[inc]": 3 }],
      },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      views: 11,
      top: { n: -2, label: "L" },
      all: [
        { tally_id: "ua", n: 1 },
        { tally_id: "ub", n: 3 },
      ],
    });
    expect((await read("/board/u1")).views).toBe(11);
    expect((await read("/tally/ut")).n).toBe(-2);
  });

  test("an existing object whose counter is NULL counts from 0", async () => {
    await t.request("POST", "/tally", { body: { tally_id: "blank" } });
    const r = await t.request("POST", "/board", { headers: relations, body: { board_id: "u2", top: { tally_id: "blank", "n[inc]": 8 } } });
    expect(r.body.top.n).toBe(8);
  });

  test("400 when a counter would pass 2^53-1, and the whole upsert writes nothing", async () => {
    await t.request("POST", "/tally", { body: { tally_id: "big", n: Number.MAX_SAFE_INTEGER - 1 } });
    const r = await t.request("POST", "/board", {
      headers: relations,
      body: { board_id: "u3", title: "no", top: { tally_id: "big", "n[inc]": 2 } },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("n[inc]");
    expect((await t.request("GET", "/board/u3")).status).toBe(404);
    expect((await read("/tally/big")).n).toBe(Number.MAX_SAFE_INTEGER - 1);
    const bad = await t.request("POST", "/board", {
      headers: relations,
      body: { board_id: "u4", top: { tally_id: "t4", "label[inc]": 1 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("[inc]");
  });
});
