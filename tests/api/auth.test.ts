// Users: token login (form, JSON, GET), the token response, refresh rotation and reuse, logout, the logged-in
// user, single sessions, and MAC-signed requests (window, replay, environment, method override, proxies).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth, type MacCredentials } from "../helpers/sign.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
  await t.request("POST", "/user", {
    body: [
      { username: "ann", password: "ann-password", email: "ann@example.com" },
      { username: "bob", password: "bob-password" },
    ],
  });
});
afterAll(() => t.close());

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
async function login(username = "ann", password = `${username}-password`): Promise<any> {
  const r = await t.request("POST", "/user/accessToken", form({ username, password, token_type: "mac" }));
  expect(r.status).toBe(200);
  return r.body;
}
function signed(creds: MacCredentials, method: string, path: string, extra: Record<string, string> = {}) {
  return { headers: { authorization: macAuth(creds, method, path), ...extra } };
}

describe("login", () => {
  test("the token response, field for field", async () => {
    const r = await login();
    expect(Object.keys(r).sort()).toEqual([
      "access_token",
      "expires_in",
      "mac_algorithm",
      "mac_key",
      "refresh_token",
      "service",
      "token_type",
    ]);
    expect(r.access_token).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(r.mac_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(r.refresh_token).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(r.refresh_token.slice(0, 16)).toBe(r.access_token.slice(0, 16));
    expect(r).toMatchObject({ mac_algorithm: "hmac-sha-1", token_type: "mac", expires_in: 3600 });
    expect(r.service.user).toMatchObject({ username: "ann", email: "ann@example.com" });
    expect(JSON.stringify(r)).not.toContain("password");
  });

  test("JSON bodies and the GET form work too", async () => {
    const j = await t.request("POST", "/user/accessToken", { body: { username: "bob", password: "bob-password" } });
    expect(j.status).toBe(200);
    const g = await t.request("GET", "/user/accessToken?username=bob&password=bob-password");
    expect(g.status).toBe(200);
    expect(g.body.service.user.username).toBe("bob");
  });

  test("wrong credentials: 401 access_denied with a description; unknown users alike", async () => {
    for (const [u, p] of [
      ["ann", "nope"],
      ["ghost", "whatever"],
      ["", ""],
      ["ann", ""],
    ]) {
      const r = await t.request("POST", "/user/accessToken", form({ username: u!, password: p! }));
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("access_denied");
      expect(r.body.error_description).toBe("Invalid username or password");
    }
  });

  test("only user schemas have token endpoints", async () => {
    await t.request("POST", "/thing", { body: { name: "x" } });
    expect((await t.request("POST", "/thing/accessToken", form({ username: "a", password: "b" }))).status).toBe(404);
  });
});

describe("MAC-signed requests", () => {
  test("a signed request acts as the user; loggedInUser answers the user", async () => {
    const c = await login();
    const r = await t.request("GET", "/user/loggedInUser", signed(c, "GET", "/user/loggedInUser"));
    expect(r.status).toBe(200);
    expect(r.body.username).toBe("ann");
    expect((await t.request("GET", "/user/loggedInUser")).status).toBe(401);
    const created = await t.request("POST", "/note", { body: { text: "mine" }, ...signed(c, "POST", "/note") });
    expect(created.body.sm_owner).toBe("user/ann");
  });

  test("queries are signed with their query string, raw or iOS-decoded", async () => {
    const c = await login();
    const path = "/note?text[ne]=a%20b&text[in]=mine,other";
    expect((await t.request("GET", path, signed(c, "GET", path))).status).toBe(200);
    const ios = macAuth(c, "GET", "/note?text[ne]=a%20b&text[in]=mine,other".replace("[", "[").replace("%5B", "["));
    expect((await t.request("GET", "/note?text%5Bne%5D=a%20b&text%5Bin%5D=mine,other", { headers: { authorization: ios } })).status).toBe(
      200,
    );
  });

  test("tampering, another host or port, or a missing API key are refused", async () => {
    const c = await login();
    const auth = macAuth(c, "GET", "/note");
    expect((await t.request("GET", "/note?x=1", { headers: { authorization: auth } })).status).toBe(401);
    expect(
      (await t.request("GET", "/note", { headers: { authorization: macAuth(c, "GET", "/note", { host: "evil.example" }) } })).status,
    ).toBe(401);
    expect((await t.request("GET", "/note", { headers: { authorization: macAuth(c, "GET", "/note", { port: 8080 }) } })).status).toBe(401);
    expect((await t.request("DELETE", "/note/x", { headers: { authorization: macAuth(c, "GET", "/note/x") } })).status).toBe(401);
    expect((await t.request("GET", "/note", { key: null, ...signed(c, "GET", "/note") })).status).toBe(401);
    const otherKey = macAuth({ ...c, mac_key: "A".repeat(32) }, "GET", "/note");
    expect((await t.request("GET", "/note", { headers: { authorization: otherKey } })).status).toBe(401);
  });

  test("https clients signing port 443 are accepted when no port is named", async () => {
    const c = await login();
    expect((await t.request("GET", "/note", { headers: { authorization: macAuth(c, "GET", "/note", { port: 443 }) } })).status).toBe(200);
  });

  test("the timestamp window is ±600 s and a signature is used once", async () => {
    const c = await login();
    const now = Math.floor(Date.now() / 1000);
    expect((await t.request("GET", "/note", { headers: { authorization: macAuth(c, "GET", "/note", { ts: now - 700 }) } })).status).toBe(
      401,
    );
    expect((await t.request("GET", "/note", { headers: { authorization: macAuth(c, "GET", "/note", { ts: now + 700 }) } })).status).toBe(
      401,
    );
    expect((await t.request("GET", "/note", { headers: { authorization: macAuth(c, "GET", "/note", { ts: now - 500 }) } })).status).toBe(
      200,
    );
    const once = macAuth(c, "GET", "/note", { nonce: "n42" });
    expect((await t.request("GET", "/note", { headers: { authorization: once } })).status).toBe(200);
    const replay = await t.request("GET", "/note", { headers: { authorization: once } });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toContain("replayed");
  });

  test("method override: the request-line method first, then the overriding one", async () => {
    const c = await login();
    const n = await t.request("POST", "/note", { body: { text: "to go" }, ...signed(c, "POST", "/note") });
    const path = `/note/${n.body.note_id}`;
    const byLine = await t.request("GET", path, {
      headers: { authorization: macAuth(c, "GET", path), "x-http-method-override": "DELETE" },
    });
    expect(byLine.status).toBe(200);
    const m = await t.request("POST", "/note", { body: { text: "to go 2" }, ...signed(c, "POST", "/note") });
    const path2 = `/note/${m.body.note_id}`;
    const byOverride = await t.request("GET", path2, {
      headers: { authorization: macAuth(c, "DELETE", path2), "x-http-method-override": "DELETE" },
    });
    expect(byOverride.status).toBe(200);
    expect((await t.request("GET", path2)).status).toBe(404);
  });

  test("a development token is refused in production", async () => {
    const c = await login();
    await t.admin("POST", "/deploy", {});
    const r = await t.request("GET", "/user/loggedInUser", { version: 1, ...signed(c, "GET", "/user/loggedInUser") });
    expect(r.status).toBe(401);
  });

  test("malformed Authorization headers are 401, never 500", async () => {
    const headers = [
      "MAC",
      "MAC id=1",
      'MAC id="x",ts="1",nonce="n"',
      'MAC id="x",ts="abc",nonce="n",mac="AAAA"',
      `MAC id="${"x".repeat(5000)}",ts="1",nonce="n",mac="A"`,
      "Bearer abc",
      "OAuth",
      'OAuth oauth_consumer_key="nope"',
      "Basic YTpi",
      'MAC id="a" ts="1"',
      "\u00ff\u00fe",
    ];
    for (const authorization of headers) {
      const r = await t.request("GET", "/note", { headers: { authorization: authorization.replace(/[^\x20-\xff]/g, "") } });
      expect([authorization.slice(0, 40), r.status]).toEqual([authorization.slice(0, 40), 401]);
      expect(typeof r.body.error).toBe("string");
    }
  });
});

describe("refresh, logout, sessions", () => {
  test("refresh rotates; the old access and refresh tokens stop working; reuse revokes the family", async () => {
    const first = await login("bob");
    const r = await t.request(
      "POST",
      "/user/refreshToken",
      form({ refresh_token: first.refresh_token, grant_type: "refresh_token", token_type: "mac", mac_algorithm: "hmac-sha1" }),
    );
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).not.toBe(first.refresh_token);
    expect(r.body.access_token).not.toBe(first.access_token);
    expect(r.body.service.user.username).toBe("bob");
    expect((await t.request("GET", "/user/loggedInUser", signed(first, "GET", "/user/loggedInUser"))).status).toBe(401);
    expect((await t.request("GET", "/user/loggedInUser", signed(r.body, "GET", "/user/loggedInUser"))).status).toBe(200);
    const reuse = await t.request("POST", "/user/refreshToken", form({ refresh_token: first.refresh_token, grant_type: "refresh_token" }));
    expect(reuse.status).toBe(401);
    expect(reuse.body.error).toBe("invalid_grant");
    expect((await t.request("GET", "/user/loggedInUser", signed(r.body, "GET", "/user/loggedInUser"))).status).toBe(401);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: r.body.refresh_token }))).status).toBe(401);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: "garbage" }))).status).toBe(401);
  });

  test("logout revokes; unsigned logout is 401", async () => {
    const c = await login();
    expect((await t.request("GET", "/user/logout", signed(c, "GET", "/user/logout"))).status).toBe(200);
    expect((await t.request("GET", "/user/loggedInUser", signed(c, "GET", "/user/loggedInUser"))).status).toBe(401);
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: c.refresh_token }))).status).toBe(401);
    expect((await t.request("GET", "/user/logout")).status).toBe(401);
  });

  test("logins from several devices coexist; singleSession makes a new login revoke the others", async () => {
    const a = await login();
    const b = await login();
    expect((await t.request("GET", "/user/loggedInUser", signed(a, "GET", "/user/loggedInUser"))).status).toBe(200);
    expect((await t.request("GET", "/user/loggedInUser", signed(b, "GET", "/user/loggedInUser"))).status).toBe(200);
    const def = (await t.admin("GET", "/schemas/user")).body;
    await t.admin("PUT", "/schemas/user", { ...def, user: { ...def.user, singleSession: true } });
    const c = await login();
    expect((await t.request("GET", "/user/loggedInUser", signed(a, "GET", "/user/loggedInUser"))).status).toBe(401);
    expect((await t.request("GET", "/user/loggedInUser", signed(c, "GET", "/user/loggedInUser"))).status).toBe(200);
    await t.admin("PUT", "/schemas/user", def);
  });

  test("an expired access token is refused so the client refreshes", async () => {
    const c = await login();
    await t.burrow.envDbs.development.execute("UPDATE _burrow_sessions SET expires = 0");
    await new Promise((r) => setTimeout(r, 0));
    const r = await t.request("GET", "/user/loggedInUser", signed(c, "GET", "/user/loggedInUser"));
    expect(r.status).toBe(401);
    expect(r.body.error).toContain("refresh");
    expect((await t.request("POST", "/user/refreshToken", form({ refresh_token: c.refresh_token }))).status).toBe(200);
  });
});

describe("behind a trusted proxy", () => {
  test("forwarded host, proto and port count only from a trusted peer", async () => {
    const p = await makeTestApp({ flags: { "--trusted-proxy": "10.0.0.0/8" }, peer: () => "10.1.2.3" });
    const q = await makeTestApp({ peer: () => "203.0.113.9" });
    try {
      for (const app of [p, q]) await app.request("POST", "/user", { body: { username: "ann", password: "ann-password" } });
      const creds = async (app: TestApp) =>
        (await app.request("POST", "/user/accessToken", { body: { username: "ann", password: "ann-password" } })).body;
      const fwd = { "x-forwarded-proto": "https", "x-forwarded-host": "api.example.com", "x-forwarded-for": "198.51.100.7" };
      const pc = await creds(p);
      const ok = await p.request("GET", "/user/loggedInUser", {
        headers: { ...fwd, authorization: macAuth(pc, "GET", "/user/loggedInUser", { host: "api.example.com", port: 443 }) },
      });
      expect(ok.status).toBe(200);
      const qc = await creds(q);
      const spoofed = await q.request("GET", "/user/loggedInUser", {
        headers: { ...fwd, authorization: macAuth(qc, "GET", "/user/loggedInUser", { host: "api.example.com", port: 443 }) },
      });
      expect(spoofed.status).toBe(401);
    } finally {
      await p.close();
      await q.close();
    }
  });
});

describe("hostile login input", () => {
  test("SQL, __proto__ and odd types in login fields never yield a 500", async () => {
    const bodies: unknown[] = [
      { username: "ann' OR '1'='1", password: "x' OR '1'='1" },
      JSON.parse('{"__proto__": {"admin": true}, "username": "ann", "password": "nope"}'),
      { username: ["ann"], password: { $ne: 1 } },
      { username: "ann", password: "x".repeat(5000) },
      { username: "a".repeat(1000), password: "x" },
    ];
    for (const body of bodies) {
      const r = await t.request("POST", "/user/accessToken", { body });
      expect(r.status).toBe(401);
    }
    expect(
      (await t.request("POST", "/user/accessToken", { raw: "{bad json", headers: { "content-type": "application/json" } })).status,
    ).toBe(400);
    expect(
      (
        await t.request("POST", "/user/accessToken", {
          raw: "username=ann&password=ann-password&token_type=jwt",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        })
      ).status,
    ).toBe(400);
    expect(({} as any).admin).toBeUndefined();
  });
});
