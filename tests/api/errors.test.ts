// Errors that say what was expected (docs/api/errors.md): type errors name the field, the expected type and what was
// sent (also past the integer range and in query values); a Range index past the limit, however long; MAC and
// OAuth timestamps in milliseconds or off the clock; a refused access token says whether refreshing helps.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/person", { fields: { name: { type: "string" } } });
  const r = await t.admin("PUT", "/schemas/task", {
    fields: {
      title: { type: "string" },
      priority: { type: "integer" },
      score: { type: "float" },
      done: { type: "boolean" },
      tags: { type: "array", items: "string" },
      nums: { type: "array", items: "integer" },
      loc: { type: "geopoint" },
      owner: { type: "relationship", schema: "person" },
      members: { type: "relationship", schema: "person", many: true },
      file: { type: "binary" },
    },
  });
  expect(r.status).toBe(201);
  await t.request("POST", "/task", { body: { task_id: "t1", title: "first", priority: 1 } });
  await t.request("POST", "/user", { body: { username: "ann", password: "ann-password" } });
});
afterAll(() => t.close());

const CREATE = "has an incompatible type, please check your schema";
const UPDATE = "has invalid type, please check your schema";
const KEY = "(a string of 1 to 256 characters)";

async function createError(body: Record<string, unknown>): Promise<string> {
  const r = await t.request("POST", "/task", { body });
  expect(r.status).toBe(400);
  return r.body.error;
}

/** The error of a create whose JSON body is sent exactly as written (numbers JSON.stringify cannot write). */
async function rawCreateError(json: string): Promise<string> {
  const r = await t.request("POST", "/task", { raw: json, headers: { "content-type": "application/json" } });
  expect(r.status).toBe(400);
  return r.body.error;
}

describe("type errors name the field, the expected type and what was sent", () => {
  test("the legacy wording, then field: expected <type>, got <type> <value>", async () => {
    expect(await createError({ priority: "high" })).toBe(`priority ${CREATE} (priority: expected integer, got string "high")`);
    const r = await t.request("PUT", "/task/t1", { body: { priority: "high" } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe(`priority ${UPDATE} (priority: expected integer, got string "high")`);
  });

  test("each field type says what it takes", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ priority: 18.71 }, "priority: expected integer, got number 18.71"],
      [{ score: "x" }, 'score: expected float, got string "x"'],
      [{ done: 1 }, "done: expected boolean, got number 1"],
      [{ title: { a: 1 } }, 'title: expected string, got object {"a":1}'],
      [{ tags: "a" }, 'tags: expected array of string, got string "a"'],
      [{ tags: ["a", "b", 5] }, "tags[2]: expected string, got number 5"],
      [{ nums: [1, 2.5] }, "nums[1]: expected integer, got number 2.5"],
      [{ loc: "here" }, 'loc: expected geopoint {"lat": number, "lon": number}, got string "here"'],
      [{ loc: { lat: 91, lon: 0 } }, "loc.lat: expected a latitude from -90 to 90, got number 91"],
      [{ loc: { lat: 0 } }, "loc.lon: expected a longitude from -180 to less than 180, got nothing"],
      [{ owner: 5 }, `owner: expected person key ${KEY}, got number 5`],
      [{ members: ["p1", 3] }, `members[1]: expected person key ${KEY}, got number 3`],
      [{ members: "p1" }, 'members: expected array of person keys, got string "p1"'],
      [
        { file: 5 },
        "file: expected binary upload (Content-Type, Content-Disposition, Content-Transfer-Encoding: base64, a blank line, base64), got number 5",
      ],
      [{ task_id: 12 }, `task_id: expected key ${KEY}, got number 12`],
    ];
    for (const [body, detail] of cases) {
      const field = Object.keys(body)[0]!;
      expect(await createError(body)).toBe(`${field} ${CREATE} (${detail})`);
    }
  });

  test("integers past ±2^53-1 are named as beyond the range, also when JSON holds a literal past 64 bits", async () => {
    const range = "expected an integer within ±9007199254740991";
    expect(await rawCreateError('{"priority": 18446744073709551616}')).toBe(
      `priority ${CREATE} (priority: ${range}, got 18446744073709552000 (beyond the integer range))`,
    );
    expect(await rawCreateError('{"priority": 1e20}')).toContain(
      `priority: ${range}, got 100000000000000000000 (beyond the integer range)`,
    );
    expect(await rawCreateError(`{"priority": -${"9".repeat(400)}}`)).toContain(
      `priority: ${range}, got -Infinity (beyond the integer range)`,
    );
    expect(await rawCreateError('{"nums": [1, 9007199254740993]}')).toContain(
      `nums[1]: ${range}, got 9007199254740992 (beyond the integer range)`,
    );
    for (const json of ['{"priority": 18446744073709551616}', '{"priority": 1e20}'])
      expect(await rawCreateError(json)).not.toContain("got number");
    expect(
      (await t.request("POST", "/task", { raw: '{"priority": 9007199254740991}', headers: { "content-type": "application/json" } })).status,
    ).toBe(201);
  });

  test("what was sent is cut at 40 characters", async () => {
    const error = await createError({ priority: "x".repeat(500) });
    expect(error).toBe(`priority ${CREATE} (priority: expected integer, got string "${"x".repeat(39)}…)`);
  });

  test("[inc] amounts, appends and pulls on sub-resources say the same", async () => {
    const inc = await t.request("PUT", "/task/t1", { body: { "priority[inc]": "1" } });
    expect(inc.body.error).toBe('priority[inc]: expected integer, got string "1"');
    const tags = await t.request("PUT", "/task/t1/tags", { body: ["ok", 7] });
    expect(tags.body.error).toBe(`tags ${UPDATE} (tags[1]: expected string, got number 7)`);
    const members = await t.request("PUT", "/task/t1/members", { body: [3] });
    expect(members.body.error).toBe(`members ${UPDATE} (members[0]: expected person key ${KEY}, got number 3)`);
    const notArray = await t.request("PUT", "/task/t1/tags", { body: "x" });
    expect(notArray.body.error).toBe('send a JSON array of values to append to tags, got string "x"');
    const pull = await t.request("DELETE", "/task/t1/nums/x");
    expect([pull.status, pull.body.error]).toEqual([400, 'nums: expected integer, got "x"']);
  });
});

describe("query values say what the field takes", () => {
  async function queryError(query: string): Promise<string> {
    const r = await t.request("GET", `/task?${query}`);
    expect([query, r.status]).toEqual([query, 400]);
    return r.body.error;
  }

  test("the condition as written, the expected type and the value", async () => {
    expect(await queryError("priority=high")).toBe('priority: expected integer, got "high"');
    expect(await queryError("priority[gt]=1.5")).toBe('priority[gt]: expected integer, got "1.5"');
    expect(await queryError("nums[in]=1,x")).toBe('nums[in]: expected integer, got "x"');
    expect(await queryError("score=abc")).toBe('score: expected float, got "abc"');
    expect(await queryError("done=yes")).toBe('done: expected true or false, got "yes"');
    expect(await queryError("[or1].priority=a&[or1].title=b")).toBe('[or1].priority: expected integer, got "a"');
  });

  test("an integer past the range is named as such", async () => {
    expect(await queryError("priority=99999999999999999999")).toBe(
      "priority: expected an integer within ±9007199254740991, got 99999999999999999999 (beyond the integer range)",
    );
    expect(await queryError("priority[lt]=-9007199254740992")).toContain("(beyond the integer range)");
    expect((await t.request("GET", "/task?priority=9007199254740991")).status).toBe(200);
    expect((await t.request("GET", "/task?priority=%2B0001")).body.map((o: any) => o.task_id)).toEqual(["t1"]);
  });
});

describe("Range with a huge number", () => {
  async function rangeError(range: string): Promise<string> {
    const r = await t.request("GET", "/task", { headers: { range } });
    expect([range.slice(0, 40), r.status]).toEqual([range.slice(0, 40), 400]);
    return r.body.error;
  }

  test("any index past the limit gets the limit's message, however many digits", async () => {
    expect(await rangeError("objects=0-1000000001")).toBe("Range: indexes must be at most 1000000000, got 1000000001");
    expect(await rangeError("objects=0-99999999999")).toBe("Range: indexes must be at most 1000000000, got 99999999999");
    expect(await rangeError("objects=99999999999999999999999-")).toBe(
      "Range: indexes must be at most 1000000000, got 99999999999999999999999",
    );
    expect(await rangeError(`objects=0-${"9".repeat(10_000)}`)).toBe(
      `Range: indexes must be at most 1000000000, got ${"9".repeat(24)}… (10000 digits)`,
    );
    expect((await t.request("GET", "/task", { headers: { range: "objects=0-1000000000" } })).status).toBe(200);
    expect(await rangeError("objects=x-1")).toStartWith("invalid Range header");
  });
});

describe("MAC and OAuth timestamps", () => {
  async function login(): Promise<{ access_token: string; mac_key: string; refresh_token: string }> {
    const r = await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "ann-password" } });
    expect(r.status).toBe(200);
    return r.body;
  }
  const serverTime = (error: string) => Number(/\(server time (\d+)\)$/.exec(error)?.[1]);

  test("a MAC ts in milliseconds is named as such", async () => {
    const c = await login();
    const r = await t.request("GET", "/task", { headers: { authorization: macAuth(c, "GET", "/task", { ts: Date.now() }) } });
    expect([r.status, r.body.error]).toEqual([401, "the MAC timestamp must be in seconds since 1970, not milliseconds"]);
  });

  test("a MAC ts off the clock gets the window and the server's time", async () => {
    const c = await login();
    const now = Math.floor(Date.now() / 1000);
    const r = await t.request("GET", "/task", { headers: { authorization: macAuth(c, "GET", "/task", { ts: now - 700 }) } });
    expect(r.status).toBe(401);
    expect(r.body.error).toStartWith("the MAC timestamp is outside the allowed window of ±600 s (server time ");
    expect(Math.abs(serverTime(r.body.error) - now)).toBeLessThanOrEqual(2);
    const junk = await t.request("GET", "/task", {
      headers: { authorization: `MAC id="${c.access_token}",ts="1.5e9",nonce="n",mac="AAAA"` },
    });
    expect(junk.body.error).toStartWith("the MAC timestamp must be a whole number of seconds since 1970 (server time ");
  });

  test("OAuth 1.0 alike, with its own window", async () => {
    const url = "http://localhost/task";
    const ms = await t.request("GET", "/task", {
      headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, "GET", url, { timestamp: Date.now() }) },
    });
    expect([ms.status, ms.body.error]).toEqual([401, "the OAuth timestamp must be in seconds since 1970, not milliseconds"]);
    const now = Math.floor(Date.now() / 1000);
    const old = await t.request("GET", "/task", {
      headers: { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, "GET", url, { timestamp: now - 1000 }) },
    });
    expect(old.body.error).toStartWith("the OAuth timestamp is outside the allowed window of ±300 s (server time ");
    expect(Math.abs(serverTime(old.body.error) - now)).toBeLessThanOrEqual(2);
  });
});

describe("a refused access token says whether refreshing helps", () => {
  const EXPIRED = "the access token has expired; refresh it with the refresh token";
  const GONE = "the access token is not valid (logged out or expired); log in again";
  const form = (fields: Record<string, string>) => ({
    raw: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  async function login(): Promise<{ access_token: string; mac_key: string; refresh_token: string }> {
    const r = await t.request("POST", "/user/accessToken", form({ username: "ann", password: "ann-password" }));
    expect(r.status).toBe(200);
    return r.body;
  }
  async function refused(c: { access_token: string; mac_key: string }): Promise<string> {
    const r = await t.request("GET", "/user/loggedInUser", { headers: { authorization: macAuth(c, "GET", "/user/loggedInUser") } });
    expect(r.status).toBe(401);
    return r.body.error;
  }
  const expire = (c: { access_token: string }, columns: string) =>
    t.burrow.envDbs.development.execute({
      sql: `UPDATE _burrow_sessions SET ${columns} WHERE family = ?`,
      args: [c.access_token.slice(0, 16)],
    });

  test("expired with a live refresh token: refresh", async () => {
    const c = await login();
    await expire(c, "expires = 0");
    expect(await refused(c)).toBe(EXPIRED);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: c.refresh_token }))).status).toBe(200);
  });

  test("logged out, rotated away, refresh token expired too, or unknown: log in again", async () => {
    const out = await login();
    expect((await t.request("GET", "/user/logout", { headers: { authorization: macAuth(out, "GET", "/user/logout") } })).status).toBe(200);
    expect(await refused(out)).toBe(GONE);

    const rotated = await login();
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: rotated.refresh_token }))).status).toBe(200);
    expect(await refused(rotated)).toBe(GONE);

    const old = await login();
    await expire(old, "expires = 0, refresh_expires = 0");
    expect(await refused(old)).toBe(GONE);

    expect(await refused({ access_token: "A".repeat(48), mac_key: "k" })).toBe(GONE);
    expect(await refused({ access_token: "short", mac_key: "k" })).toBe(GONE);
  });
});
