// Schema definitions, migration plans and field values: pure functions, table tests.

import { describe, expect, test } from "bun:test";
import { checkReferences, validateDefinition, type SchemaDef } from "../../src/schema/definition.ts";
import { describePlan, planDevelopment, planProduction } from "../../src/schema/plan.ts";
import { convertValue, decodeValue, encodeValue } from "../../src/schema/values.ts";
import { inferField, parseRelationsHeader } from "../../src/schema/infer.ts";
import { createTableSql } from "../../src/schema/layout.ts";

const def = (fields: SchemaDef["fields"], extra: Partial<SchemaDef> = {}): SchemaDef => validateDefinition({ name: "t", fields, ...extra });

describe("validateDefinition", () => {
  test("normalizes: default permissions open, empty indexes, many false", () => {
    expect(validateDefinition({ name: "todo", fields: { owner: { type: "relationship", schema: "user" } } })).toEqual({
      name: "todo",
      fields: { owner: { type: "relationship", schema: "user", many: false } },
      permissions: { create: "open", read: "open", update: "open", delete: "open" },
      indexes: [],
    });
  });

  test("user schemas", () => {
    const u = validateDefinition({
      name: "member",
      fields: { pw: { type: "password" }, mail: { type: "string" } },
      user: { key: "login", password: "pw", email: "mail", forgotPassword: true },
    });
    expect(u.user).toEqual({ key: "login", password: "pw", email: "mail", forgotPassword: true });
    expect(() => validateDefinition({ name: "m", fields: {}, user: { key: "login" } })).toThrow(
      "user.password must name a field of type password",
    );
    expect(() => validateDefinition({ name: "m", fields: { password: { type: "password" } }, user: { forgotPassword: true } })).toThrow(
      "needs user.email",
    );
    expect(
      validateDefinition({ name: "m", fields: { username: { type: "string" }, password: { type: "password" } }, user: {} }).fields,
    ).toEqual({ password: { type: "password" } });
  });

  test("permissions", () => {
    const d = def({ team: { type: "relationship", schema: "user", many: true } }, {
      permissions: { create: "logged_in", read: { role: "staff" }, update: { relationship: "team" }, delete: "none" },
    } as never);
    expect(d.permissions.read).toEqual({ role: "staff" });
    const users = new Map([["user", validateDefinition({ name: "user", fields: { password: { type: "password" } }, user: {} })]]);
    expect(() => checkReferences(d, users)).not.toThrow();
    const notUser = new Map([["user", validateDefinition({ name: "user", fields: {} })]]);
    expect(() => checkReferences(d, notUser)).toThrow("relate to a user schema");
  });
});

describe("plans", () => {
  const v1 = def({ a: { type: "string" }, b: { type: "integer" } }, { indexes: [["a"]] });

  test("a new schema is created with its indexes", () => {
    expect(describePlan(planDevelopment(null, v1))).toEqual(["+ create schema t", "+ t index (a)"]);
  });

  test("additive development changes are not destructive", () => {
    const p = planDevelopment(
      v1,
      def({ a: { type: "string" }, b: { type: "integer" }, c: { type: "float" } }, { indexes: [["a"], ["c", "b"]] }),
    );
    expect(p.destructive).toEqual([]);
    expect(describePlan(p)).toEqual(["+ t.c (float)", "+ t index (c, b)"]);
  });

  test("removing and retyping fields in development are destructive", () => {
    const p = planDevelopment(v1, def({ a: { type: "integer" } }));
    expect(p.destructive).toHaveLength(2);
    expect(describePlan(p)).toEqual(["~ t.a: string -> integer", "- t.b (integer)", "- t index (a)"]);
  });

  test("retargeting a relationship keeps its storage", () => {
    const r1 = def({ r: { type: "relationship", schema: "x" } });
    const p = planDevelopment(r1, def({ r: { type: "relationship", schema: "y" } }));
    expect(p.steps).toEqual([]);
    expect(p.destructive).toEqual([]);
  });

  test("production keeps every column and index; removals and type changes are destructive", () => {
    const next = def({ a: { type: "boolean" }, c: { type: "string" } });
    const p = planProduction(v1, v1, next);
    expect(Object.keys(p.after.fields).sort()).toEqual(["a", "b", "c"]);
    expect(p.after.fields.a).toEqual({ type: "boolean" });
    expect(p.after.indexes).toEqual([["a"]]);
    expect(p.steps.map((s) => s.kind)).toEqual(["retireField", "addField"]);
    expect(p.destructive.join(";")).toContain('remove field "b"');
    expect(p.destructive.join(";")).toContain('change field "a"');
  });

  test("production refuses a new primary key", () => {
    const u = validateDefinition({ name: "t", fields: { password: { type: "password" } }, user: {} });
    expect(() => planProduction(v1, v1, u)).toThrow("cannot change the primary key");
  });

  test("DDL", () => {
    expect(createTableSql(def({ g: { type: "geopoint" }, ok: { type: "boolean" } }))).toBe(
      'CREATE TABLE "o_t" ("t_id" TEXT PRIMARY KEY NOT NULL, "g$lat" REAL, "g$lon" REAL, "ok" INTEGER, "createddate" INTEGER NOT NULL, "lastmoddate" INTEGER NOT NULL, "sm_owner" TEXT) STRICT',
    );
  });
});

describe("values", () => {
  test("encode and decode", () => {
    expect(encodeValue({ type: "boolean" }, true)).toEqual([1]);
    expect(decodeValue({ type: "boolean" }, [0])).toBe(false);
    expect(encodeValue({ type: "geopoint" }, { lat: -90, lon: -180 })).toEqual([-90, -180]);
    expect(decodeValue({ type: "geopoint" }, [1.5, 2.5])).toEqual({ lat: 1.5, lon: 2.5 });
    expect(encodeValue({ type: "relationship", schema: "u", many: true }, ["a", "b", "a"])).toEqual(['["a","b"]']);
    expect(decodeValue({ type: "array", items: "integer" }, ["[1,2]"])).toEqual([1, 2]);
    expect(() => encodeValue({ type: "integer" }, 2 ** 53)).toThrow();
    expect(() => encodeValue({ type: "geopoint" }, { lat: 0, lon: 180 })).toThrow("longitude");
    expect(() => encodeValue({ type: "geopoint" }, { lat: 0, lon: 0, x: 1 })).toThrow("without other members");
    expect(() => encodeValue({ type: "integer" }, 2 ** 64)).toThrow(
      "value: expected an integer within ±9007199254740991, got 18446744073709552000 (beyond the integer range)",
    );
    expect(() => encodeValue({ type: "array", items: "boolean" }, [true, "no"])).toThrow('value[1]: expected boolean, got string "no"');
    expect(() => encodeValue({ type: "relationship", schema: "u" }, "")).toThrow();
  });

  test("lenient conversion for forced type changes", () => {
    expect(convertValue("42", { type: "integer" })).toBe(42);
    expect(convertValue("4.2", { type: "integer" })).toBeNull();
    expect(convertValue("abc", { type: "float" })).toBeNull();
    expect(convertValue(3, { type: "string" })).toBe("3");
    expect(convertValue("true", { type: "boolean" })).toBe(true);
    expect(convertValue("x", { type: "array", items: "string" })).toEqual(["x"]);
    expect(convertValue(["7"], { type: "integer" })).toBe(7);
    expect(convertValue(["a", "b"], { type: "relationship", schema: "u", many: false })).toBeNull();
    expect(convertValue("k", { type: "relationship", schema: "u", many: true })).toEqual(["k"]);
  });
});

describe("inference", () => {
  test("types from first values", () => {
    expect(inferField("f", "s")).toEqual({ type: "string" });
    expect(inferField("f", 1)).toEqual({ type: "integer" });
    expect(inferField("f", 1.5)).toEqual({ type: "float" });
    expect(inferField("f", [1, 2.5])).toEqual({ type: "array", items: "float" });
    expect(inferField("f", [])).toEqual({ type: "array", items: "string" });
    expect(inferField("f", { lat: 1, lon: 2 })).toEqual({ type: "geopoint" });
    expect(inferField("f", "k", "user")).toEqual({ type: "relationship", schema: "user", many: false });
    expect(() => inferField("f", null)).toThrow("from null");
    expect(() => inferField("f", { lat: 1, lon: 2, z: 3 })).toThrow("X-Service-Relations");
  });

  test("X-Service-Relations", () => {
    expect([...parseRelationsHeader("author=user&author.friends=User")]).toEqual([
      ["author", "user"],
      ["author.friends", "user"],
    ]);
    expect(parseRelationsHeader(null).size).toBe(0);
    expect(() => parseRelationsHeader("a=b=c")).toThrow();
  });
});
