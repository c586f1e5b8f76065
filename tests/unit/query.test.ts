// The query parser and compiler: pure, table-driven.

import { describe, expect, test } from "bun:test";
import { compileConditions, compileQuery } from "../../src/datastore/query/compile.ts";
import { boxRects, capRects, haversine } from "../../src/datastore/query/geo.ts";
import { MAX_CLAUSES, MAX_IN_VALUES } from "../../src/datastore/query/limits.ts";
import { parseConditions, parseExpand, parseOrderBy, parseQuery, parseRange, parseSelect } from "../../src/datastore/query/parse.ts";
import { compileSchema } from "../../src/schema/compiled.ts";
import { validateDefinition } from "../../src/schema/definition.ts";

const qs = (s: string) => new URLSearchParams(s);
const noHeaders = { get: () => null };
const schema = compileSchema(
  validateDefinition({
    name: "item",
    fields: {
      name: { type: "string" },
      n: { type: "integer" },
      f: { type: "float" },
      ok: { type: "boolean" },
      tags: { type: "array", items: "string" },
      at: { type: "geopoint" },
      owner: { type: "relationship", schema: "item" },
    },
  }),
);

describe("parseConditions", () => {
  test("plain clauses, operators and the OR block", () => {
    const c = parseConditions(qs("n[gt]=1&name=a&[or1].ok=true&[or1].[and2].n=3&[or1].[and2].f[lte]=2.5&[or1].name=b"));
    expect(c.where.map((x) => [x.field, x.op, x.value])).toEqual([
      ["n", "gt", "1"],
      ["name", "eq", "a"],
    ]);
    expect(c.or!.map((g) => g.map((x) => `${x.field}:${x.op}:${x.value}`))).toEqual([
      ["ok:eq:true"],
      ["n:eq:3", "f:lte:2.5"],
      ["name:eq:b"],
    ]);
  });

  test("operators are case-insensitive; repeated keys are all kept", () => {
    expect(parseConditions(qs("n[GT]=1&n[gt]=2")).where.map((x) => x.op)).toEqual(["gt", "gt"]);
  });

  test("limits and malformed keys", () => {
    const many = Array.from({ length: MAX_CLAUSES + 1 }, (_, i) => `n=${i}`).join("&");
    expect(() => parseConditions(qs(many))).toThrow(`at most ${MAX_CLAUSES}`);
    for (const key of ["a[b][c]", "[or]a", "[or1]a", "a.b", "[or1].[and1].[and2].a", "a[", "a b", "é"])
      expect(() => parseConditions(qs(`${encodeURIComponent(key)}=1`))).toThrow();
    expect(() => parseConditions(qs(`name=${"x".repeat(2000)}`))).toThrow("too long");
  });
});

describe("headers", () => {
  test("select, expand, order, range", () => {
    expect(parseSelect("a, b.c ,d.*,*")).toEqual([["a"], ["b", "c"], ["d", "*"], ["*"]]);
    expect(() => parseSelect("a.*.b")).toThrow();
    expect(() => parseSelect("a.b.c.d.e")).toThrow();
    expect(parseExpand("2", null)).toBe(2);
    expect(parseExpand(null, "3")).toBe(3);
    expect(parseExpand("1", "3")).toBe(1);
    expect(() => parseExpand("4", null)).toThrow();
    expect(parseOrderBy("a:desc, b , c:ASC")).toEqual([
      { field: "a", desc: true },
      { field: "b", desc: false },
      { field: "c", desc: false },
    ]);
    expect(parseRange("objects=0-9")).toEqual({ start: 0, end: 9 });
    expect(parseRange("objects=5-")).toEqual({ start: 5, end: null });
    expect(parseRange(null)).toBeNull();
  });

  test("OR with ordering or geo is refused", () => {
    expect(() => parseQuery(qs("[or1].a=1"), { get: (h: string) => (h === "x-service-orderby" ? "a" : null) })).toThrow(
      "X-Service-OrderBy",
    );
    expect(() => parseQuery(qs("[or1].a=1&at[within]=1,2,3"), noHeaders)).toThrow("geo");
  });
});

describe("compile", () => {
  test("identifiers quoted, values bound, types converted", () => {
    const w = compileConditions(schema, parseConditions(qs("name=x'; DROP TABLE o_item; --&n[gte]=3&ok=false&tags[in]=a,b")), null);
    expect(w.sql).toBe(`t."name" = ? AND t."n" >= ? AND t."ok" = ? AND EXISTS (SELECT 1 FROM json_each(t."tags") WHERE value IN (?, ?))`);
    expect(w.args).toEqual(["x'; DROP TABLE o_item; --", 3, 0, "a", "b"]);
  });

  test("the access-control scope is ANDed with everything", () => {
    const w = compileConditions(schema, parseConditions(qs("[or1].n=1&[or1].n=2")), { sql: `t."sm_owner" = ?`, args: ["user/ann"] });
    expect(w.sql).toBe(`((t."n" = ?) OR (t."n" = ?)) AND (t."sm_owner" = ?)`);
    expect(w.args).toEqual([1, 2, "user/ann"]);
  });

  test("near orders by distance and ignores the requested order", () => {
    const c = compileQuery(
      schema,
      parseQuery(qs("at[near]=10,20,0.1"), { get: (h: string) => (h === "x-service-orderby" ? "name:desc" : null) }),
      null,
    );
    expect(c.near?.field).toBe("at");
    expect(c.order.sql).toStartWith("ORDER BY (2 * asin(");
    expect(c.order.sql).not.toContain("name");
  });

  test("[in] lists are bounded", () => {
    const list = Array.from({ length: MAX_IN_VALUES + 1 }, (_, i) => i).join(",");
    expect(() => compileConditions(schema, parseConditions(qs(`n[in]=${list}`)), null)).toThrow(`at most ${MAX_IN_VALUES}`);
  });
});

describe("geo math", () => {
  test("haversine reference", () => {
    expect(haversine(0, 0, 0, 90)).toBeCloseTo(Math.PI / 2, 12);
    expect(haversine(90, 0, -90, 0)).toBeCloseTo(Math.PI, 12);
    expect(haversine(10, 179.5, 10, -179.5)).toBeCloseTo(haversine(10, 0, 10, 1), 12);
  });

  test("cap rectangles wrap the antimeridian and open at the poles", () => {
    expect(capRects(0, 179.9, 0.01).length).toBe(2);
    expect(capRects(89.5, 0, 0.02)).toEqual([{ lat1: 89.5 - 0.02 * (180 / Math.PI), lat2: 90, lon1: -180, lon2: 180 }]);
    expect(boxRects({ lat1: 0, lon1: 170, lat2: 1, lon2: -170 })).toHaveLength(2);
  });
});
