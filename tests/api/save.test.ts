// The save of the original SDKs' model layer: a POST of one object carrying X-Service-Relations (even empty)
// updates an existing key as PUT does and creates a new one; without the header a POST stays a plain create (409
// on an existing key). Also the SDK's loose relationships (keys no object has yet) on every write path.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
type Creds = { access_token: string; mac_key: string };
const creds: Record<string, Creds> = {};
const RELATIONS = { "x-service-relations": "" };
const save = (body: unknown, headers: Record<string, string> = RELATIONS) => t.request("POST", "/game", { body, headers });
const as = (who: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, { body, headers: { ...headers, authorization: macAuth(creds[who]!, method, path) } });
/** As the Java SDK in OAuth 1.0 mode sends it: signed with the private key, no API key header, JSON not signed. */
const app = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.request(method, path, {
    body,
    key: null,
    headers: { ...headers, authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
  });

beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/game", {
    fields: { name: { type: "string" }, counter: { type: "integer" }, players: { type: "relationship", schema: "user", many: true } },
  });
  await t.admin("PUT", "/schemas/secret", {
    fields: { text: { type: "string" } },
    permissions: { create: "logged_in", read: "owner", update: "owner", delete: "owner" },
  });
  for (const u of ["ann", "bob"]) {
    expect((await t.request("POST", "/user", { body: { username: u, password: `${u}-password` } })).status).toBe(201);
    creds[u] = (await t.request("POST", "/user/accessToken", { body: { username: u, password: `${u}-password` } })).body;
  }
});
afterAll(() => t.close());

describe("POST with X-Service-Relations is a save", () => {
  test("a counter saved again and again: each save applies ([inc] adds, a plain value sets), createddate kept", async () => {
    const created = await save({ game_id: "g1", name: "chess", "counter[inc]": 5 });
    expect([created.status, created.body.counter]).toEqual([201, 5]);
    const again = await save({ game_id: "g1", name: "chess", "counter[inc]": 5 });
    expect([again.status, again.body.counter, again.body.createddate]).toEqual([200, 10, created.body.createddate]);
    expect(again.body.lastmoddate).toBeGreaterThan(created.body.lastmoddate);
    const forced = await save({ game_id: "g1", counter: -1 });
    expect([forced.status, forced.body.counter, forced.body.name]).toEqual([200, -1, "chess"]);
    const back = await save({ game_id: "g1", "counter[inc]": 4 });
    expect([back.status, back.body.counter]).toEqual([200, 3]);
    for (let i = 0; i < 5; i++) expect((await save({ game_id: "g1", "counter[inc]": 1 })).body.counter).toBe(4 + i);
  });

  test("with relations named in the header, and signed with the private key as the Java SDK sends it", async () => {
    const r = await app("POST", "/game", { game_id: "g2", name: "go", players: ["ann"] }, { "x-service-relations": "players=user" });
    expect([r.status, r.body.players]).toEqual([201, ["ann"]]);
    const u = await app(
      "POST",
      "/game",
      { game_id: "g2", name: "go", players: ["ann", "bob"], createddate: 1, lastmoddate: 1 },
      { "x-service-relations": "players=user" },
    );
    expect([u.status, u.body.players, u.body.createddate]).toEqual([200, ["ann", "bob"], r.body.createddate]);
  });

  test("without the header a POST stays a plain create: an existing key is 409; arrays stay batch creates", async () => {
    const plain = await save({ game_id: "g1", name: "other" }, {});
    expect([plain.status, plain.body.error]).toEqual([409, 'Duplicate key for schema game: "g1"']);
    const batch = await t.request("POST", "/game", { body: [{ game_id: "g1" }, { game_id: "g3" }], headers: RELATIONS });
    expect([batch.status, batch.body]).toEqual([200, { succeeded: ["g3"], failed: ["g1"] }]);
    // Without a key, a save creates.
    const fresh = await save({ name: "new" });
    expect(fresh.status).toBe(201);
    expect(fresh.body.game_id).toMatch(/^[0-9a-f]{32}$/);
  });

  test("the update permission applies: another user's save changes nothing and learns nothing a create would not", async () => {
    const mine = await as("ann", "POST", "/secret", { secret_id: "s1", text: "ann's" }, RELATIONS);
    expect(mine.status).toBe(201);
    expect((await as("ann", "POST", "/secret", { secret_id: "s1", text: "ann's, edited" }, RELATIONS)).status).toBe(200);
    const theirs = await as("bob", "POST", "/secret", { secret_id: "s1", text: "bob was here" }, RELATIONS);
    const create = await as("bob", "POST", "/secret", { secret_id: "s1", text: "bob was here" });
    expect([theirs.status, theirs.body]).toEqual([create.status, create.body]);
    expect(theirs.status).toBe(409);
    // Anonymous: the create permission (logged_in) refuses first, as for a create.
    const anon = await t.request("POST", "/secret", { body: { secret_id: "s1", text: "x" }, headers: RELATIONS });
    expect([anon.status, anon.body]).toEqual([401, (await t.request("POST", "/secret", { body: { secret_id: "s1", text: "x" } })).body]);
    expect((await as("ann", "GET", "/secret/s1")).body.text).toBe("ann's, edited");
  });

  test("a user's model save sends the whole object: its password is ignored unless the private key sends it", async () => {
    const saved = await as("ann", "POST", "/user", { username: "ann", password: "ann-password", nickname: "a" }, RELATIONS);
    expect([saved.status, saved.body.nickname]).toEqual([200, "a"]);
    expect((await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "ann-password" } })).status).toBe(200);
    expect((await app("POST", "/user", { username: "ann", password: "set-by-app" }, RELATIONS)).status).toBe(200);
    expect((await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "set-by-app" } })).status).toBe(200);
  });

  test("bad input stays a clear 400", async () => {
    expect((await save({ game_id: "g1", counter: "many" })).status).toBe(400);
    expect((await save({ game_id: "g1", players: [1, 2] })).status).toBe(400);
    expect((await save("not an object")).status).toBe(400);
    expect((await save({ game_id: "g1" }, { "x-service-relations": "not a pair" })).status).toBe(400);
  });
});

describe("loose relationships", () => {
  test("keys without an object are kept on create, update, save and the relationship paths; expand leaves them; cascade skips them", async () => {
    const r = await app("POST", "/game", { game_id: "g9", players: ["one", "two", "ann"] });
    expect(r.body.players).toEqual(["one", "two", "ann"]);
    expect((await app("PUT", "/game/g9", { players: ["one", "ann"] })).body.players).toEqual(["one", "ann"]);
    expect((await app("PUT", "/game/g9/players", ["three", "one"])).body.players).toEqual(["one", "ann", "three"]);
    expect((await app("POST", "/game", { game_id: "g9", players: ["one", "ann", "three", "four"] }, RELATIONS)).body.players).toEqual([
      "one",
      "ann",
      "three",
      "four",
    ]);
    const expanded = (await app("GET", "/game/g9?_expand=1")).body.players as (string | { username: string })[];
    expect(expanded.map((p) => (typeof p === "string" ? p : p.username))).toEqual(["one", "ann", "three", "four"]);
    expect(expanded.filter((p) => typeof p === "string")).toEqual(["one", "three", "four"]);
    const pulled = await app("DELETE", "/game/g9/players/one,three", undefined, { "x-service-cascadedelete": "true" });
    expect(pulled.status).toBe(200);
    expect((await app("GET", "/game/g9")).body.players).toEqual(["ann", "four"]);
  });
});
