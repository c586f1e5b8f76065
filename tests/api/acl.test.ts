// Access control: every permission level against anonymous callers, unrelated users, qualifying users and
// the app (private key), with exactly the answers of docs/api/permissions.md#denials; lists filtered in SQL; sm_owner;
// relations, expand, upsert and cascade respecting the permissions of every schema they touch.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp, type TestResponse } from "../helpers/app.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
const creds: Record<string, { access_token: string; mac_key: string }> = {};
const levels: Record<string, unknown> = {
  open: "open",
  none: "none",
  private: "private_key",
  logged: "logged_in",
  owner: "owner",
  role: { role: "staff" },
  rel: { relationship: "collaborators" },
  ownerrel: { ownerRelationship: "friends" },
};
type Who = "anonymous" | "unrelated" | "qualifying" | "app";
const qualifying: Record<string, string> = {
  open: "ann",
  none: "ann",
  private: "ann",
  logged: "ann",
  owner: "ann",
  role: "cid",
  rel: "dee",
  ownerrel: "eve",
};

function as(who: Who, level: string, method: string, path: string, body?: unknown): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  if (who === "app") headers.authorization = oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`);
  else if (who !== "anonymous") headers.authorization = macAuth(creds[who === "unrelated" ? "bob" : qualifying[level]!]!, method, path);
  return t.request(method, path, { headers, body, key: who === "app" ? null : undefined });
}
const app = (method: string, path: string, body?: unknown) => as("app", "open", method, path, body);

beforeAll(async () => {
  t = await makeTestApp();
  const user = (await t.admin("GET", "/schemas/user")).body;
  await t.admin("PUT", "/schemas/user", {
    ...user,
    fields: { ...user.fields, friends: { type: "relationship", schema: "user", many: true } },
  });
  for (const [name, permission] of Object.entries(levels)) {
    const r = await t.admin("PUT", `/schemas/${name}`, {
      fields: { text: { type: "string" }, collaborators: { type: "relationship", schema: "user", many: true } },
      permissions: { create: permission, read: permission, update: permission, delete: permission },
    });
    expect(r.status).toBe(201);
  }
  await t.request("POST", "/user", {
    body: ["ann", "bob", "cid", "dee", "eve"].map((u) => ({ username: u, password: `${u}-password`, friends: u === "ann" ? ["eve"] : [] })),
  });
  expect((await app("POST", "/aclrole", { aclrole_id: "staff", users: ["cid"] })).status).toBe(201);
  for (const u of ["ann", "bob", "cid", "dee", "eve"])
    creds[u] = (await t.request("POST", "/user/accessToken", { body: { username: u, password: `${u}-password` } })).body;
});
afterAll(() => t.close());

/** A fresh object of ann's in `level`, with dee as collaborator, created by the app. */
async function annsObject(level: string): Promise<string> {
  const r = await app("POST", `/${level === "none" ? "open" : level}`, { text: "ann's", sm_owner: "user/ann", collaborators: ["dee"] });
  expect(r.status).toBe(201);
  if (level === "none") {
    // Nothing can write to a "none" schema through the API: put a row in directly.
    await t.burrow.envDbs.development.execute({
      sql: `INSERT INTO o_none (none_id, text, collaborators, createddate, lastmoddate, sm_owner) VALUES (?, 'x', '["dee"]', 1, 1, 'user/ann')`,
      args: [r.body.open_id],
    });
  }
  return r.body[`${level === "none" ? "open" : level}_id`];
}

function expectDenied(r: TestResponse, status: number, error: string, what: string) {
  expect([what, r.status, r.body?.error]).toEqual([what, status, error]);
}

describe("the denial matrix", () => {
  const cases: [string, Who, "ok" | [number, string] | "404"][] = [
    ["open", "anonymous", "ok"],
    ["open", "unrelated", "ok"],
    ["open", "qualifying", "ok"],
    ["open", "app", "ok"],
    ["private", "anonymous", [401, "Insufficient authorization"]],
    ["private", "unrelated", [401, "Insufficient authorization"]],
    ["private", "qualifying", [401, "Insufficient authorization"]],
    ["private", "app", "ok"],
    ["logged", "anonymous", [401, "Insufficient authorization"]],
    ["logged", "unrelated", "ok"],
    ["logged", "qualifying", "ok"],
    ["logged", "app", "ok"],
    ["owner", "anonymous", [401, "Insufficient authorization"]],
    ["owner", "unrelated", "404"],
    ["owner", "qualifying", "ok"],
    ["owner", "app", "ok"],
    ["role", "anonymous", [401, "Insufficient authorization"]],
    ["role", "unrelated", [401, "Insufficient authorization"]],
    ["role", "qualifying", "ok"],
    ["role", "app", "ok"],
    ["rel", "anonymous", [401, "Insufficient authorization"]],
    ["rel", "unrelated", "404"],
    ["rel", "qualifying", "ok"],
    ["rel", "app", "ok"],
    ["ownerrel", "anonymous", [401, "Insufficient authorization"]],
    ["ownerrel", "unrelated", "404"],
    ["ownerrel", "qualifying", "ok"],
    ["ownerrel", "app", "ok"],
    ["none", "anonymous", [405, "Invalid HTTP method"]],
    ["none", "unrelated", [405, "Invalid HTTP method"]],
    ["none", "qualifying", [405, "Invalid HTTP method"]],
    ["none", "app", [405, "Invalid HTTP method"]],
  ];
  for (const [level, who, expected] of cases) {
    test(`${level} / ${who}: read, update, delete`, async () => {
      const id = await annsObject(level);
      const read = await as(who, level, "GET", `/${level}/${id}`);
      const update = await as(who, level, "PUT", `/${level}/${id}`, { text: "changed" });
      const del = await as(who, level, "DELETE", `/${level}/${id}`);
      if (expected === "ok") {
        expect([level, who, read.status, update.status, del.status]).toEqual([level, who, 200, 200, 200]);
      } else if (expected === "404") {
        expectDenied(read, 404, "object instance does not exist", "read");
        expectDenied(update, 404, "object instance does not exist", "update");
        expectDenied(del, 404, "This object does not exist", "delete");
        expect((await app("GET", `/${level}/${id}`)).body.text).toBe("ann's");
      } else {
        for (const [what, r] of [
          ["read", read],
          ["update", update],
          ["delete", del],
        ] as const)
          expectDenied(r, expected[0], expected[1], what);
      }
    });
  }

  test("create: owner and relationship schemas need a login only; the rest as for reads", async () => {
    const expectations: [string, Who, number][] = [
      ["owner", "anonymous", 401],
      ["owner", "unrelated", 201],
      ["rel", "unrelated", 201],
      ["ownerrel", "unrelated", 201],
      ["logged", "anonymous", 401],
      ["private", "unrelated", 401],
      ["private", "app", 201],
      ["role", "unrelated", 401],
      ["role", "qualifying", 201],
      ["none", "app", 405],
    ];
    for (const [level, who, status] of expectations)
      expect([level, who, (await as(who, level, "POST", `/${level}`, { text: "new" })).status]).toEqual([level, who, status]);
  });
});

describe("lists, counts and sm_owner", () => {
  test("lists are filtered inside the query: counts and Content-Range cover only what the caller may see", async () => {
    for (let i = 0; i < 3; i++) await app("POST", "/owner", { text: `list-${i}`, sm_owner: "user/bob" });
    for (let i = 0; i < 2; i++) await app("POST", "/owner", { text: `list-x${i}`, sm_owner: "user/cid" });
    const mine = await as("unrelated", "owner", "GET", "/owner?text[in]=list-0,list-1,list-2,list-x0,list-x1");
    expect(mine.body.map((o: any) => o.text).sort()).toEqual(["list-0", "list-1", "list-2"]);
    const path = "/owner?text[in]=list-0,list-1,list-2,list-x0,list-x1";
    const counted = await t.request("GET", path, { headers: { range: "objects=0-0", authorization: macAuth(creds.bob!, "GET", path) } });
    expect(counted.headers.get("content-range")).toBe("objects 0-0/3");
    expect((await as("app", "owner", "GET", path)).body).toHaveLength(5);
  });

  test("sm_owner comes from the signed-in user and OAuth 2.0 callers cannot change it; the app can", async () => {
    const c = await as("qualifying", "owner", "POST", "/owner", { text: "owned", sm_owner: "user/bob" });
    expect(c.body.sm_owner).toBe("user/ann");
    const u = await as("qualifying", "owner", "PUT", `/owner/${c.body.owner_id}`, { sm_owner: "user/bob" });
    expect(u.body.sm_owner).toBe("user/ann");
    const anon = await t.request("POST", "/open", { body: { text: "anon", sm_owner: "user/ann" } });
    expect(anon.body).not.toHaveProperty("sm_owner");
    const moved = await app("PUT", `/owner/${c.body.owner_id}`, { sm_owner: "user/bob" });
    expect(moved.body.sm_owner).toBe("user/bob");
    expect((await app("PUT", `/owner/${c.body.owner_id}`, { sm_owner: "not an owner" })).status).toBe(400);
  });
});

describe("relations, expand, upsert and cascade respect every schema's permissions", () => {
  test("expand shows only related objects the caller may read; the rest stay keys", async () => {
    await t.admin("PUT", "/schemas/board", {
      fields: { items: { type: "relationship", schema: "owner", many: true }, secret: { type: "relationship", schema: "private" } },
    });
    const a = await annsObject("owner");
    const p = await annsObject("private");
    await t.request("POST", "/board", { body: { board_id: "b1", items: [a], secret: p } });
    const asAnn = (await as("qualifying", "owner", "GET", "/board/b1")).body;
    expect(asAnn.items).toEqual([a]);
    const expandedAnn = (
      await t.request("GET", "/board?board_id=b1", {
        headers: { "x-service-expand": "1", authorization: macAuth(creds.ann!, "GET", "/board?board_id=b1") },
      })
    ).body[0];
    expect(expandedAnn.items[0].text).toBe("ann's");
    expect(expandedAnn.secret).toBe(p);
    const expandedBob = (
      await t.request("GET", "/board?board_id=b1", {
        headers: { "x-service-expand": "1", authorization: macAuth(creds.bob!, "GET", "/board?board_id=b1") },
      })
    ).body[0];
    expect(expandedBob.items).toEqual([a]);
    const expandedApp = (
      await t.request("GET", "/board?board_id=b1", {
        key: null,
        headers: {
          "x-service-expand": "1",
          authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, "GET", "http://localhost/board?board_id=b1"),
        },
      })
    ).body[0];
    expect(expandedApp.secret.text).toBe("ann's");
  });

  test("expand on a read by key checks every expanded schema as lists do", async () => {
    const a = await annsObject("owner");
    const p = await annsObject("private");
    await t.request("POST", "/board", { body: { board_id: "k1", items: [a], secret: p } });
    const read = (who: string) =>
      t.request("GET", "/board/k1", { headers: { "x-service-expand": "1", authorization: macAuth(creds[who]!, "GET", "/board/k1") } });
    const ann = (await read("ann")).body;
    expect([ann.items[0].text, ann.secret]).toEqual(["ann's", p]);
    expect((await read("bob")).body.items).toEqual([a]);
    const asApp = await t.request("GET", "/board/k1", {
      key: null,
      headers: { "x-service-expand": "1", authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, "GET", "http://localhost/board/k1") },
    });
    expect(asApp.body.secret.text).toBe("ann's");
    // An object outside the caller's read scope is not found, with or without a shape.
    const hidden = (who: string, headers: Record<string, string>) =>
      t.request("GET", `/owner/${a}`, { headers: { ...headers, authorization: macAuth(creds[who]!, "GET", `/owner/${a}`) } });
    expect((await hidden("bob", {})).status).toBe(404);
    expect((await hidden("bob", { "x-service-select": "text" })).status).toBe(404);
    expect((await hidden("ann", { "x-service-select": "text" })).body).toEqual({ owner_id: a, text: "ann's" });
  });

  test("sub-resources update the parent under its update permission; cascade deletes only what the caller may delete", async () => {
    const a = await annsObject("owner");
    expect((await as("unrelated", "owner", "PUT", `/owner/${a}/collaborators`, ["bob"])).status).toBe(404);
    expect((await as("anonymous", "owner", "PUT", `/owner/${a}/collaborators`, ["bob"])).status).toBe(401);
    expect((await as("qualifying", "owner", "PUT", `/owner/${a}/collaborators`, ["bob"])).body.collaborators).toEqual(["dee", "bob"]);
    await t.request("POST", "/board", { body: { board_id: "b2", items: [a] } });
    const pull = await t.request("DELETE", `/board/b2/items/${a}`, {
      headers: { "x-service-cascadedelete": "true", authorization: macAuth(creds.bob!, "DELETE", `/board/b2/items/${a}`) },
    });
    expect(pull.status).toBe(200);
    expect((await t.request("GET", "/board/b2")).body.items).toEqual([]);
    expect((await app("GET", `/owner/${a}`)).status).toBe(200);
    const created = await as("anonymous", "open", "POST", "/board/b2/items", [{ text: "anon child" }]);
    expect(created.body).toEqual({ succeeded: [], failed: ["0"] });
  });

  test("upsert: existing objects outside the caller's update scope are refused and nothing is written", async () => {
    const a = await annsObject("owner");
    const before = (await app("GET", "/board")).body.length;
    const path = "/board";
    const r = await t.request("POST", path, {
      headers: { "x-service-relations": "items=owner", authorization: macAuth(creds.bob!, "POST", path) },
      body: { board_id: "b3", items: [{ owner_id: a, text: "hijacked" }] },
    });
    expect(r.status).toBe(404);
    expect((await app("GET", `/owner/${a}`)).body.text).toBe("ann's");
    expect((await app("GET", "/board")).body.length).toBe(before);
    const own = await t.request("POST", path, {
      headers: { "x-service-relations": "items=owner", authorization: macAuth(creds.ann!, "POST", path) },
      body: { board_id: "b4", items: [{ owner_id: a, text: "updated by ann" }, { text: "new of ann" }] },
    });
    expect(own.status).toBe(201);
    expect(own.body.items.map((i: any) => i.sm_owner)).toEqual(["user/ann", "user/ann"]);
  });
});
