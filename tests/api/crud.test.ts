// Datastore CRUD (docs/api/datastore.md#create-read-update-delete).

import { macAuth } from "../helpers/sign.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  const r = await t.admin("PUT", "/schemas/todo", {
    fields: {
      title: { type: "string" },
      priority: { type: "integer" },
      score: { type: "float" },
      done: { type: "boolean" },
      tags: { type: "array", items: "string" },
      location: { type: "geopoint" },
      assignee: { type: "relationship", schema: "user" },
      subtasks: { type: "relationship", schema: "todo", many: true },
    },
  });
  expect(r.status).toBe(201);
});
afterAll(() => t.close());

describe("create", () => {
  test("201 with a generated 32-hex key, dates in UTC ms; missing (NULL) fields are omitted", async () => {
    const before = Date.now();
    const r = await t.request("POST", "/todo", { body: { title: "write tests", priority: 2 } });
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.body.todo_id).toMatch(/^[0-9a-f]{32}$/);
    expect(r.body.createddate).toBeGreaterThanOrEqual(before);
    expect(r.body.lastmoddate).toBe(r.body.createddate);
    expect(r.body).toEqual({
      todo_id: r.body.todo_id,
      title: "write tests",
      priority: 2,
      createddate: r.body.createddate,
      lastmoddate: r.body.lastmoddate,
    });
    const got = await t.request("GET", `/todo/${r.body.todo_id}`);
    expect(got.body).toEqual(r.body);
  });

  test("a client-chosen key is kept; a duplicate is 409", async () => {
    const a = await t.request("POST", "/todo", { body: { todo_id: "mine", title: "a" } });
    expect(a.status).toBe(201);
    expect(a.body.todo_id).toBe("mine");
    const b = await t.request("POST", "/todo", { body: { todo_id: "mine", title: "b" } });
    expect(b.status).toBe(409);
    expect(b.body).toEqual({ error: 'Duplicate key for schema todo: "mine"' });
    expect((await t.request("GET", "/todo/mine")).body.title).toBe("a");
  });

  test("every type round-trips", async () => {
    const body = {
      title: "ü 😀",
      priority: -5,
      score: 2.5,
      done: true,
      tags: ["x", "y", "x"],
      location: { lat: 52.5, lon: -179.9 },
      assignee: "bob",
      subtasks: ["s1", "s2", "s1"],
    };
    const r = await t.request("POST", "/todo", { body });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ ...body, subtasks: ["s1", "s2"] });
  });

  test("client dates are ignored", async () => {
    const r = await t.request("POST", "/todo", { body: { title: "d", createddate: 5, lastmoddate: 6 } });
    expect(r.body.createddate).toBeGreaterThan(1_600_000_000_000);
  });

  test("wrong types are 400 with the original wording", async () => {
    const cases: [string, unknown][] = [
      ["priority", 18.71],
      ["priority", "3"],
      ["score", "x"],
      ["done", 1],
      ["tags", [1, 3, 5, 7]],
      ["tags", ["a", 1]],
      ["title", 5],
      ["title", { a: 1 }],
      ["assignee", ["a"]],
      ["subtasks", "a"],
      ["location", { lat: 91, lon: 0 }],
      ["location", { lat: 0, lon: 180 }],
      ["location", [1, 2]],
      ["todo_id", 12],
    ];
    for (const [field, value] of cases) {
      const r = await t.request("POST", "/todo", { body: { [field]: value } });
      expect([field, value, r.status]).toEqual([field, value, 400]);
      expect(r.body.error).toStartWith(`${field} has an incompatible type, please check your schema`);
    }
  });

  test("the string NULL and JSON null both mean NULL", async () => {
    const r = await t.request("POST", "/todo", { body: { title: "NULL", priority: null } });
    expect(r.body).not.toHaveProperty("title");
    expect(r.body).not.toHaveProperty("priority");
  });
});

describe("batch create", () => {
  test("200 {succeeded, failed} in posted order; failures are keys or input indexes", async () => {
    await t.request("POST", "/todo", { body: { todo_id: "taken" } });
    const r = await t.request("POST", "/todo", {
      body: [
        { title: "one" },
        { todo_id: "taken" },
        { todo_id: "b2", title: "two" },
        { priority: "bad" },
        "not an object",
        { todo_id: "b2" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.succeeded).toHaveLength(2);
    expect(r.body.succeeded[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(r.body.succeeded[1]).toBe("b2");
    expect(r.body.failed).toEqual(["taken", "3", "4", "b2"]);
    expect((await t.request("GET", `/todo/${r.body.succeeded[0]}`)).body.title).toBe("one");
  });

  test("an empty array creates nothing", async () => {
    const r = await t.request("POST", "/todo", { body: [] });
    expect(r.body).toEqual({ succeeded: [], failed: [] });
  });
});

describe("read", () => {
  test("GET all answers an array; GET of a missing key is 404 object instance does not exist", async () => {
    const all = await t.request("GET", "/todo");
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.length).toBeGreaterThan(3);
    const missing = await t.request("GET", "/todo/nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "object instance does not exist" });
  });

  test("keys with URL-special characters", async () => {
    const id = "a b/c?d#é";
    expect((await t.request("POST", "/todo", { body: { todo_id: id, title: "odd" } })).status).toBe(201);
    const r = await t.request("GET", `/todo/${encodeURIComponent(id)}`);
    expect(r.body.todo_id).toBe(id);
  });

  test("schema names in paths are case-insensitive", async () => {
    expect((await t.request("GET", "/TODO/mine")).body.todo_id).toBe("mine");
  });

  test("an unknown schema is 404", async () => {
    expect((await t.request("GET", "/nothing_here")).status).toBe(404);
    expect((await t.request("GET", "/nothing_here/x")).status).toBe(404);
  });
});

describe("update", () => {
  test("partial PUT returns the full object and advances lastmoddate", async () => {
    const c = await t.request("POST", "/todo", { body: { title: "old", priority: 1, tags: ["a"] } });
    const u = await t.request("PUT", `/todo/${c.body.todo_id}`, { body: { title: "new" } });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ todo_id: c.body.todo_id, title: "new", priority: 1, tags: ["a"], createddate: c.body.createddate });
    expect(u.body.lastmoddate).toBeGreaterThan(c.body.lastmoddate);
  });

  test("JSON null and the string NULL clear fields", async () => {
    const c = await t.request("POST", "/todo", { body: { title: "x", priority: 3 } });
    const u = await t.request("PUT", `/todo/${c.body.todo_id}`, { body: { title: "NULL", priority: null } });
    expect(u.body).not.toHaveProperty("title");
    expect(u.body).not.toHaveProperty("priority");
  });

  test("changing the primary key is refused; repeating it is fine", async () => {
    const c = await t.request("POST", "/todo", { body: { title: "pk" } });
    const bad = await t.request("PUT", `/todo/${c.body.todo_id}`, { body: { todo_id: "other" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("unable to update primary key");
    const same = await t.request("PUT", `/todo/${c.body.todo_id}`, { body: { todo_id: c.body.todo_id, title: "ok" } });
    expect(same.status).toBe(200);
  });

  test("wrong types on update use the update wording", async () => {
    const r = await t.request("PUT", "/todo/mine", { body: { priority: 1.5 } });
    expect(r.status).toBe(400);
    expect(r.body.error).toStartWith("priority has invalid type, please check your schema");
  });

  test("updating a missing object is 404", async () => {
    const r = await t.request("PUT", "/todo/missing", { body: { title: "x" } });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("object instance does not exist");
  });
});

describe("delete", () => {
  test("DELETE /<schema>/<id> and DELETE /<schema>?<key>=<id> answer 200 {}", async () => {
    const a = await t.request("POST", "/todo", { body: { title: "del1" } });
    const b = await t.request("POST", "/todo", { body: { title: "del2" } });
    const r1 = await t.request("DELETE", `/todo/${a.body.todo_id}`);
    expect(r1.status).toBe(200);
    expect(r1.body).toEqual({});
    const r2 = await t.request("DELETE", `/todo?todo_id=${b.body.todo_id}`);
    expect(r2.status).toBe(200);
    expect(r2.body).toEqual({});
    expect((await t.request("GET", `/todo/${a.body.todo_id}`)).status).toBe(404);
    expect((await t.request("GET", `/todo/${b.body.todo_id}`)).status).toBe(404);
  });

  test("deleting what does not exist is 404 This object does not exist", async () => {
    for (const path of ["/todo/ghost", "/todo?todo_id=ghost"]) {
      const r = await t.request("DELETE", path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: "This object does not exist" });
    }
  });

  test("DELETE /<schema> without the key condition is refused", async () => {
    const r = await t.request("DELETE", "/todo");
    expect(r.status).toBe(400);
  });
});

describe("X-HTTP-Method-Override and HEAD", () => {
  test("GET overridden with DELETE deletes", async () => {
    const c = await t.request("POST", "/todo", { body: { title: "ov" } });
    const r = await t.request("GET", `/todo/${c.body.todo_id}`, { headers: { "x-http-method-override": "DELETE" } });
    expect(r.status).toBe(200);
    expect((await t.request("GET", `/todo/${c.body.todo_id}`)).status).toBe(404);
  });

  test("POST overridden with PUT updates", async () => {
    const c = await t.request("POST", "/todo", { body: { title: "ov2" } });
    const r = await t.request("POST", `/todo/${c.body.todo_id}`, {
      body: { title: "changed" },
      headers: { "x-http-method-override": "put" },
    });
    expect(r.status).toBe(200);
    expect(r.body.title).toBe("changed");
  });

  test("GET overridden with HEAD answers headers only", async () => {
    const r = await t.request("GET", "/todo/mine", { headers: { "x-http-method-override": "HEAD" } });
    expect(r.status).toBe(200);
    expect(r.text).toBe("");
  });

  test("any other override is 400", async () => {
    const cases: [string, string][] = [
      ["GET", "PUT"],
      ["GET", "POST"],
      ["POST", "DELETE"],
      ["POST", "GET"],
      ["PUT", "DELETE"],
      ["DELETE", "GET"],
    ];
    for (const [method, to] of cases) {
      const r = await t.request(method, "/todo/mine", {
        body: method === "GET" || method === "DELETE" ? undefined : {},
        headers: { "x-http-method-override": to },
      });
      expect([method, to, r.status]).toEqual([method, to, 400]);
      expect(r.body.error).toContain("X-HTTP-Method-Override");
    }
    expect((await t.request("GET", "/todo/mine")).status).toBe(200);
  });

  test("HEAD has GET's status and headers and no body", async () => {
    const ok = await t.request("HEAD", "/todo/mine");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(ok.text).toBe("");
    expect((await t.request("HEAD", "/todo/ghost")).status).toBe(404);
  });
});

describe("rendering", () => {
  test("a wide schema (more fields than one json_object call takes) renders every field with its type", async () => {
    const fields: Record<string, unknown> = {};
    const body: Record<string, unknown> = {};
    for (let i = 0; i < 130; i++) {
      const kind = ["string", "integer", "boolean", "array", "float"][i % 5]!;
      fields[`f${i}`] = kind === "array" ? { type: "array", items: "integer" } : { type: kind };
      body[`f${i}`] =
        kind === "string" ? `s${i}` : kind === "integer" ? i : kind === "boolean" ? i % 2 === 0 : kind === "array" ? [i, i + 1] : i + 0.25;
    }
    expect((await t.admin("PUT", "/schemas/wide", { fields })).status).toBe(201);
    const c = await t.request("POST", "/wide", { body });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject(body);
    expect((await t.request("GET", `/wide/${c.body.wide_id}`)).body).toEqual(c.body);
  });

  test("floats keep full precision", async () => {
    const values = [1 / 3, 0.1, 1e300, -2.5e-8, 123456789.12345679, Number.MAX_VALUE, Number.MIN_VALUE];
    for (const score of values) {
      const c = await t.request("POST", "/todo", { body: { score } });
      expect((await t.request("GET", `/todo/${c.body.todo_id}`)).body.score).toBe(score);
    }
  });
});

describe("users", () => {
  test("the user schema keys by username; the password is hashed and never returned", async () => {
    const r = await t.request("POST", "/user", { body: { username: "alice", password: "s3cret-pass", email: "a@example.com" } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ username: "alice", email: "a@example.com", createddate: r.body.createddate, lastmoddate: r.body.lastmoddate });
    expect(JSON.stringify((await t.request("GET", "/user")).body)).not.toContain("password");
    const row = await t.burrow.envDbs.development.execute("SELECT password FROM o_user WHERE username = 'alice'");
    expect(String(row.rows[0]!.password)).toStartWith("$argon2id$");
    expect(await Bun.password.verify("s3cret-pass", String(row.rows[0]!.password))).toBe(true);
  });

  test("a user needs a password; PUT cannot change it", async () => {
    expect((await t.request("POST", "/user", { body: { username: "nopw" } })).status).toBe(400);
    // Even the user itself (the only caller the default user schema lets update it) cannot set a password by PUT.
    const alice = (await t.request("POST", "/user/accessToken", { body: { username: "alice", password: "s3cret-pass" } })).body;
    const r = await t.request("PUT", "/user/alice", {
      body: { password: "other" },
      headers: { authorization: macAuth(alice, "PUT", "/user/alice") },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("resetPassword");
  });
});
