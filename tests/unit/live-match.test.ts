// The live filter (src/live/match.ts), table-driven: every operator on every kind of field over a few full JSON
// objects, NULL (missing) members, text in UTF-8 order, geo conditions near the poles and across the antimeridian,
// the OR block, and the 400s, which must be compile.ts's own. Also the parts of src/live/render.ts that need no
// database: passwords and other versions' fields left out, SQLite's float text, and view keys.

import { describe, expect, test } from "bun:test";
import { compileConditions } from "../../src/datastore/query/compile.ts";
import { parseConditions } from "../../src/datastore/query/parse.ts";
import type { Conditions } from "../../src/datastore/query/tree.ts";
import { ApiError } from "../../src/errors.ts";
import { compareText, compileMatch } from "../../src/live/match.ts";
import { type LiveView, liveViewKey, parseFull, renderFor, sqliteFloatText } from "../../src/live/render.ts";
import { compileSchema } from "../../src/schema/compiled.ts";
import { validateDefinition } from "../../src/schema/definition.ts";

const item = compileSchema(
  validateDefinition({
    name: "item",
    fields: {
      name: { type: "string" },
      n: { type: "integer" },
      f: { type: "float" },
      ok: { type: "boolean" },
      tags: { type: "array", items: "string" },
      nums: { type: "array", items: "integer" },
      fl: { type: "array", items: "float" },
      flags: { type: "array", items: "boolean" },
      at: { type: "geopoint" },
      owner: { type: "relationship", schema: "item" },
      members: { type: "relationship", schema: "item", many: true },
      pic: { type: "binary" },
      secret: { type: "string", visibility: "owner" },
    },
  }),
);
const member = compileSchema(
  validateDefinition({
    name: "member",
    user: { key: "username", password: "password" },
    fields: { password: { type: "password" }, email: { type: "string", visibility: "owner" } },
  }),
);

type Obj = Record<string, unknown>;
const OBJECTS: Record<string, Obj> = {
  a: {
    item_id: "a",
    name: "apple",
    n: 2,
    f: 1.5,
    ok: true,
    tags: ["x", "y", "x"],
    nums: [1, 2],
    fl: [0.5],
    flags: [true],
    at: { lat: 59.9, lon: 10.7 },
    owner: "b",
    members: ["a", "b"],
    pic: "/_files/development/0123/p.png",
    secret: "s1",
    createddate: 1000,
    lastmoddate: 2000,
    sm_owner: "user/u1",
  },
  b: {
    item_id: "b",
    name: "",
    n: -1,
    f: -0.25,
    ok: false,
    tags: [],
    nums: [],
    fl: [],
    flags: [false],
    at: { lat: 89.99, lon: -179.5 },
    members: [],
    pic: "https://cdn/x.png",
    createddate: 1500,
    lastmoddate: 1500,
    sm_owner: "user/u2",
  },
  c: { item_id: "c", name: "\uffff", n: 0, f: 1, at: { lat: -10, lon: 179.9 }, createddate: 2000, lastmoddate: 2000 },
  d: { item_id: "d", name: "😀", createddate: 3000, lastmoddate: 3000 },
};

const conditions = (q: string) => parseConditions(new URLSearchParams(q));
const matching = (q: string) => {
  const m = compileMatch(item, conditions(q));
  return Object.keys(OBJECTS).filter((k) => m(OBJECTS[k]!));
};

const CASES: Record<string, [query: string, matches: string[]][]> = {
  "eq on every kind, NULL never equal": [
    ["name=apple", ["a"]],
    ["n=2", ["a"]],
    ["n=%2B0002", ["a"]],
    ["f=1.5", ["a"]],
    ["f=1", ["c"]],
    ["f=-.25", ["b"]],
    ["ok=true", ["a"]],
    ["ok=0", ["b"]],
    ["ok=FALSE", ["b"]],
    ["tags=x", ["a"]],
    ["nums=2", ["a"]],
    ["fl=0.5", ["a"]],
    ["flags=false", ["b"]],
    ["flags=1", ["a"]],
    ["owner=b", ["a"]],
    ["members=b", ["a"]],
    ["pic=https://cdn/x.png", ["b"]],
    ["pic=/_files/development/0123/p.png", ["a"]],
    ["item_id=c", ["c"]],
    ["sm_owner=user/u2", ["b"]],
    ["createddate=1500", ["b"]],
    ["secret=s1", ["a"]],
  ],
  "ne: IS NOT, so a missing member matches; on arrays, does not contain": [
    ["name[ne]=apple", ["b", "c", "d"]],
    ["ok[ne]=true", ["b", "c", "d"]],
    ["f[ne]=1", ["a", "b", "d"]],
    ["tags[ne]=x", ["b", "c", "d"]],
    ["members[ne]=a", ["b", "c", "d"]],
    ["sm_owner[ne]=user/u1", ["b", "c", "d"]],
  ],
  "lt, lte, gt, gte: numbers, booleans as 0/1, text in UTF-8 order, NULL never": [
    ["n[gt]=-1", ["a", "c"]],
    ["n[gte]=-1", ["a", "b", "c"]],
    ["n[lt]=0", ["b"]],
    ["n[lte]=0", ["b", "c"]],
    ["f[gt]=1", ["a"]],
    ["f[lte]=1", ["b", "c"]],
    ["ok[lt]=1", ["b"]],
    ["name[lt]=b", ["a", "b"]],
    ["name[gt]=%EF%BF%BF", ["d"]],
    ["name[lt]=%F0%9F%98%80", ["a", "b", "c"]],
    ["createddate[gt]=1500", ["c", "d"]],
    ["lastmoddate[lte]=1500", ["b"]],
    ["item_id[gte]=b", ["b", "c", "d"]],
  ],
  "null: a member left out is NULL; an empty array is not": [
    ["name[null]=true", []],
    ["ok[null]=TRUE", ["c", "d"]],
    ["at[null]=false", ["a", "b", "c"]],
    ["tags[null]=false", ["a", "b"]],
    ["members[null]=true", ["c", "d"]],
    ["sm_owner[null]=true", ["c", "d"]],
  ],
  "empty: the empty string; [empty]=false matches NULL": [
    ["name[empty]=true", ["b"]],
    ["name[empty]=false", ["a", "c", "d"]],
    ["item_id[empty]=false", ["a", "b", "c", "d"]],
  ],
  "in and nin: one of the values; nin matches NULL; on arrays, contains one or none": [
    ["n[in]=2,0", ["a", "c"]],
    ["n[nin]=2,0", ["b", "d"]],
    ["name[in]=,apple", ["a", "b"]],
    ["tags[in]=y,z", ["a"]],
    ["tags[nin]=y,z", ["b", "c", "d"]],
    ["members[in]=a", ["a"]],
    ["ok[in]=true,0", ["a", "b"]],
    ["ok[nin]=1", ["b", "c", "d"]],
    ["flags[nin]=true", ["b", "c", "d"]],
  ],
  "near and within: located objects, radii in radians, the poles and the antimeridian": [
    ["at[near]=0,0", ["a", "b", "c"]],
    ["at[near]=59.9,10.7,0.001", ["a"]],
    ["at[within]=59.9,10.7,0", ["a"]],
    ["at[within]=89,0,0.03", ["b"]],
    ["at[within]=89,0,0.01", []],
    ["at[within]=-10,-179.9,0.01", ["c"]],
    ["at[within]=-20,170,0,-170", ["c"]],
    ["at[within]=-20,-170,0,170", []],
    ["at[within]=59.9,10.7,89.99,10.7", ["a"]],
    ["at[within]=0,0,4", ["a", "b", "c"]],
    ["at[near]=0,0,3.2", ["a", "b", "c"]],
  ],
  "AND with the OR block": [
    ["", ["a", "b", "c", "d"]],
    ["n=2&[or1].ok=true&[or1].ok=false", ["a"]],
    ["[or1].name=apple&[or1].[and1].n=0&[or1].[and1].f=1", ["a", "c"]],
    ["name[null]=false&[or1].[and1].n[lt]=1&[or1].[and1].ok[null]=true&[or1].tags=x", ["a", "c"]],
  ],
};

describe("compileMatch", () => {
  for (const [title, cases] of Object.entries(CASES))
    test(title, () => {
      for (const [query, expected] of cases) expect([query, matching(query)]).toEqual([query, expected]);
    });

  test("a lone surrogate in a value compares as U+FFFD, as SQLite stores it", () => {
    const c: Conditions = { where: [{ field: "name", op: "eq", value: "a\ud800", key: "name" }], or: null };
    expect(compileMatch(item, c)({ item_id: "x", name: "a\ufffd" })).toBe(true);
  });

  test("text compares in UTF-8 byte order, as SQLite's BINARY collation", () => {
    const words = ["", "a", "ab", "b", "\u00e9", "\ud7ff", "\ue000", "\uffff", "😀", "𝄞", "a\u0000", "Z"];
    const utf8 = [...words].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...words].sort(compareText)).toEqual(utf8);
  });
});

const ERRORS: [query: string, message: string][] = [
  ["nope=1", 'unknown field "nope" in query (schema item)'],
  ["n=1.5", 'n: expected integer, got "1.5"'],
  ["n=99999999999999999999", "n: expected an integer within ±9007199254740991, got 99999999999999999999 (beyond the integer range)"],
  ["f=abc", 'f: expected float, got "abc"'],
  ["ok=yes", 'ok: expected true or false, got "yes"'],
  ["nums[in]=1,x", 'nums[in]: expected integer, got "x"'],
  ["tags[lt]=a", '[lt] does not apply to array or relationship field "tags"'],
  ["at=1", 'geopoint field "at" takes [near], [within] or [null]'],
  ["name[null]=maybe", '"name[null]" takes true or false'],
  ["n[empty]=true", '[empty] works only on string fields, and "n" is not one'],
  ["pic[empty]=true", '[empty] works only on string fields, and "pic" is not one'],
  ["name[near]=1,2", '[near] works only on geopoint fields, and "name" is not one'],
  ["at[near]=1,2&at[near]=3,4", "only one [near] condition per query"],
  ["at[near]=91,0", "Latitude value must be between -90 and 90 inclusive."],
  ["at[within]=0,180,1", "Longitude value must be between -180 inclusive and 180 exclusive."],
  ["at[within]=1,2", "at[within] takes <lat>,<lon>,<radius in radians> or <lat1>,<lon1>,<lat2>,<lon2> (lower left, upper right)"],
  ["at[within]=0,0,-1", "the radius (radians) must be a non-negative number"],
  ["at[within]=5,0,1,1", "at[within]: the first corner is the lower left, so its latitude cannot be above the second's"],
  ["at[near]=x,0", 'at[near]: latitude must be a number, not "x"'],
  [`n[in]=${Array(257).fill("1").join(",")}`, '"n[in]": at most 256 values'],
  ["name=a&[or1].n=x", '[or1].n: expected integer, got "x"'],
];

const errorOf = (f: () => unknown) => {
  try {
    f();
    return null;
  } catch (e) {
    return e instanceof ApiError ? `${e.status} ${e.message}` : String(e);
  }
};

describe("compileMatch refuses what the SQL compiler refuses, with its 400", () => {
  const titled = ERRORS.map(([query, message]) => [query.length > 60 ? `${query.slice(0, 60)}…` : query, query, message] as const);
  test.each(titled)("%s", (_title, query, message) => {
    const c = conditions(query);
    expect(errorOf(() => compileMatch(item, c))).toBe(`400 ${message}`);
    expect(errorOf(() => compileConditions(item, c, null))).toBe(`400 ${message}`);
  });

  test("a password field cannot be queried", () => {
    expect(errorOf(() => compileMatch(member, conditions("password=x")))).toBe('400 password field "password" cannot be queried');
  });
});

describe("renderFor without a database", () => {
  const all: LiveView = { fileBase: null, owner: "all", only: null };

  test("never a password nor a field the schema version lacks; members in json-sql.ts's order", () => {
    const full = { email: "e@x", username: "ann", other: 1, password: "pw", sm_owner: "member/ann", lastmoddate: 2, createddate: 1 };
    expect(renderFor(member, full, all)).toBe('{"username":"ann","email":"e@x","createddate":1,"lastmoddate":2,"sm_owner":"member/ann"}');
    expect(renderFor(member, full, { ...all, owner: { owner: "member/bob", self: "ann" } })).toContain('"email"');
    expect(renderFor(member, full, { ...all, owner: { owner: "member/bob", self: null } })).not.toContain('"email"');
  });

  test("parseFull keeps SQLite's float text; without it the text is computed", () => {
    // SQLite 3.54 writes 3932.110304525122 with 17 digits, the last one off the correctly rounded 3932.1103045251220.
    const text = '{"item_id":"a","f":3932.1103045251221,"at":{"lat":59.899999999999999,"lon":10.0},"createddate":1,"lastmoddate":1}';
    const parsed = parseFull(text);
    expect(renderFor(item, parsed, all)).toBe(text);
    expect(renderFor(item, JSON.parse(text), all)).toBe(
      '{"item_id":"a","f":3932.110304525122,"at":{"lat":59.9,"lon":10.0},"createddate":1,"lastmoddate":1}',
    );
    expect(parseFull('{"a":"x.y","n":12,"b":[1,"e"]}')).toEqual({ a: "x.y", n: 12, b: [1, "e"] });
    // A value changed after parsing is not written with the old text.
    parsed.f = 2.5;
    expect(renderFor(item, parsed, all)).toContain('"f":2.5,');
  });

  test("sqliteFloatText writes doubles as SQLite's %!.17g does", () => {
    const native: [number, string][] = [
      [0, "0.0"],
      [1, "1.0"],
      [-1.5, "-1.5"],
      [0.1 + 0.2, "0.30000000000000004"],
      [1e16, "10000000000000000.0"],
      [1e17, "1.0e+17"],
      [1e21, "1.0e+21"],
      [1e-4, "0.0001"],
      [1.234e-5, "1.234e-05"],
      [-2.5e-10, "-2.5e-10"],
      [1e300, "1.0e+300"],
      [5e-324, "4.9406564584124654e-324"],
    ];
    for (const [x, text] of native) expect([x, sqliteFloatText(x)]).toEqual([x, text]);
    expect(sqliteFloatText(0.1, "digits17")).toBe("0.10000000000000001");
    expect(sqliteFloatText(59.9, "digits17")).toBe("59.899999999999999");
  });

  test("liveViewKey: equal for views that render alike, different otherwise", () => {
    const u1: LiveView = { fileBase: "https://f", owner: { owner: "user/u1", self: null }, only: new Set(["name", "n"]) };
    expect(liveViewKey(u1)).toBe(liveViewKey({ ...u1, only: new Set(["n", "name"]) }));
    expect(liveViewKey(u1)).not.toBe(liveViewKey({ ...u1, owner: { owner: "user/u2", self: null } }));
    expect(liveViewKey(u1)).not.toBe(liveViewKey({ ...u1, fileBase: null }));
    // With the schema: neither the file base nor the owner changes a rendering without binary or owner-only fields.
    expect(liveViewKey(u1, item)).toBe(liveViewKey({ fileBase: null, owner: "none", only: new Set(["n", "name", "nope"]) }, item));
    expect(liveViewKey({ ...u1, only: new Set(["pic"]) }, item)).not.toBe(
      liveViewKey({ ...u1, only: new Set(["pic"]), fileBase: null }, item),
    );
    expect(liveViewKey({ ...all, only: new Set([...item.fields.keys(), "createddate", "lastmoddate", "sm_owner"]) }, item)).toBe(
      liveViewKey(all, item),
    );
  });
});
