// The legacy session login of the original Java/Android SDK (GET /<userSchema>/login, docs/api/users.md#legacy-cookie-session): the
// cookie and its attributes, refusals, the cookie acting as the user (ACLs, sm_owner, loggedInUser,
// resetPassword) beside the API key or an OAuth 1.0 signature only, logout across nodes, environments,
// temporary passwords, rate limits shared with accessToken, and the Secure flag behind a trusted proxy.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type RequestOptions, type TestApp, type TestResponse } from "../helpers/app.ts";
import { macAuth, oauthAuth } from "../helpers/sign.ts";
import { listen } from "../helpers/listen.ts";
import { sessionToken } from "../../src/auth/session-cookie.ts";

const COOKIE_REFUSED = "the session cookie is not valid (logged out or expired); log in again";
const CLEARED = "session_burrow=logged:out; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax";
const CLEARED_SECURE =
  "session_burrow=logged:out; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Secure; HttpOnly; SameSite=Lax";

let t: TestApp;
let peer = "203.0.113.1";
beforeAll(async () => {
  t = await makeTestApp({ flags: { "--trusted-proxy": "10.0.0.0/8" }, peer: () => peer });
  const user = (await t.admin("GET", "/schemas/user")).body;
  await t.admin("PUT", "/schemas/user", { ...user, user: { ...user.user, forgotPassword: true } });
  await t.admin("PUT", "/schemas/diary", {
    fields: { text: { type: "string" } },
    permissions: { create: "logged_in", read: "owner", update: "owner", delete: "owner" },
  });
  await t.admin("PUT", "/schemas/secret", {
    fields: { text: { type: "string" } },
    permissions: { create: "private_key", read: "private_key", update: "private_key", delete: "private_key" },
  });
  const users = ["ann", "bob", "rita", "tim", "lim", "net"].map((u) => ({
    username: u,
    password: `${u}-password`,
    email: `${u}@example.com`,
  }));
  expect((await t.request("POST", "/user", { body: users })).body.failed).toEqual([]);
});
afterAll(() => t.close());

const query = (username: string, password: string, extra: Record<string, string> = {}) =>
  new URLSearchParams({ username, password, ...extra }).toString();
const login = (username: string, password = `${username}-password`, opts: RequestOptions & { extra?: Record<string, string> } = {}) =>
  t.request("GET", `/user/login?${query(username, password, opts.extra)}`, opts);
/** The `name=value` part of a response's Set-Cookie. */
const cookieOf = (r: TestResponse) => r.headers.get("set-cookie")!.split(";")[0]!;
async function session(username: string): Promise<string> {
  const r = await login(username);
  expect(r.status).toBe(200);
  return cookieOf(r);
}
const withCookie = (cookie: string, opts: RequestOptions = {}): RequestOptions => ({ ...opts, headers: { ...opts.headers, cookie } });
/** OAuth 1.0-signed with the development keys and no API key header, as the Java SDK sends in OAuth 1.0 mode. */
const signedOAuth1 = (method: string, path: string, opts: RequestOptions = {}): RequestOptions => ({
  ...opts,
  key: null,
  headers: { ...opts.headers, authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) },
});

describe("login", () => {
  test("200 with the user object (as loggedInUser renders it) and a session cookie with its attributes", async () => {
    const before = Date.now();
    const r = await login("ann");
    expect(r.status).toBe(200);
    // As the user (or the app) reads it: the email is visible to its owner only.
    expect(r.body).toEqual((await t.request("GET", "/user/ann", signedOAuth1("GET", "/user/ann"))).body);
    expect(r.body.email).toBe("ann@example.com");
    expect(r.text).not.toContain("password");
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(
      /^session_burrow=[A-Za-z0-9]{48}; Path=\/; Expires=[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT; Max-Age=3600; HttpOnly; SameSite=Lax$/,
    );
    const expires = Date.parse(/Expires=([^;]+)/.exec(cookie)![1]!);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  test("bad credentials: 401 {error} containing Invalid, no cookie; accessToken keeps its OAuth shape", async () => {
    for (const [u, p] of [
      ["ann", "wrong"],
      ["ghost", "whatever"],
      ["ann", ""],
    ]) {
      const r = await login(u!, p!);
      expect(r.status).toBe(401);
      expect(Object.keys(r.body)).toEqual(["error"]);
      expect(r.body.error).toContain("Invalid");
      expect(r.headers.get("set-cookie")).toBeNull();
    }
    const missing = await t.request("GET", "/user/login?username=ann");
    expect([missing.status, missing.body.error]).toEqual([401, "Invalid username or password"]);
    const token = await t.request("GET", `/user/accessToken?${query("ann", "wrong")}`);
    expect(token.body).toEqual({ error: "access_denied", error_description: "Invalid username or password" });
  });

  test("OAuth 1.0-signed without the API key, as the Java SDK does; a bad signature is 401", async () => {
    const path = `/user/login?${query("ann", "ann-password")}`;
    const r = await t.request("GET", path, signedOAuth1("GET", path));
    expect(r.status).toBe(200);
    expect(r.body.username).toBe("ann");
    expect(r.headers.get("set-cookie")).toStartWith("session_burrow=");
    const forged = await t.request("GET", path, {
      key: null,
      headers: { authorization: oauthAuth(KEYS.devPublic, "not-the-private-key", "GET", `http://localhost${path}`) },
    });
    expect([forged.status, forged.headers.get("set-cookie")]).toEqual([401, null]);
    expect((await t.request("GET", path, { key: null })).status).toBe(401);
  });

  test("on a schema without a user block, GET /<schema>/login is a read by key (the cookie applies to it)", async () => {
    expect((await t.request("POST", "/thing", { body: { thing_id: "login", name: "x" } })).status).toBe(201);
    const r = await t.request("GET", "/thing/login?username=ann&password=ann-password");
    expect([r.status, r.body.name, r.headers.get("set-cookie")]).toEqual([200, "x", null]);
    expect((await t.request("GET", "/thing/login", withCookie(`session_burrow=${"x".repeat(48)}`))).status).toBe(401);
  });

  test("a cookie session ends with its access token: no year-long refresh window in the store", async () => {
    const token = sessionToken(await session("ann"))!;
    const rs = await t.burrow.envDbs.development.execute({
      sql: "SELECT expires, refresh_expires FROM _burrow_sessions WHERE family = ?",
      args: [token.slice(0, 16)],
    });
    expect(rs.rows).toHaveLength(1);
    expect(Number(rs.rows[0]!.refresh_expires)).toBe(Number(rs.rows[0]!.expires));
  });
});

describe("the cookie acts as the user", () => {
  test("loggedInUser answers the user; without the cookie it is 401", async () => {
    const ann = await session("ann");
    const r = await t.request("GET", "/user/loggedInUser", withCookie(ann));
    expect([r.status, r.body.username]).toEqual([200, "ann"]);
    expect((await t.request("GET", "/user/loggedInUser")).status).toBe(401);
    // Among other cookies, in any position.
    const mixed = await t.request("GET", "/user/loggedInUser", withCookie(`theme=dark;  ${ann}; lang=en`));
    expect(mixed.body.username).toBe("ann");
  });

  test("sm_owner is set on create, and the owner ACL lets only that user read, change and delete", async () => {
    const ann = await session("ann");
    const bob = await session("bob");
    expect((await t.request("POST", "/diary", { body: { text: "anonymous" } })).status).toBe(401);
    const c = await t.request("POST", "/diary", withCookie(ann, { body: { text: "dear diary", sm_owner: "user/bob" } }));
    expect(c.status).toBe(201);
    expect(c.body.sm_owner).toBe("user/ann");
    const path = `/diary/${c.body.diary_id}`;
    expect((await t.request("GET", path, withCookie(ann))).body.text).toBe("dear diary");
    expect((await t.request("GET", path)).status).toBe(401);
    expect((await t.request("GET", path, withCookie(bob))).status).toBe(404);
    expect((await t.request("GET", "/diary", withCookie(bob))).body).toEqual([]);
    expect((await t.request("GET", "/diary", withCookie(ann))).body.map((d: any) => d.text)).toEqual(["dear diary"]);
    expect((await t.request("PUT", path, withCookie(bob, { body: { text: "bob was here" } }))).status).toBe(404);
    expect((await t.request("DELETE", path, withCookie(bob))).status).toBe(404);
    expect((await t.request("PUT", path, withCookie(ann, { body: { text: "edited" } }))).body.text).toBe("edited");
    expect((await t.request("DELETE", path, withCookie(ann))).status).toBe(200);
  });

  test("with an OAuth 1.0 signature the caller is the user, not the app (private_key schemas refuse it)", async () => {
    const ann = await session("ann");
    const me = await t.request("GET", "/user/loggedInUser", signedOAuth1("GET", "/user/loggedInUser", withCookie(ann)));
    expect([me.status, me.body.username]).toEqual([200, "ann"]);
    const note = await t.request("POST", "/diary", signedOAuth1("POST", "/diary", withCookie(ann, { body: { text: "signed" } })));
    expect([note.status, note.body.sm_owner]).toEqual([201, "user/ann"]);
    expect((await t.request("POST", "/secret", signedOAuth1("POST", "/secret", { body: { text: "app" } }))).status).toBe(201);
    expect((await t.request("POST", "/secret", signedOAuth1("POST", "/secret", withCookie(ann, { body: { text: "user" } })))).status).toBe(
      401,
    );
  });

  test("a MAC signature wins over a cookie", async () => {
    const ann = await session("ann");
    const bob = (await t.request("POST", "/user/accessToken", { body: { username: "bob", password: "bob-password" } })).body;
    const r = await t.request(
      "GET",
      "/user/loggedInUser",
      withCookie(ann, { headers: { authorization: macAuth(bob, "GET", "/user/loggedInUser") } }),
    );
    expect(r.body.username).toBe("bob");
  });

  test("resetPassword works with the cookie", async () => {
    const rita = await session("rita");
    const body = { old: { password: "rita-password" }, new: { password: "rita-new" } };
    expect((await t.request("POST", "/user/resetPassword", { body })).status).toBe(401);
    expect(
      (await t.request("POST", "/user/resetPassword", withCookie(rita, { body: { ...body, old: { password: "nope" } } }))).status,
    ).toBe(401);
    expect((await t.request("POST", "/user/resetPassword", withCookie(rita, { body }))).status).toBe(200);
    expect((await login("rita", "rita-new")).status).toBe(200);
    expect((await login("rita", "rita-password")).status).toBe(401);
  });
});

describe("cookies that do not count", () => {
  test("never without the API key or an OAuth 1.0 signature (no cookie-only path)", async () => {
    const ann = await session("ann");
    expect((await t.request("GET", "/user/loggedInUser", withCookie(ann, { key: null }))).status).toBe(401);
    expect((await t.request("GET", "/user/ann", withCookie(ann, { key: null }))).status).toBe(401);
    expect(
      (await t.request("GET", "/user/loggedInUser", withCookie(ann, { key: null, headers: { authorization: "Bearer x" } }))).status,
    ).toBe(401);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(ann, { key: "not-a-key" }))).status).toBe(401);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(ann))).status).toBe(200);
  });

  test("an unknown or malformed session cookie is 401 even on an open schema; other cookies are ignored", async () => {
    for (const cookie of [`session_burrow=${"A".repeat(48)}`, "session_burrow=garbage", 'session_burrow="abc"']) {
      const r = await t.request("GET", "/user/ann", withCookie(cookie));
      expect([cookie, r.status, r.body.error]).toEqual([cookie, 401, COOKIE_REFUSED]);
    }
    // No session: other cookies, an empty value, the logged-out marker (also as earlier versions set it), any value with a ":".
    for (const cookie of [
      "theme=dark",
      "xsession_burrow=abc",
      "session_burrowx=abc",
      "session_burrow=",
      "session_burrow=logged:out",
      "session_burrow=none",
      "session_burrow=x:y",
    ]) {
      const r = await t.request("GET", "/user/ann", withCookie(cookie));
      expect([cookie, r.status]).toEqual([cookie, 200]);
    }
  });

  test("a MAC session's access token is no cookie, and a cookie's token is no MAC id", async () => {
    // The MAC id travels in clear in every signed request; alone it must not act as the user.
    const mac = (await t.request("POST", "/user/accessToken", { body: { username: "bob", password: "bob-password" } })).body;
    expect(
      (await t.request("GET", "/user/loggedInUser", { headers: { authorization: macAuth(mac, "GET", "/user/loggedInUser") } })).body
        .username,
    ).toBe("bob");
    const stolen = await t.request("GET", "/user/loggedInUser", withCookie(`session_burrow=${mac.access_token}`));
    expect([stolen.status, stolen.body.error]).toEqual([401, COOKIE_REFUSED]);
    // The other way: a cookie session's token signed as a MAC id (with any key) is not a live MAC token.
    const token = sessionToken(await session("bob"))!;
    const asMac = await t.request("GET", "/user/loggedInUser", {
      headers: { authorization: macAuth({ access_token: token, mac_key: "" }, "GET", "/user/loggedInUser") },
    });
    expect([asMac.status, asMac.body.error]).toEqual([401, "the access token is not valid (logged out or expired); log in again"]);
  });

  test("a cookie of the other environment is 401", async () => {
    expect((await t.admin("POST", "/deploy", {})).status).toBe(200);
    const dev = await session("ann");
    const inProd = await t.request("GET", "/user/loggedInUser", withCookie(dev, { version: 1 }));
    expect([inProd.status, inProd.body.error]).toEqual([401, COOKIE_REFUSED]);
    expect((await t.request("POST", "/user", { version: 1, body: { username: "prod", password: "prod-password" } })).status).toBe(201);
    const p = await login("prod", "prod-password", { version: 1 });
    expect(p.status).toBe(200);
    const prod = cookieOf(p);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(prod, { version: 1 }))).body.username).toBe("prod");
    expect((await t.request("GET", "/user/loggedInUser", withCookie(prod))).status).toBe(401);
  });
});

describe("logout", () => {
  test("clears the cookie and revokes the session: reusing it is 401, a new login works despite it", async () => {
    const ann = await session("ann");
    const out = await t.request("GET", "/user/logout", withCookie(ann));
    expect([out.status, out.body]).toEqual([200, {}]);
    expect(out.headers.get("set-cookie")).toBe(CLEARED);
    const again = await t.request("GET", "/user/loggedInUser", withCookie(ann));
    expect([again.status, again.body.error]).toEqual([401, COOKIE_REFUSED]);
    expect((await t.request("GET", "/user/ann", withCookie(ann))).status).toBe(401);
    expect((await t.request("GET", "/user/logout", withCookie(ann))).status).toBe(401);
    // What a client keeps after the clearing Set-Cookie is no session: anonymous, not refused.
    expect((await t.request("GET", "/user/ann", withCookie(cookieOf(out)))).status).toBe(200);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(cookieOf(out)))).body.error).toBe("Insufficient authorization");
    const relogin = await login("ann", "ann-password", withCookie(ann));
    expect(relogin.status).toBe(200);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(cookieOf(relogin)))).body.username).toBe("ann");
  });

  test("a MAC logout leaves a cookie session alone and sends no Set-Cookie", async () => {
    const ann = await session("ann");
    const mac = (await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "ann-password" } })).body;
    const out = await t.request(
      "GET",
      "/user/logout",
      withCookie(ann, { headers: { authorization: macAuth(mac, "GET", "/user/logout") } }),
    );
    expect([out.status, out.headers.get("set-cookie")]).toEqual([200, null]);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(ann))).status).toBe(200);
  });

  test("is honoured by another node sharing the store", async () => {
    const other = await makeTestApp({ dir: t.dir });
    try {
      const tim = await session("tim");
      const onOther = (path: string) => other.request("GET", path, withCookie(tim));
      expect((await onOther("/user/logout")).headers.get("set-cookie")).toBe(CLEARED);
      expect((await t.request("GET", "/user/loggedInUser", withCookie(tim))).status).toBe(401);
      expect((await onOther("/user/loggedInUser")).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe("temporary passwords and rate limits", () => {
  test("a temporary password logs in through /login only with new_password", async () => {
    expect((await t.request("POST", "/user/forgotPassword", { body: { username: "lim" } })).status).toBe(200);
    const temp = /temporary password for .* is: ([A-Za-z0-9]+)/.exec((await t.admin("GET", "/outbox")).body[0].text)![1]!;
    const needsReset = await login("lim", temp);
    expect([needsReset.status, needsReset.body, needsReset.headers.get("set-cookie")]).toEqual([
      401,
      { error: "Temporary password reset required." },
      null,
    ]);
    const r = await login("lim", temp, { extra: { new_password: "lim-new" } });
    expect(r.status).toBe(200);
    expect((await t.request("GET", "/user/loggedInUser", withCookie(cookieOf(r)))).body.username).toBe("lim");
    expect((await login("lim", "lim-new")).status).toBe(200);
    expect((await t.request("POST", "/user/accessToken", { body: { username: "lim", password: "lim-password" } })).status).toBe(401);
  });

  test("failed logins per account count across /login and accessToken, then 429 with Retry-After", async () => {
    peer = "198.51.100.7";
    await t.admin("PUT", "/settings/development", { rateLimits: { failedLoginsPerAccount: 3 } });
    try {
      expect((await login("net", "guess-1")).status).toBe(401);
      expect((await t.request("POST", "/user/accessToken", { body: { username: "net", password: "guess-2" } })).status).toBe(401);
      expect((await login("net", "guess-3")).status).toBe(401);
      const locked = await login("net");
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(locked.headers.get("set-cookie")).toBeNull();
      expect((await t.request("POST", "/user/accessToken", { body: { username: "net", password: "net-password" } })).status).toBe(429);
      expect((await login("ann")).status).toBe(200);
    } finally {
      await t.admin("PUT", "/settings/development", { rateLimits: null });
      t.burrow.limiter.reset("development|fail|user|net");
    }
    expect((await login("net")).status).toBe(200);
  });

  test("the per-IP limit covers /login with the other auth endpoints", async () => {
    peer = "198.51.100.8";
    await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 4 } });
    try {
      const statuses = [
        (await login("ann")).status,
        (await t.request("GET", `/user/accessToken?${query("ann", "ann-password")}`)).status,
        (await login("ann")).status,
      ];
      statuses.push((await t.request("POST", "/user/refreshToken", { body: { refresh_token: "x" } })).status, (await login("ann")).status);
      expect(statuses).toEqual([200, 200, 200, 401, 429]);
      peer = "198.51.100.9";
      expect((await login("ann")).status).toBe(200);
    } finally {
      await t.admin("PUT", "/settings/development", { rateLimits: null });
    }
  });
});

describe("over a socket, as the Java SDK reads it", () => {
  test("the login's cookie arrives under the header name Set-Cookie; the logout's marker holds a ':'", async () => {
    const s = listen(t);
    try {
      const api = `Accept: application/vnd.service+json; version=0\r\nX-Service-API-Key: ${KEYS.devPublic}`;
      const login = await s.raw(`GET /user/login?username=ann&password=ann-password HTTP/1.1\r\n${api}`);
      expect(login.status).toBe(200);
      const line = login.lines.find((l) => /^set-cookie:/i.test(l))!;
      expect(line).toMatch(
        /^Set-Cookie: session_burrow=[A-Za-z0-9]{48}; Path=\/; Expires=[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT; Max-Age=3600; HttpOnly; SameSite=Lax$/,
      );
      const cookie = line.slice("Set-Cookie: ".length).split(";")[0]!;
      expect((await s.raw(`GET /user/loggedInUser HTTP/1.1\r\n${api}\r\nCookie: ${cookie}`)).status).toBe(200);
      // The logged-out marker goes as a header (Bun's cookie writer would percent-encode the ":"): Bun spells that
      // name set-cookie; the proxies in deploy/ deliver it as Set-Cookie.
      const out = await s.raw(`GET /user/logout HTTP/1.1\r\n${api}\r\nCookie: ${cookie}`);
      expect(out.lines.find((l) => /^set-cookie:/i.test(l))).toBe(`set-cookie: ${CLEARED}`);
      // As the SDK's cookie store reads a Set-Cookie value (split on ";", then the pair on "="): the stored value
      // of the session cookie after logout holds the ":" its isLoggedOut() looks for; after login it did not.
      const stored = (header: string) => header.split(";")[0]!.split("=")[1]!;
      expect(stored(CLEARED).includes(":")).toBe(true);
      expect(stored(line.slice("Set-Cookie: ".length)).includes(":")).toBe(false);
      expect((await s.raw(`GET /user/loggedInUser HTTP/1.1\r\n${api}\r\nCookie: ${cookie}`)).status).toBe(401);
    } finally {
      s.stop();
    }
  });
});

describe("the Secure flag", () => {
  const secureFlag = (r: TestResponse) => r.headers.get("set-cookie")!.includes("; Secure; ");

  test("behind a trusted proxy with X-Forwarded-Proto: https, and not without", async () => {
    peer = "10.1.2.3";
    const proxied = await login("ann", "ann-password", { headers: { "x-forwarded-proto": "https" } });
    expect([proxied.status, secureFlag(proxied)]).toEqual([200, true]);
    const out = await t.request("GET", "/user/logout", withCookie(cookieOf(proxied), { headers: { "x-forwarded-proto": "https" } }));
    expect(out.headers.get("set-cookie")).toBe(CLEARED_SECURE);
    expect(secureFlag(await login("ann"))).toBe(false);
    expect(secureFlag(await login("ann", "ann-password", { headers: { "x-forwarded-proto": "http" } }))).toBe(false);
    peer = "203.0.113.50";
    const untrusted = await login("ann", "ann-password", { headers: { "x-forwarded-proto": "https" } });
    expect([untrusted.status, secureFlag(untrusted)]).toEqual([200, false]);
  });
});
