// Import mappers: CSV parsing and cell conversion, JSON Lines records, CSV columns against a schema, and Parse
// Server objects in both export shapes (REST/dashboard and mongoexport). Pure functions, table tests.

import { describe, expect, test } from "bun:test";
import { CsvParser, csvDate, csvValue, inferCsvColumn, parseCsv } from "../../src/cli/transfer/csv.ts";
import { dateMs, documentRows, mapParseObject, mapValue, type ParseLookups } from "../../src/cli/transfer/parse-format.ts";
import { burrowName, classOfFile, joinOf, parseFieldOf, planFieldNames, schemaNameOf } from "../../src/cli/transfer/parse-names.ts";
import { csvColumns, csvRecord, jsonlRecord } from "../../src/cli/transfer/sources.ts";
import { detectFormat } from "../../src/cli/transfer/file-sources.ts";
import { compileSchema } from "../../src/schema/compiled.ts";
import { validateDefinition } from "../../src/schema/definition.ts";

describe("CSV parser", () => {
  test("quotes, doubled quotes, separators and line breaks inside quotes, CRLF, blank lines; records keep their first line", () => {
    const text = 'a,b,c\r\n1,"x, y","say ""hi"""\n\n2,"two\nlines",\n3,,last';
    expect(parseCsv(text)).toEqual([
      { line: 1, cells: ["a", "b", "c"] },
      { line: 2, cells: ["1", "x, y", 'say "hi"'] },
      { line: 4, cells: ["2", "two\nlines", ""] },
      { line: 6, cells: ["3", "", "last"] },
    ]);
  });

  test("chunk boundaries anywhere give the same records", () => {
    const text = 'k,v\n1,"a ""b""\nc"\r\n2,d\r\n';
    const whole = parseCsv(text);
    for (let cut = 1; cut < text.length; cut++) {
      const p = new CsvParser();
      expect([...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()]).toEqual(whole);
    }
  });

  test("an unclosed quote at the end is an error naming the record's line", () => {
    expect(() => parseCsv('a\n"open')).toThrow("the file ends inside a quoted field");
  });
});

describe("CSV cells by field type", () => {
  const cases: [object, string, unknown][] = [
    [{ type: "string" }, " keep spaces ", " keep spaces "],
    [{ type: "integer" }, "-42", -42],
    [{ type: "float" }, "1.5e3", 1500],
    [{ type: "boolean" }, "Yes", true],
    [{ type: "boolean" }, "0", false],
    [{ type: "array", items: "integer" }, "1, 2,3", [1, 2, 3]],
    [{ type: "array", items: "string" }, '["a,b","c"]', ["a,b", "c"]],
    [{ type: "geopoint" }, "48.85, 2.35", { lat: 48.85, lon: 2.35 }],
    [{ type: "geopoint" }, '{"lat": 1, "lon": 2}', { lat: 1, lon: 2 }],
    [{ type: "relationship", schema: "user", many: true }, "ann,bob", ["ann", "bob"]],
    [{ type: "relationship", schema: "user", many: false }, "ann", "ann"],
    [{ type: "integer" }, "", undefined],
  ];
  test.each(cases)("%j %p", (def, cell, want) => expect(csvValue(def as never, cell)).toEqual(want));

  const bad: [object, string, string][] = [
    [{ type: "integer" }, "4.5", '"4.5" is not an integer'],
    [{ type: "integer" }, "99999999999999999999", "out of the integer range"],
    [{ type: "float" }, "abc", '"abc" is not a number'],
    [{ type: "boolean" }, "maybe", "is not a boolean"],
    [{ type: "geopoint" }, "north", "is not a geopoint"],
    [{ type: "array", items: "integer" }, "1,x", '"x" is not an integer'],
  ];
  test.each(bad)("%j %p refused", (def, cell, message) => expect(() => csvValue(def as never, cell)).toThrow(message));

  test("dates: milliseconds or ISO 8601", () => {
    expect(csvDate("1700000000000")).toBe(1700000000000);
    expect(csvDate("2024-01-02T03:04:05.006Z")).toBe(Date.UTC(2024, 0, 2, 3, 4, 5, 6));
    expect(() => csvDate("yesterday")).toThrow("neither UTC milliseconds nor an ISO 8601 date");
  });

  test("a new column's type from its sample", () => {
    expect(inferCsvColumn(["1", "", "22"])).toEqual({ type: "integer" });
    expect(inferCsvColumn(["1", "2.5"])).toEqual({ type: "float" });
    expect(inferCsvColumn(["TRUE", "false"])).toEqual({ type: "boolean" });
    expect(inferCsvColumn(["1", "x"])).toEqual({ type: "string" });
    expect(inferCsvColumn(["", ""])).toEqual({ type: "string" });
  });
});

describe("CSV records against a schema", () => {
  const todo = compileSchema(validateDefinition({ name: "todo", fields: { title: { type: "string" }, n: { type: "integer" } } }));

  test("header columns: key, dates, owner, known fields, new fields typed from the sample", () => {
    const { columns, additions } = csvColumns(["todo_id", "title", "n", "createddate", "sm_owner", "extra"], "todo", todo, [
      { line: 2, cells: ["k", "t", "1", "", "", "2.5"] },
    ]);
    expect(columns.defs).toEqual(["key", { type: "string" }, { type: "integer" }, "date", "owner", { type: "float" }]);
    expect(additions).toEqual({ extra: { type: "float" } });
    expect(() => csvColumns(["Title"], "todo", todo, [])).toThrow('column "Title" is not a valid field name');
    expect(() => csvColumns(["n", "n"], "todo", todo, [])).toThrow('column "n" appears twice');
  });

  test("a record becomes a body, or the reason it cannot", () => {
    const { columns } = csvColumns(["todo_id", "title", "n", "createddate"], "todo", todo, []);
    expect(csvRecord({ line: 2, cells: ["k1", "hello", "3", "2024-01-01T00:00:00Z"] }, columns)).toEqual({
      line: 2,
      body: { todo_id: "k1", title: "hello", n: 3, createddate: Date.UTC(2024, 0, 1) },
    });
    expect(csvRecord({ line: 3, cells: ["", "", "", ""] }, columns)).toEqual({ line: 3, body: {} });
    expect(csvRecord({ line: 4, cells: ["k", "x", "three", ""] }, columns)).toEqual({ line: 4, error: 'n: "three" is not an integer' });
    expect(csvRecord({ line: 5, cells: ["k"] }, columns)).toEqual({ line: 5, error: "1 cells where the header has 4" });
  });
});

describe("JSON Lines records", () => {
  test("objects pass as they are; blank lines are skipped; anything else is a reason", () => {
    expect(jsonlRecord(1, '{"a":1,"loc":{"lat":1,"lon":2}}')).toEqual({ line: 1, body: { a: 1, loc: { lat: 1, lon: 2 } } });
    expect(jsonlRecord(2, "   ")).toBeNull();
    expect(jsonlRecord(3, "[1]")).toEqual({ line: 3, error: "not a JSON object" });
    expect((jsonlRecord(4, "{oops") as { error: string }).error).toStartWith("not valid JSON");
  });
});

describe("import format detection", () => {
  test("directories by their files, files by extension", () => {
    expect(detectFormat("d", true, ["manifest.json", "todo.jsonl"])).toBe("jsonl");
    expect(detectFormat("d", true, ["_User.json", "Post.json"])).toBe("parse");
    expect(detectFormat("d", true, ["todo.csv"])).toBe("csv");
    expect(detectFormat("x.csv", false, [])).toBe("csv");
    expect(detectFormat("x.ndjson", false, [])).toBe("jsonl");
    expect(detectFormat("GameScore.json", false, [])).toBe("parse");
    expect(() => detectFormat("x.txt", false, [])).toThrow("--format");
  });
});

describe("Parse names", () => {
  test("classes and fields as schema and field names", () => {
    expect(schemaNameOf("_User")).toBe("user");
    expect(schemaNameOf("_Role")).toBe("aclrole");
    expect(schemaNameOf("GameScore")).toBe("gamescore");
    expect(burrowName("playerName")).toBe("playername");
    expect(burrowName("my-field.x")).toBe("my_field_x");
    expect(burrowName("2fast")).toBe("c_2fast");
    expect(burrowName("constructor")).toBe("constructor_x");
    expect(burrowName("A".repeat(80))).toHaveLength(64);
    expect(classOfFile("_Join:likes:Post.json")).toBe("_Join:likes:Post");
    expect(joinOf("_Join:likes:Post")).toEqual({ field: "likes", owner: "Post" });
    expect(joinOf("Post")).toBeNull();
  });

  test("documents: {results} or an array", () => {
    expect(documentRows({ results: [{ a: 1 }] })).toEqual([{ a: 1 }]);
    expect(documentRows([{ a: 1 }])).toEqual([{ a: 1 }]);
    expect(documentRows({ a: 1 })).toBeNull();
  });
});

describe("Parse values", () => {
  const lookups: ParseLookups = { keyOf: (c, id) => (c === "_User" ? (({ u1: "ann" } as Record<string, string>)[id] ?? id) : id) };
  const cases: [string, unknown, unknown][] = [
    ["Date", { __type: "Date", iso: "2024-01-02T00:00:00.000Z" }, { value: Date.UTC(2024, 0, 2), def: { type: "integer" } }],
    ["mongo $date", { $date: "2024-01-02T00:00:00.000Z" }, { value: Date.UTC(2024, 0, 2), def: { type: "integer" } }],
    ["mongo $date $numberLong", { $date: { $numberLong: "1700000000000" } }, { value: 1700000000000, def: { type: "integer" } }],
    [
      "Pointer to a user: its username",
      { __type: "Pointer", className: "_User", objectId: "u1" },
      { value: "ann", def: { type: "relationship", schema: "user", many: false } },
    ],
    ["GeoPoint", { __type: "GeoPoint", latitude: 40.5, longitude: -3.7 }, { value: { lat: 40.5, lon: -3.7 }, def: { type: "geopoint" } }],
    [
      "File",
      { __type: "File", name: "f.png", url: "https://files.example/f.png" },
      { value: "https://files.example/f.png", def: { type: "binary" } },
    ],
    [
      "array of pointers",
      [
        { __type: "Pointer", className: "Post", objectId: "p1" },
        { __type: "Pointer", className: "Post", objectId: "p2" },
      ],
      { value: ["p1", "p2"], def: { type: "relationship", schema: "post", many: true } },
    ],
    ["array of numbers", [1, 2.5], { value: [1, 2.5] }],
    ["mixed array: JSON text", [1, "a"], { value: '[1,"a"]', def: { type: "string" } }],
    ["object: JSON text", { a: { b: 1 } }, { value: '{"a":{"b":1}}', def: { type: "string" } }],
    ["$numberInt", { $numberInt: "7" }, { value: 7 }],
    ["string", "x", { value: "x" }],
    ["null", null, null],
  ];
  test.each(cases)("%s", (_name, raw, want) => expect(mapValue(raw, lookups)).toEqual(want as never));

  test("mongo GeoPoints are [lon, lat] and files their names, known from _SCHEMA", () => {
    expect(mapValue([-3.7, 40.5], lookups, "geo_point")).toEqual({ value: { lat: 40.5, lon: -3.7 }, def: { type: "geopoint" } });
    expect(mapValue("tfss-photo.png", lookups, "file")).toEqual({ value: "tfss-photo.png", def: { type: "binary" } });
  });

  test("dates of createdAt strings and Date objects", () => {
    expect(dateMs("2024-01-02T00:00:00.000Z")).toBe(Date.UTC(2024, 0, 2));
    expect(dateMs("not a date")).toBeUndefined();
  });
});

describe("Parse objects", () => {
  const keys: Record<string, Record<string, string>> = { _User: { u1: "ann", u2: "bob" } };
  const lookups = (extra: Partial<ParseLookups> = {}): ParseLookups => ({ keyOf: (c, id) => keys[c]?.[id] ?? id, ...extra });

  test("REST shape: objectId, ISO dates, pointers, relation members from _Join, ACL left out", () => {
    const m = mapParseObject(
      "Post",
      {
        objectId: "p1",
        createdAt: "2024-01-01T00:00:00.000Z",
        updatedAt: "2024-01-02T00:00:00.000Z",
        title: "Hello",
        author: { __type: "Pointer", className: "_User", objectId: "u1" },
        likes: { __type: "Relation", className: "_User" },
        ACL: { "*": { read: true } },
      },
      lookups({ joins: new Map([["likes", new Map([["p1", ["u1", "u2", "u1"]]])]]) }),
      "post_id",
    );
    expect(m.body).toEqual({
      post_id: "p1",
      createddate: Date.UTC(2024, 0, 1),
      lastmoddate: Date.UTC(2024, 0, 2),
      title: "Hello",
      author: "ann",
      likes: ["ann", "bob"],
    });
    expect(m.declared.get("author")).toEqual({ type: "relationship", schema: "user", many: false });
    expect(m.declared.get("likes")).toEqual({ type: "relationship", schema: "user", many: true });
    expect(m.dropped).toEqual(["ACL"]);
    expect(m.relationTargets).toEqual(new Map([["likes", "_User"]]));
  });

  test("mongoexport shape: _id, $date, _p_ pointers, _rperm/_wperm/_acl, relations from _SCHEMA", () => {
    const m = mapParseObject(
      "Post",
      {
        _id: "p1",
        _created_at: { $date: "2024-01-01T00:00:00.000Z" },
        _updated_at: { $date: "2024-01-02T00:00:00.000Z" },
        _p_author: "_User$u2",
        where: [2.35, 48.85],
        _rperm: ["*"],
        _wperm: [],
        _acl: {},
        score: { $numberDouble: "1.5" },
      },
      lookups({
        types: new Map([
          ["where", "geo_point"],
          ["likes", "relation<_User>"],
          ["author", "*_User"],
        ]),
        joins: new Map([["likes", new Map([["p1", ["u1"]]])]]),
      }),
      "post_id",
    );
    expect(m.body).toEqual({
      post_id: "p1",
      createddate: Date.UTC(2024, 0, 1),
      lastmoddate: Date.UTC(2024, 0, 2),
      author: "bob",
      where: { lat: 48.85, lon: 2.35 },
      score: 1.5,
      likes: ["ann"],
    });
    expect(m.dropped.sort()).toEqual(["_acl", "_rperm", "_wperm"]);
  });

  test("_User: keyed by username, bcrypt hash kept as the password, auth data dropped, camelCase fields lowercased", () => {
    const rest = mapParseObject(
      "_User",
      {
        objectId: "u1",
        username: "ann",
        email: "ann@example.com",
        emailVerified: true,
        authData: { x: 1 },
        createdAt: "2024-01-01T00:00:00.000Z",
      },
      lookups(),
      "username",
    );
    expect(rest.body).toEqual({ username: "ann", email: "ann@example.com", emailverified: true, createddate: Date.UTC(2024, 0, 1) });
    expect(rest.dropped).toEqual(["authData"]);
    expect(rest.password).toBe("none");
    const hash = `$2a$10$${"a".repeat(53)}`;
    const mongo = mapParseObject(
      "_User",
      { _id: "u2", username: "bob", _hashed_password: hash, _auth_data_facebook: {}, _email_verify_token: "t" },
      lookups(),
      "username",
    );
    expect(mongo.body).toEqual({ username: "bob", password: { $hash: hash } });
    expect(mongo.password).toBe("kept");
    expect(mongo.dropped.sort()).toEqual(["_auth_data_facebook", "_email_verify_token"]);
    const odd = mapParseObject("_User", { _id: "u2", username: "bob", _hashed_password: "md5:abc" }, lookups(), "username");
    expect([odd.body, odd.password, odd.dropped]).toEqual([{ username: "bob" }, "none", ["_hashed_password"]]);
  });

  test("fields that would take Burrow's automatic names are renamed; no objectId is an error", () => {
    expect(mapParseObject("Post", { objectId: "p", createddate: 5, post_id: "x" }, lookups(), "post_id").body).toEqual({
      post_id: "p",
      createddate_2: 5,
      post_id_2: "x",
    });
    expect(() => mapParseObject("Post", { title: "x" }, lookups(), "post_id")).toThrow("no objectId");
  });

  test("a reference to an object the import lacks is left out and counted; a class outside the import is kept, except users", () => {
    const ids: Record<string, Set<string>> = { _User: new Set(["u1"]), Team: new Set(["t1"]) };
    const l = lookups({
      exists: (c, id) => ids[c]?.has(id),
      joins: new Map([["members", new Map([["g1", ["u1", "gone1", "gone2"]]])]]),
      relationTargets: new Map([["members", "_User"]]),
    });
    const m = mapParseObject(
      "Group",
      {
        objectId: "g1",
        owner: { __type: "Pointer", className: "_User", objectId: "gone0" },
        team: { __type: "Pointer", className: "Team", objectId: "t1" },
        old: { __type: "Pointer", className: "Team", objectId: "t404" },
        venue: { __type: "Pointer", className: "Venue", objectId: "v1" },
        friends: [
          { __type: "Pointer", className: "_User", objectId: "u1" },
          { __type: "Pointer", className: "_User", objectId: "gone3" },
        ],
        _p_editor: "_Role$r1",
      },
      l,
      "group_id",
    );
    expect(m.body).toEqual({ group_id: "g1", team: "t1", venue: "v1", friends: ["ann"], members: ["ann"] });
    expect(Object.fromEntries(m.dangling)).toEqual({
      owner: { target: "_User", count: 1, classMissing: false },
      old: { target: "Team", count: 1, classMissing: false },
      friends: { target: "_User", count: 1, classMissing: false },
      members: { target: "_User", count: 2, classMissing: false },
      editor: { target: "_Role", count: 1, classMissing: true },
    });
  });
});

describe("Parse field names", () => {
  test("fields that lowercase alike get distinct names, the lowercase one first, whatever order the objects had", () => {
    const a = planFieldNames("GameScore", "gamescore", ["Score", "score", "playerName", "SCORE", "score_2"], "gamescore_id");
    const b = planFieldNames("GameScore", "gamescore", ["score_2", "SCORE", "playerName", "score", "Score"], "gamescore_id");
    expect(Object.fromEntries(a.names)).toEqual({
      score: "score",
      SCORE: "score_3",
      Score: "score_4",
      playerName: "playername",
      score_2: "score_2",
    });
    expect(b.names).toEqual(a.names);
    expect(a.collisions).toEqual([
      "fields GameScore.score, GameScore.SCORE, GameScore.Score lowercase alike: imported as gamescore.score, gamescore.score_3, gamescore.score_4",
    ]);
    expect(a.renames).toEqual([
      "GameScore.SCORE -> gamescore.score_3",
      "GameScore.Score -> gamescore.score_4",
      "GameScore.playerName -> gamescore.playername",
    ]);
  });

  test("reserved names move aside; the key fields of users and roles are not fields", () => {
    const p = planFieldNames("_User", "user", ["username", "createdDate", "email"], "username");
    expect(Object.fromEntries(p.names)).toEqual({ createdDate: "createddate_2", email: "email" });
    expect(p.collisions).toEqual([]);
    expect(planFieldNames("_Role", "aclrole", ["name", "users"], "aclrole_id").names).toEqual(new Map([["users", "users"]]));
  });

  test("mapParseObject names fields by the plan", () => {
    const plan = planFieldNames("G", "g", ["score", "Score"], "g_id");
    const m = mapParseObject(
      "G",
      { objectId: "x", Score: 2, score: 1 },
      { keyOf: (_c, id) => id, fieldName: (f) => plan.names.get(f)! },
      "g_id",
    );
    expect(m.body).toEqual({ g_id: "x", score: 1, score_2: 2 });
  });

  test("which members are fields: not keys, dates, ACLs, auth data or className; _p_ pointers by their field", () => {
    expect(
      ["objectId", "createdAt", "ACL", "className", "authData", "_rperm", "_p_owner", "_hashed_password", "title", "password"].map((m) =>
        parseFieldOf("Post", m),
      ),
    ).toEqual([null, null, null, null, null, null, "owner", null, "title", null]);
    expect(parseFieldOf("_User", "username")).toBeNull();
  });
});
