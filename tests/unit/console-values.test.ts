// The console's pure value handling (static/console/values.ts): what an admin types into the data grid becomes
// the API's JSON by field type, stored values show as short text, filters become the API's query string, and
// Content-Range totals are read, including the unknown total of an uncounted page.

import { describe, expect, test } from "bun:test";
import { filtersToQuery, parseInput, primaryKeyOf, showValue, totalOf, uploadValue } from "../../static/console/values.ts";

describe("parseInput", () => {
  const cases: [Parameters<typeof parseInput>[0], string, unknown][] = [
    [{ type: "string" }, "hello", "hello"],
    [{ type: "string" }, "", ""],
    [{ type: "string" }, "null", null],
    [{ type: "integer" }, "42", 42],
    [{ type: "integer" }, " -7 ", -7],
    [{ type: "integer" }, "", null],
    [{ type: "float" }, "2.5", 2.5],
    [{ type: "float" }, "-1e3", -1000],
    [{ type: "boolean" }, "TRUE", true],
    [{ type: "boolean" }, "false", false],
    [{ type: "array", items: "integer" }, "1, 2,3", [1, 2, 3]],
    [{ type: "array", items: "string" }, '["a,b", "c"]', ["a,b", "c"]],
    [{ type: "array", items: "string" }, " ", []],
    [{ type: "geopoint" }, "52.52, 13.405", { lat: 52.52, lon: 13.405 }],
    [{ type: "relationship", schema: "user", many: false }, " alice ", "alice"],
    [{ type: "relationship", schema: "user", many: true }, "alice, bob,", ["alice", "bob"]],
  ];
  for (const [field, text, value] of cases)
    test(`${field.type}${field.items ? `<${field.items}>` : ""} ${JSON.stringify(text)}`, () =>
      expect(parseInput(field, text)).toEqual({ ok: true, value }));

  const refused: [Parameters<typeof parseInput>[0], string, string][] = [
    [{ type: "integer" }, "1.5", "not an integer"],
    [{ type: "integer" }, "99999999999999999", "not an integer"],
    [{ type: "integer" }, "12abc", "not an integer"],
    [{ type: "float" }, "abc", "not a number"],
    [{ type: "float" }, "Infinity", "not a number"],
    [{ type: "boolean" }, "yes", "not true or false"],
    [{ type: "array", items: "integer" }, "1, x", "item 2"],
    [{ type: "array", items: "string" }, "[1,", "not valid JSON"],
    [{ type: "array", items: "integer" }, '["x"]', "item 1"],
    [{ type: "geopoint" }, "north", "latitude, longitude"],
    [{ type: "geopoint" }, "91, 0", "latitude 91"],
    [{ type: "geopoint" }, "0, 181", "longitude 181"],
    [{ type: "binary" }, "x", "choose a file"],
  ];
  for (const [field, text, words] of refused)
    test(`refuses ${field.type} ${JSON.stringify(text)}`, () => {
      const r = parseInput(field, text);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain(words);
    });
});

test("showValue", () => {
  expect(showValue({ type: "geopoint" }, { lat: 1, lon: 2 })).toBe("1, 2");
  expect(showValue({ type: "array", items: "string" }, ["a", "b"])).toBe("a, b");
  expect(showValue({ type: "array", items: "string" }, [{ x: 1 }])).toBe('[{"x":1}]');
  expect(showValue(undefined, null)).toBe("");
  expect(showValue(undefined, { a: 1 })).toBe('{"a":1}');
  expect(showValue({ type: "boolean" }, false)).toBe("false");
});

test("filtersToQuery", () => {
  expect(
    filtersToQuery([
      { field: "done", op: "eq", value: "false" },
      { field: "n", op: "gte", value: "2" },
      { field: "x", op: "null", value: "" },
      { field: "y", op: "lt", value: "" },
    ]),
  ).toBe("done=false&n%5Bgte%5D=2&x%5Bnull%5D=true");
  expect(filtersToQuery([{ field: "t", op: "eq", value: "a&b=c" }])).toBe("t=a%26b%3Dc");
});

test("totalOf", () => {
  expect(totalOf("objects 0-49/1000000")).toBe(1_000_000);
  expect(totalOf("objects 0-49/*")).toBe("unknown");
  expect(totalOf(null)).toBeNull();
  expect(totalOf("garbage")).toBeNull();
});

test("primaryKeyOf and uploadValue", () => {
  expect(primaryKeyOf({ name: "todo" })).toBe("todo_id");
  expect(primaryKeyOf({ name: "user", user: { key: "username", password: "password" } })).toBe("username");
  const v = uploadValue("image/png", 'a"b\n.png', new Uint8Array([137, 80, 78, 71]));
  expect(v).toBe(
    "Content-Type: image/png\nContent-Disposition: attachment; filename=a_b_.png\nContent-Transfer-Encoding: base64\n\niVBORw==",
  );
});
