// Passkeys (docs/api/users.md#passkeys), driven by a software authenticator (tests/helpers/soft-authenticator.ts):
// registration, login with accessToken grant_type=passkey (named and discoverable), challenges that work once and
// expire, a wrong origin or relying party refused, signature counters that must increase, list and removal by the
// user and by an admin, login options that look the same for any username, the failed-login and per-IP limits, and
// a challenge answered on another node sharing the store.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type RequestOptions, type TestApp } from "../helpers/app.ts";
import { macAuth } from "../helpers/sign.ts";
import { SoftAuthenticator } from "../helpers/soft-authenticator.ts";

let t: TestApp;
let peer = "198.51.100.1";
const ORIGIN = "http://localhost";
type Creds = { access_token: string; mac_key: string };

const form = (fields: Record<string, string>): RequestOptions => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
const as = (c: Creds, method: string, path: string, body?: unknown) =>
  t.request(method, path, { body, headers: { authorization: macAuth(c, method, path) } });

async function signUp(username: string): Promise<Creds> {
  expect((await t.request("POST", "/user", { body: { username, password: `${username}-pw` } })).status).toBe(201);
  const r = await t.request("POST", "/user/accessToken", form({ username, password: `${username}-pw` }));
  expect(r.status).toBe(200);
  return r.body;
}

async function register(c: Creds, auth: SoftAuthenticator, extra: Record<string, unknown> = {}, origin = ORIGIN) {
  const options = await as(c, "POST", "/user/passkeys/registerOptions");
  expect(options.status).toBe(200);
  return as(c, "POST", "/user/passkeys/register", { ...(await auth.create(options.body, origin)), ...extra });
}

const loginOptions = (body: Record<string, unknown> = {}, app = t) => app.request("POST", "/user/passkeys/loginOptions", { body });
const grant = (assertion: unknown, challengeId: string, app = t, more: Record<string, string> = {}) =>
  app.request(
    "POST",
    "/user/accessToken",
    form({ grant_type: "passkey", assertion: JSON.stringify(assertion), challenge_id: challengeId, ...more }),
  );

/** loginOptions, the authenticator's assertion (with tweaks), accessToken. */
async function login(auth: SoftAuthenticator, username?: string, tweaks: Parameters<SoftAuthenticator["get"]>[2] = {}) {
  const o = await loginOptions(username === undefined ? {} : { username });
  expect(o.status).toBe(200);
  const assertion = await auth.get(o.body, ORIGIN, tweaks);
  return { r: await grant(assertion, o.body.challenge_id), assertion, challengeId: o.body.challenge_id as string };
}

beforeAll(async () => {
  t = await makeTestApp({ peer: () => peer });
  await t.admin("PUT", "/schemas/note", { fields: { text: { type: "string" } } });
});
afterAll(() => t.close());

describe("registration", () => {
  test("registerOptions names the relying party and the user; register keeps the passkey", async () => {
    const ann = await signUp("ann");
    const o = await as(ann, "POST", "/user/passkeys/registerOptions");
    expect(o.status).toBe(200);
    expect(o.headers.get("cache-control")).toBe("no-store");
    expect(o.body.rp).toEqual({ name: expect.any(String), id: "localhost" });
    expect(o.body.user.name).toBe("ann");
    expect(o.body.user.id).not.toContain("ann");
    expect(o.body.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(o.body.timeout).toBe(300_000);
    expect(o.body.excludeCredentials).toEqual([]);
    expect(o.body.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    const auth = new SoftAuthenticator();
    const r = await as(ann, "POST", "/user/passkeys/register", { ...(await auth.create(o.body, ORIGIN)), name: "Laptop" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), name: "Laptop", created: expect.any(String), lastUsed: null });
    // The next registration excludes it and keeps the user handle.
    const next = await as(ann, "POST", "/user/passkeys/registerOptions");
    expect(next.body.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([r.body.id]);
    expect(next.body.user.id).toBe(o.body.user.id);
  });

  test("a registration challenge works once, for its user only, and not after it expired", async () => {
    const bo = await signUp("bo");
    const cy = await signUp("cy");
    const auth = new SoftAuthenticator();
    const o = await as(bo, "POST", "/user/passkeys/registerOptions");
    const response = await auth.create(o.body, ORIGIN);
    const other = await as(cy, "POST", "/user/passkeys/register", response);
    expect([other.status, other.body.error]).toEqual([400, expect.stringContaining("challenge is unknown, used or expired")]);
    expect((await as(bo, "POST", "/user/passkeys/register", response)).status).toBe(201);
    expect((await as(bo, "POST", "/user/passkeys/register", response)).status).toBe(400);
    const late = await as(bo, "POST", "/user/passkeys/registerOptions");
    await t.burrow.envDbs.development.execute("UPDATE _burrow_passkey_challenges SET expires = 1");
    expect((await as(bo, "POST", "/user/passkeys/register", await auth.create(late.body, ORIGIN))).status).toBe(400);
  });

  test("a wrong origin, relying party or missing user verification is refused; bad bodies are 400; unsigned is 401", async () => {
    const di = await signUp("di");
    const auth = new SoftAuthenticator();
    for (const tweaks of [{ origin: "http://evil.example" }, { rpId: "evil.example" }, { userVerified: false }]) {
      const o = await as(di, "POST", "/user/passkeys/registerOptions");
      const r = await as(di, "POST", "/user/passkeys/register", await auth.create(o.body, ORIGIN, tweaks));
      expect([r.status, r.body.error]).toEqual([400, expect.stringMatching(/^the passkey was not accepted: /)]);
    }
    expect((await as(di, "POST", "/user/passkeys/register", { id: "x" })).status).toBe(400);
    const o = await as(di, "POST", "/user/passkeys/registerOptions");
    expect((await as(di, "POST", "/user/passkeys/register", { ...(await auth.create(o.body, ORIGIN)), name: "" })).status).toBe(400);
    expect((await t.request("POST", "/user/passkeys/registerOptions")).status).toBe(401);
    expect((await as(di, "GET", "/user/passkeys")).body).toEqual({ passkeys: [] });
  });

  test("the settings' relying party and origins replace the request's", async () => {
    const ed = await signUp("ed");
    const auth = new SoftAuthenticator();
    const set = await t.admin("PUT", "/settings/development", {
      auth: { passkeys: { rpId: "example.com", origins: ["https://app.example.com"] } },
    });
    expect(set.status).toBe(200);
    try {
      const o = await as(ed, "POST", "/user/passkeys/registerOptions");
      expect(o.body.rp.id).toBe("example.com");
      const local = await as(ed, "POST", "/user/passkeys/register", await auth.create(o.body, ORIGIN));
      expect(local.status).toBe(400);
      expect((await register(ed, auth, {}, "https://app.example.com")).status).toBe(201);
    } finally {
      await t.admin("PUT", "/settings/development", { auth: { passkeys: { rpId: null, origins: null } } });
    }
  });
});

describe("login", () => {
  let auth: SoftAuthenticator;
  let id: string;
  beforeAll(async () => {
    auth = new SoftAuthenticator();
    id = (await register(await signUp("fay"), auth, { name: "Phone" })).body.id;
  });

  test("with a username or a discoverable passkey: the token response, MAC or bearer, and lastUsed is set", async () => {
    const o = await loginOptions({ username: "fay" });
    expect(o.body.allowCredentials).toEqual([{ id, type: "public-key", transports: ["internal"] }]);
    expect(o.body.rpId).toBe("localhost");
    expect(o.body.userVerification).toBe("required");
    expect(o.body.challenge_id).toMatch(/^[A-Za-z0-9]{32}$/);
    const mac = await grant(await auth.get(o.body, ORIGIN), o.body.challenge_id);
    expect(mac.status).toBe(200);
    expect([mac.body.token_type, typeof mac.body.mac_key, mac.body.service.user.username]).toEqual(["mac", "string", "fay"]);
    expect((await as(mac.body, "GET", "/user/loggedInUser")).body.username).toBe("fay");

    const d = await loginOptions();
    expect(d.body.allowCredentials).toEqual([]);
    const assertion = await auth.get(d.body, ORIGIN);
    // JSON bodies work too (the assertion is JSON text there as well).
    const bearer = await t.request("POST", "/user/accessToken", {
      body: { grant_type: "passkey", assertion: JSON.stringify(assertion), challenge_id: d.body.challenge_id, token_type: "bearer" },
    });
    expect(bearer.status).toBe(200);
    expect([bearer.body.token_type, bearer.body.service.user.username]).toEqual(["bearer", "fay"]);
    expect(bearer.body.mac_key).toBeUndefined();
    const listed = (await as(mac.body, "GET", "/user/passkeys")).body.passkeys;
    expect(listed).toEqual([{ id, name: "Phone", created: expect.any(String), lastUsed: expect.any(String) }]);
  });

  test("a replayed assertion or a reused challenge is refused", async () => {
    const { r, assertion, challengeId } = await login(auth, "fay");
    expect(r.status).toBe(200);
    const again = await grant(assertion, challengeId);
    expect([again.status, again.body.error, again.body.error_description]).toEqual([
      401,
      "invalid_grant",
      expect.stringContaining("unknown, used or expired"),
    ]);
    const o = await loginOptions({ username: "fay" });
    expect((await grant(await auth.get(o.body, ORIGIN), challengeId)).status).toBe(401);
    // The assertion signed another challenge than the one named.
    expect((await grant(await auth.get(o.body, ORIGIN, { challenge: "AAAA" }), o.body.challenge_id)).status).toBe(401);
    const late = await loginOptions({ username: "fay" });
    await t.burrow.envDbs.development.execute("UPDATE _burrow_passkey_challenges SET expires = 1");
    expect((await grant(await auth.get(late.body, ORIGIN), late.body.challenge_id)).status).toBe(401);
    expect((await login(auth, "fay")).r.status).toBe(200);
  });

  test("a wrong origin or relying party is refused", async () => {
    const origin = await login(auth, "fay", { origin: "http://evil.example" });
    expect([origin.r.status, origin.r.body.error_description]).toEqual([401, expect.stringContaining("origin")]);
    expect((await login(auth, "fay", { rpId: "evil.example" })).r.status).toBe(401);
    expect((await login(auth, "fay", { userVerified: false })).r.status).toBe(401);
    expect((await login(auth, "fay")).r.status).toBe(200);
  });

  test("a signature counter that does not increase is refused; an authenticator without counters is not", async () => {
    const stored = async () =>
      Number(
        (await t.burrow.envDbs.development.execute({ sql: "SELECT counter FROM _burrow_passkeys WHERE id = ?", args: [id] })).rows[0]!
          .counter,
      );
    const before = await stored();
    expect(before).toBeGreaterThan(0);
    for (const counter of [before, before - 1, 0]) {
      const r = (await login(auth, "fay", { counter })).r;
      expect([counter, r.status]).toEqual([counter, 401]);
    }
    expect(await stored()).toBe(before);
    expect((await login(auth, "fay", { counter: before + 10 })).r.status).toBe(200);
    expect(await stored()).toBe(before + 10);

    const plain = new SoftAuthenticator({ counters: false });
    await register(await signUp("gus"), plain);
    for (let i = 0; i < 3; i++) expect((await login(plain, "gus")).r.status).toBe(200);
  });

  test("a passkey signs in its own account only; unknown credentials and bad parameters are refused", async () => {
    const other = new SoftAuthenticator();
    await register(await signUp("hal"), other);
    // Hal's passkey answering a challenge asked for fay.
    const o = await loginOptions({ username: "fay" });
    const cred = other.credentials[0]!;
    const forFay = await grant(await other.assert(cred, "localhost", o.body.challenge, ORIGIN), o.body.challenge_id);
    expect([forFay.status, forFay.body.error_description]).toEqual([401, "this passkey is not registered for this account"]);
    // A credential the server never saw.
    const stranger = new SoftAuthenticator();
    await stranger.create({ rp: { id: "localhost" }, user: { id: "AAAA" }, challenge: "AAAA" }, ORIGIN);
    expect((await login(stranger)).r.status).toBe(401);
    const d = await loginOptions();
    for (const params of <Record<string, string>[]>[
      { grant_type: "passkey" },
      { grant_type: "passkey", assertion: "{", challenge_id: d.body.challenge_id },
      { grant_type: "passkey", assertion: "{}", challenge_id: d.body.challenge_id },
    ]) {
      const r = await t.request("POST", "/user/accessToken", form(params));
      expect([r.status, r.body.error]).toEqual([400, "invalid_request"]);
    }
    expect((await loginOptions({ username: 7 })).status).toBe(400);
  });

  test("another node sharing the store answers a challenge this one gave", async () => {
    const other = await makeTestApp({ dir: t.dir });
    try {
      const o = await loginOptions({ username: "fay" });
      const r = await grant(await auth.get(o.body, ORIGIN), o.body.challenge_id, other);
      expect([r.status, r.body.service?.user?.username]).toEqual([200, "fay"]);
      expect((await grant(await auth.get(o.body, ORIGIN), o.body.challenge_id)).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe("what login options reveal", () => {
  test("a username with no passkey, known or not, gets the same shape: one decoy credential, the same at every ask", async () => {
    await signUp("ivy");
    const shape = (b: Record<string, unknown>) => ({
      keys: Object.keys(b).sort(),
      allow: (b.allowCredentials as Record<string, unknown>[]).map((c) => ({ keys: Object.keys(c).sort(), id: typeof c.id })),
    });
    const known = (await loginOptions({ username: "fay" })).body;
    const ivy = (await loginOptions({ username: "ivy" })).body;
    const nobody = (await loginOptions({ username: "nobody-at-all" })).body;
    expect(shape(ivy)).toEqual(shape(known));
    expect(shape(nobody)).toEqual(shape(known));
    expect(nobody.allowCredentials).toHaveLength(1);
    expect((await loginOptions({ username: "nobody-at-all" })).body.allowCredentials).toEqual(nobody.allowCredentials);
    expect(nobody.allowCredentials[0].id).not.toBe(ivy.allowCredentials[0].id);
  });
});

describe("list and removal", () => {
  test("the user lists and removes its passkeys; others cannot; a removed passkey no longer signs in", async () => {
    const jo = await signUp("jo");
    const auth = new SoftAuthenticator();
    const a = (await register(jo, auth, { name: "One" })).body.id;
    const b = (await register(jo, auth, { name: "Two" })).body.id;
    expect((await as(jo, "GET", "/user/passkeys")).body.passkeys.map((p: { name: string }) => p.name)).toEqual(["One", "Two"]);
    const kim = await signUp("kim");
    expect((await as(kim, "DELETE", `/user/passkeys/${a}`)).status).toBe(404);
    expect((await t.request("DELETE", `/user/passkeys/${a}`)).status).toBe(401);
    expect((await as(jo, "DELETE", `/user/passkeys/${a}`)).status).toBe(200);
    expect((await as(jo, "DELETE", `/user/passkeys/${a}`)).status).toBe(404);
    expect((await as(jo, "GET", "/user/passkeys")).body.passkeys.map((p: { id: string }) => p.id)).toEqual([b]);
    const o = await loginOptions();
    const removed = await grant(await auth.assert(auth.credentials[0]!, "localhost", o.body.challenge, ORIGIN), o.body.challenge_id);
    expect(removed.status).toBe(401);
    expect((await t.request("GET", "/user/passkeys")).status).toBe(401);
  });

  test("an admin lists and removes a user's passkeys", async () => {
    const lu = await signUp("lu");
    const id = (await register(lu, new SoftAuthenticator(), { name: "Key" })).body.id;
    const list = await t.admin("GET", "/users/development/user/lu/passkeys");
    expect(list.body).toEqual([{ id, name: "Key", created: expect.any(String), lastUsed: null }]);
    expect((await t.admin("GET", "/users/development/user/nobody/passkeys")).status).toBe(404);
    expect((await t.admin("DELETE", `/users/development/user/lu/passkeys/${id}`)).status).toBe(200);
    expect((await t.admin("DELETE", `/users/development/user/lu/passkeys/${id}`)).status).toBe(404);
    expect((await t.admin("GET", "/users/development/user/lu/passkeys")).body).toEqual([]);
  });

  test("on a schema without a user block /passkeys is an object's key", async () => {
    expect((await t.request("POST", "/note", { body: { note_id: "passkeys", text: "hi" } })).status).toBe(201);
    expect((await t.request("GET", "/note/passkeys")).body.text).toBe("hi");
    expect((await t.request("POST", "/note/passkeys/loginOptions", { body: {} })).status).toBe(404);
  });
});

describe("limits", () => {
  test("failed passkey logins count against the account's budget: 429 past it, even for a good assertion", async () => {
    const auth = new SoftAuthenticator();
    await register(await signUp("max"), auth);
    expect((await t.admin("PUT", "/settings/development", { rateLimits: { failedLoginsPerAccount: 3 } })).status).toBe(200);
    try {
      // A good login gives the budget back.
      expect((await login(auth, "max", { origin: "http://evil.example" })).r.status).toBe(401);
      expect((await login(auth, "max")).r.status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await login(auth, "max", { origin: "http://evil.example" })).r.status).toBe(401);
      const blocked = (await login(auth, "max")).r;
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
      // The password shares the budget.
      expect((await t.request("POST", "/user/accessToken", form({ username: "max", password: "max-pw" }))).status).toBe(429);
    } finally {
      await t.admin("PUT", "/settings/development", { rateLimits: { failedLoginsPerAccount: null } });
    }
  });

  test("every passkey endpoint counts per IP", async () => {
    const ned = await signUp("ned");
    peer = "203.0.113.9";
    expect((await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 4 } })).status).toBe(200);
    try {
      expect((await loginOptions()).status).toBe(200);
      expect((await as(ned, "POST", "/user/passkeys/registerOptions")).status).toBe(200);
      expect((await as(ned, "GET", "/user/passkeys")).status).toBe(200);
      expect((await as(ned, "POST", "/user/passkeys/register", {})).status).toBe(400);
      for (const r of [
        await loginOptions(),
        await as(ned, "POST", "/user/passkeys/registerOptions"),
        await as(ned, "GET", "/user/passkeys"),
        await as(ned, "DELETE", "/user/passkeys/x"),
      ])
        expect(r.status).toBe(429);
    } finally {
      await t.admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: null } });
      peer = "198.51.100.1";
    }
  });
});
