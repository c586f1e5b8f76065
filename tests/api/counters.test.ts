// Atomic counters: <field>[inc] on PUT adds in SQL (on create it sets the field: counters-on-create.test.ts).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/counter", { fields: { n: { type: "integer" }, f: { type: "float" }, label: { type: "string" } } });
  await t.request("POST", "/counter", { body: { counter_id: "c", n: 10 } });
});
afterAll(() => t.close());

test("adds and subtracts; a NULL field counts from 0", async () => {
  expect((await t.request("PUT", "/counter/c", { body: { "n[inc]": 5 } })).body.n).toBe(15);
  expect((await t.request("PUT", "/counter/c", { body: { "n[inc]": -20, label: "x" } })).body).toMatchObject({ n: -5, label: "x" });
  await t.request("POST", "/counter", { body: { counter_id: "empty" } });
  expect((await t.request("PUT", "/counter/empty", { body: { "n[inc]": 3 } })).body.n).toBe(3);
});

test("refused on non-integer fields, with a non-integer amount, together with a plain set, past 2^53", async () => {
  const cases: [string, string, unknown][] = [
    ["PUT", "/counter/c", { "f[inc]": 1 }],
    ["PUT", "/counter/c", { "label[inc]": 1 }],
    ["PUT", "/counter/c", { "n[inc]": 1.5 }],
    ["PUT", "/counter/c", { "n[inc]": "1" }],
    ["PUT", "/counter/c", { "n[inc]": 1, n: 4 }],
  ];
  for (const [method, path, body] of cases) {
    const r = await t.request(method, path, { body });
    expect([body, r.status]).toEqual([body, 400]);
    expect(r.body.error).toContain("[inc]");
  }
  await t.request("PUT", "/counter/c", { body: { n: Number.MAX_SAFE_INTEGER - 1 } });
  const over = await t.request("PUT", "/counter/c", { body: { "n[inc]": 5 } });
  expect(over.status).toBe(400);
  expect(over.body.error).toContain("exceed");
  expect((await t.request("GET", "/counter/c")).body.n).toBe(Number.MAX_SAFE_INTEGER - 1);
  expect((await t.request("PUT", "/counter/ghost", { body: { "n[inc]": 1 } })).status).toBe(404);
});

test("10,000 increments from 50 concurrent clients lose nothing", async () => {
  await t.request("POST", "/counter", { body: { counter_id: "hot", n: 0 } });
  let errors = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      for (let i = 0; i < 200; i++) if ((await t.request("PUT", "/counter/hot", { body: { "n[inc]": 1 } })).status !== 200) errors++;
    }),
  );
  expect(errors).toBe(0);
  expect((await t.request("GET", "/counter/hot")).body.n).toBe(10_000);
}, 60_000);
