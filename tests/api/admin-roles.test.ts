// Admins with roles through the admin API (docs/api/admin.md#roles): every role against a representative set of routes, the
// guard in other route files, the admins API (last owner, logout, password changes revoking tokens, malformed
// bodies), expired tokens, the role migration of existing admins, and the test mail through a loopback SMTP server.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { openStore } from "../../src/db/open-store.ts";
import { rmSync } from "node:fs";
import { adminGuard } from "../../src/http/admin-guard.ts";
import { json } from "../../src/http/respond.ts";
import { ADMIN, makeTestApp, tempDir, type TestApp, type TestResponse } from "../helpers/app.ts";
import { SMTP_USER, smtpSettings, startSmtp } from "../helpers/smtp.ts";

let t: TestApp;
const EDITOR = { email: "editor@example.com", password: "editor password 1", role: "editor" };
const VIEWER = { email: "viewer@example.com", password: "viewer password 1", role: "viewer" };
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await makeTestApp();
  tokens.owner = await login(ADMIN);
  for (const a of [EDITOR, VIEWER]) {
    const r = await as(tokens.owner!, "POST", "/admins", a);
    expect(r.status).toBe(201);
    ids[a.role] = r.body.id;
    tokens[a.role] = await login(a);
  }
  ids.owner = (await as(tokens.owner!, "GET", "/me")).body.id;
});
afterAll(() => t.close());

async function login(a: { email: string; password: string }): Promise<string> {
  const r = await t.request("POST", "/_admin/api/login", { body: { email: a.email, password: a.password }, key: null, version: null });
  expect(r.status).toBe(200);
  return r.body.token;
}

function as(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
  return t.request(method, `/_admin/api${path}`, {
    body,
    key: null,
    version: null,
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
}

function raw(token: string, method: string, path: string, text: string): Promise<TestResponse> {
  return t.request(method, `/_admin/api${path}`, {
    raw: text,
    key: null,
    version: null,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
}

describe("roles against the admin API", () => {
  // [method, path, body, status as owner, as editor, as viewer]
  const MATRIX: [string, string, unknown, number, number, number][] = [
    ["GET", "/status", undefined, 200, 200, 200],
    ["GET", "/schemas", undefined, 200, 200, 200],
    ["GET", "/schemas/user", undefined, 200, 200, 200],
    ["GET", "/deploys", undefined, 200, 200, 200],
    ["GET", "/me", undefined, 200, 200, 200],
    ["HEAD", "/status", undefined, 200, 200, 200],
    ["PUT", "/schemas/note_ROLE", { fields: { text: { type: "string" } } }, 201, 201, 403],
    ["DELETE", "/schemas/ghost", undefined, 404, 404, 403],
    ["POST", "/deploy", {}, 200, 200, 403],
    ["PUT", "/code", undefined, 400, 400, 403],
    ["GET", "/outbox", undefined, 200, 200, 403],
    ["GET", "/keys", undefined, 200, 403, 403],
    ["HEAD", "/keys", undefined, 200, 403, 403],
    ["GET", "/settings/production", undefined, 200, 403, 403],
    ["PUT", "/settings/development", {}, 200, 403, 403],
    ["GET", "/admins", undefined, 200, 403, 403],
    ["POST", "/admins", { email: "new-ROLE@example.com", password: "long enough", role: "viewer" }, 201, 403, 403],
    ["PUT", "/admins/nope", { role: "viewer" }, 404, 403, 403],
    ["DELETE", "/admins/nope", undefined, 404, 403, 403],
    ["POST", "/mail/test", { env: "development", to: "someone@example.com" }, 200, 403, 403],
    ["PUT", "/users/development/user/nobody/password", { password: "x" }, 404, 404, 403],
    ["DELETE", "/users/development/user/nobody/sessions", undefined, 404, 404, 403],
    ["GET", "/users/development/user/nobody/social", undefined, 404, 404, 404],
    ["DELETE", "/users/development/user/nobody/social/social1", undefined, 404, 404, 403],
  ];
  for (const [method, path, body, ...statuses] of MATRIX)
    test(`${method} ${path}: owner ${statuses[0]}, editor ${statuses[1]}, viewer ${statuses[2]}`, async () => {
      for (const [i, role] of ["owner", "editor", "viewer"].entries()) {
        const b = body === undefined ? undefined : JSON.parse(JSON.stringify(body).replaceAll("ROLE", role));
        const r = await as(tokens[role]!, method, path.replaceAll("ROLE", role), b);
        expect([role, r.status]).toEqual([role, statuses[i]!]);
        if (r.status === 403) {
          const need = path.match(/^\/(keys|settings|admins|mail)/) ? "owner" : "editor";
          if (method !== "HEAD")
            expect(r.body).toEqual({
              error: `this needs the ${need} role; ${role}@example.com is ${role === "editor" ? "an" : "a"} ${role}`,
            });
        }
      }
    });

  test("no token or a forged one is 401 everywhere, also on routes of the other files", async () => {
    for (const path of ["/status", "/keys", "/me", "/admins", "/users/development/user/x/social"]) {
      expect((await t.request("GET", `/_admin/api${path}`, { key: null, version: null })).status).toBe(401);
      expect((await as("forged", "GET", path)).status).toBe(401);
    }
    expect((await as("forged", "POST", "/logout")).status).toBe(401);
  });

  test("every admin route declares its role: each one the app serves (but login) is 401 without a token", async () => {
    const open = new Set(["POST /_admin/api/login", "GET /_admin/api/openapi.json"]);
    const routes = t.app.routes.filter((r) => r.path.startsWith("/_admin/api/") && !open.has(`${r.method} ${r.path}`));
    expect(routes.length).toBeGreaterThan(40);
    for (const r of routes) {
      const path = r.path.replace(/:[a-z]+/gi, "x");
      const res = await t.request(r.method, path, {
        key: null,
        version: null,
        headers: { "content-type": "application/json" },
        raw: r.method === "GET" ? undefined : "{}",
      });
      expect([r.method, r.path, res.status]).toEqual([r.method, r.path, 401]);
    }
  });

  test("a method override is judged as the method it becomes", async () => {
    await as(tokens.owner!, "PUT", "/schemas/victim", { fields: { a: { type: "string" } } });
    const r = await as(tokens.viewer!, "GET", "/schemas/victim", undefined, { "x-http-method-override": "DELETE" });
    expect(r.status).toBe(403);
    expect((await as(tokens.owner!, "GET", "/schemas/victim")).status).toBe(200);
  });

  test("a path spelled differently reaches no owner-only route", async () => {
    for (const path of ["/%6beys", "/keys/", "//keys", "/KEYS"])
      expect([path, (await as(tokens.viewer!, "GET", path)).status]).not.toEqual([path, 200]);
  });

  test("a viewer may read data through the admin user routes but not change it", async () => {
    await t.request("POST", "/user", { body: { username: "ann", password: "ann password" } });
    expect((await as(tokens.viewer!, "GET", "/users/development/user/ann/social")).status).toBe(200);
    expect((await as(tokens.viewer!, "PUT", "/users/development/user/ann/password", { password: "stolen" })).status).toBe(403);
    expect((await as(tokens.viewer!, "DELETE", "/users/development/user/ann/sessions")).status).toBe(403);
  });
});

describe("the guard in another route file", () => {
  test("routes that declare a role are guarded, in every instance that uses it; routes that declare none are not", async () => {
    const burrow = t.burrow;
    const things = new Elysia({ prefix: "/_admin/api/things" })
      .get("/open", () => json({ open: true }))
      .use(adminGuard(burrow))
      .get("/", ({ admin }) => json({ who: admin.email, role: admin.role }), { role: "viewer" })
      .post("/", ({ admin }) => json({ wrote: admin.email }), { role: "editor" });
    const others = new Elysia({ prefix: "/_admin/api/others" })
      .use(adminGuard(burrow))
      .delete("/:id", ({ params }) => json({ deleted: params.id }), { role: "editor" });
    const neighbour = new Elysia().get("/_admin/api/neighbour", () => json({ free: true }));
    const app = new Elysia().use(things).use(others).use(neighbour);
    const call = async (method: string, path: string, token?: string) => {
      const r = await app.handle(
        new Request(`http://localhost/_admin/api${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} }),
      );
      return { status: r.status, body: await r.json().catch(() => null) };
    };
    expect((await call("GET", "/things")).status).not.toBe(200);
    expect(await call("GET", "/things", tokens.viewer)).toEqual({ status: 200, body: { who: VIEWER.email, role: "viewer" } });
    expect((await call("POST", "/things", tokens.viewer)).status).not.toBe(200);
    expect(await call("POST", "/things", tokens.editor)).toEqual({ status: 200, body: { wrote: EDITOR.email } });
    expect((await call("DELETE", "/others/1")).status).not.toBe(200);
    expect((await call("DELETE", "/others/1", tokens.viewer)).status).not.toBe(200);
    expect(await call("DELETE", "/others/1", tokens.editor)).toEqual({ status: 200, body: { deleted: "1" } });
    expect(await call("GET", "/things/open")).toEqual({ status: 200, body: { open: true } });
    expect(await call("GET", "/neighbour")).toEqual({ status: 200, body: { free: true } });
  });
});

describe("admins API", () => {
  test("me names the admin, its role and the token's expiry (12 hours)", async () => {
    for (const role of ["owner", "editor", "viewer"]) {
      const r = await as(tokens[role]!, "GET", "/me");
      expect(r.body).toEqual({
        id: ids[role],
        email: role === "owner" ? ADMIN.email : `${role}@example.com`,
        role,
        expiresAt: expect.any(String),
      });
      const left = Date.parse(r.body.expiresAt) - Date.now();
      expect(left).toBeGreaterThan(11.9 * 3600_000);
      expect(left).toBeLessThanOrEqual(12 * 3600_000);
    }
  });

  test("the list has every admin with ISO times and no hashes", async () => {
    const r = await as(tokens.owner!, "GET", "/admins");
    expect(r.status).toBe(200);
    const byEmail = Object.fromEntries(r.body.map((a: any) => [a.email, a]));
    expect(byEmail[ADMIN.email]).toEqual({
      id: ids.owner,
      email: ADMIN.email,
      role: "owner",
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updated: expect.any(String),
    });
    expect(byEmail[EDITOR.email].role).toBe("editor");
    expect(r.text).not.toContain("argon2");
    expect(r.text).not.toContain("password");
  });

  test("bad bodies are 400 with a clear message, a taken email 409", async () => {
    const good = { email: "x@example.com", password: "long enough", role: "viewer" };
    const cases: [unknown, string][] = [
      [{ ...good, email: "not an email" }, "email must be an email address"],
      [{ ...good, email: `${"a".repeat(250)}@example.com` }, "email must be an email address"],
      [{ ...good, password: "short" }, "password must be 8 to 1024 characters"],
      [{ ...good, password: "p".repeat(1025) }, "password must be 8 to 1024 characters"],
      [{ ...good, role: "god" }, "role"],
      [{ ...good, role: "Owner" }, "role"],
      [{ ...good, role: null }, "body.role"],
      [{ ...good, email: 1 }, "body.email: expected a string"],
      [{ ...good, password: 12345678 }, "body.password: expected a string"],
      [{ ...good, admin: true }, "body.admin: unknown member"],
      [{ email: good.email, password: good.password }, "body.role: required"],
      [[good], "body"],
      ["x", "body"],
    ];
    for (const [body, msg] of cases) {
      const r = await as(tokens.owner!, "POST", "/admins", body);
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.error).toContain(msg);
    }
    const proto = await raw(
      tokens.owner!,
      "POST",
      "/admins",
      '{"email": "p@example.com", "password": "long enough", "role": "viewer", "__proto__": {"role": "owner"}}',
    );
    expect(proto.status).toBe(400);
    expect(proto.body.error).toContain("unknown member");
    const protoOnly = await raw(
      tokens.owner!,
      "POST",
      "/admins",
      '{"__proto__": {"email": "p@example.com", "password": "long enough", "role": "owner"}}',
    );
    expect(protoOnly.status).toBe(400);
    expect(({} as any).role).toBeUndefined();
    expect((await raw(tokens.owner!, "POST", "/admins", "{not json")).status).toBe(400);
    expect((await raw(tokens.owner!, "POST", "/admins", "")).status).toBe(400);
    const huge = await as(tokens.owner!, "POST", "/admins", { ...good, password: "p".repeat(5 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect((await as(tokens.owner!, "GET", "/admins")).body.map((a: any) => a.email)).not.toContain("p@example.com");

    const taken = await as(tokens.owner!, "POST", "/admins", { ...good, email: "EDITOR@example.com" });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe("an admin with email editor@example.com already exists");

    for (const [body, msg] of [
      [{}, "send role, password or both"],
      [{ role: "boss" }, "role"],
      [{ password: "short" }, "password must be"],
      [{ email: "a@b.c" }, "unknown member"],
      [{ role: ["owner"] }, "body.role"],
    ] as [unknown, string][]) {
      const r = await as(tokens.owner!, "PUT", `/admins/${ids.viewer}`, body);
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.error).toContain(msg);
    }
    expect((await as(tokens.viewer!, "GET", "/me")).body.role).toBe("viewer");
  });

  test("a role change applies to the admin's current tokens at once", async () => {
    const a = { email: "flip@example.com", password: "flip password", role: "viewer" };
    const made = await as(tokens.owner!, "POST", "/admins", a);
    const token = await login(a);
    expect((await as(token, "PUT", "/schemas/flip", { fields: {} })).status).toBe(403);
    const r = await as(tokens.owner!, "PUT", `/admins/${made.body.id}`, { role: "editor" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: made.body.id, email: a.email, role: "editor" });
    expect((await as(token, "PUT", "/schemas/flip", { fields: {} })).status).toBe(201);
    expect((await as(token, "GET", "/keys")).status).toBe(403);
  });

  test("the last owner can be neither removed nor demoted", async () => {
    const demote = await as(tokens.owner!, "PUT", `/admins/${ids.owner}`, { role: "editor" });
    expect(demote.status).toBe(409);
    expect(demote.body.error).toBe(`${ADMIN.email} is the last owner and cannot become an editor: make another admin an owner first`);
    const remove = await as(tokens.owner!, "DELETE", `/admins/${ids.owner}`);
    expect(remove.status).toBe(409);
    expect(remove.body.error).toBe(`${ADMIN.email} is the last owner and cannot be removed: make another admin an owner first`);
    expect((await as(tokens.owner!, "PUT", `/admins/${ids.owner}`, { role: "owner" })).status).toBe(200);

    // With a second owner, the first may step down; then the second is the last.
    const second = { email: "second@example.com", password: "second owner", role: "owner" };
    const made = await as(tokens.owner!, "POST", "/admins", second);
    const secondToken = await login(second);
    expect((await as(tokens.owner!, "PUT", `/admins/${ids.owner}`, { role: "viewer" })).status).toBe(200);
    expect((await as(tokens.owner!, "GET", "/admins")).status).toBe(403);
    expect((await as(secondToken, "DELETE", `/admins/${made.body.id}`)).status).toBe(409);
    expect((await as(secondToken, "PUT", `/admins/${made.body.id}`, { role: "viewer" })).status).toBe(409);
    // Back as before: the first is an owner again, and the second goes.
    expect((await as(secondToken, "PUT", `/admins/${ids.owner}`, { role: "owner" })).status).toBe(200);
    expect((await as(tokens.owner!, "DELETE", `/admins/${made.body.id}`)).status).toBe(200);
    expect((await as(secondToken, "GET", "/me")).status).toBe(401);
    expect((await as(tokens.owner!, "DELETE", `/admins/${made.body.id}`)).status).toBe(404);
    expect((await as(tokens.owner!, "GET", "/admins")).body.filter((a: any) => a.role === "owner").map((a: any) => a.email)).toEqual([
      ADMIN.email,
    ]);
  });

  test("logout ends that token only", async () => {
    const a = { email: "out@example.com", password: "out password", role: "viewer" };
    await as(tokens.owner!, "POST", "/admins", a);
    const one = await login(a);
    const two = await login(a);
    const r = await as(one, "POST", "/logout");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({});
    expect((await as(one, "GET", "/me")).status).toBe(401);
    expect((await as(one, "POST", "/logout")).status).toBe(401);
    expect((await as(two, "GET", "/me")).status).toBe(200);
  });

  test("a new password revokes the admin's other tokens; its own change keeps the caller signed in", async () => {
    const a = { email: "pw@example.com", password: "first password", role: "editor" };
    const made = await as(tokens.owner!, "POST", "/admins", a);
    const [one, two] = [await login(a), await login(a)];
    // Set by an owner: every token of the admin stops working.
    expect((await as(tokens.owner!, "PUT", `/admins/${made.body.id}`, { password: "second password" })).status).toBe(200);
    expect((await as(one, "GET", "/me")).status).toBe(401);
    expect((await as(two, "GET", "/me")).status).toBe(401);
    expect(
      (await t.request("POST", "/_admin/api/login", { body: { email: a.email, password: a.password }, key: null, version: null })).status,
    ).toBe(401);
    // Owners changing their own password stay signed in with this token; their others end.
    const ownerOther = await login(ADMIN);
    const r = await as(tokens.owner!, "PUT", `/admins/${ids.owner}`, { password: "a new owner password" });
    expect(r.status).toBe(200);
    expect((await as(tokens.owner!, "GET", "/me")).status).toBe(200);
    expect((await as(ownerOther, "GET", "/me")).status).toBe(401);
    expect((await as(tokens.owner!, "PUT", `/admins/${ids.owner}`, { password: ADMIN.password })).status).toBe(200);
    // A role change alone leaves tokens alone.
    const three = await login({ email: a.email, password: "second password" });
    expect((await as(tokens.owner!, "PUT", `/admins/${made.body.id}`, { role: "viewer" })).status).toBe(200);
    expect((await as(three, "GET", "/me")).status).toBe(200);
  });

  test("an expired token is 401", async () => {
    const token = "expired-token-for-the-test";
    const digest = new Bun.CryptoHasher("sha256").update(token).digest("hex");
    await t.burrow.system.execute({
      sql: "INSERT INTO admin_tokens (token_hash, admin_id, expires) VALUES (?, ?, ?)",
      args: [digest, ids.owner!, Date.now() - 1],
    });
    const r = await as(token, "GET", "/me");
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toContain("Bearer");
    await t.burrow.system.execute({ sql: "UPDATE admin_tokens SET expires = ? WHERE token_hash = ?", args: [Date.now() + 60_000, digest] });
    expect((await as(token, "GET", "/me")).status).toBe(200);
  });

  test("unknown and odd ids are 404", async () => {
    for (const id of ["nope", "x".repeat(500), "%2e%2e", "' OR 1=1 --"]) {
      const path = `/admins/${encodeURIComponent(id)}`;
      expect([id, (await as(tokens.owner!, "PUT", path, { role: "viewer" })).status]).toEqual([id, 404]);
      expect([id, (await as(tokens.owner!, "DELETE", path)).status]).toEqual([id, 404]);
    }
  });
});

describe("existing admins", () => {
  test("admins made before roles become owners", async () => {
    const dir = tempDir();
    try {
      const first = await makeTestApp({ dir });
      const location = first.burrow.config.store;
      await first.close();
      // Back to the schema before roles, as an older Burrow left it (on whichever store the suite runs).
      const store = await openStore(location);
      await store.system.executeMultiple(
        "DROP INDEX admin_tokens_by_admin; ALTER TABLE admins DROP COLUMN role; UPDATE schema_version SET version = 2;",
      );
      store.close();
      const second = await makeTestApp({ dir, env: { BURROW_ADMIN_EMAIL: "", BURROW_ADMIN_PASSWORD: "" } });
      expect((await second.burrow.admins.list()).map((a) => [a.email, a.role])).toEqual([[ADMIN.email, "owner"]]);
      expect((await second.admin("GET", "/me")).body.role).toBe("owner");
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("test mail", () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(() => smtp.stop());

  test("without an SMTP host it lands in the outbox", async () => {
    const r = await as(tokens.owner!, "POST", "/mail/test", { env: "production", to: "ops@example.com" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ sent: true, via: "outbox" });
    const box = await t.burrow.mailer.outbox({ env: "production", limit: 1 });
    expect(box[0]).toMatchObject({ to: "ops@example.com", via: "outbox" });
    expect(box[0]!.subject).toContain("test mail");
    expect(box[0]!.text).toContain(ADMIN.email);
  });

  test("through SMTP when a host is set; a refused login is 502 with the server's error and no password", async () => {
    expect((await as(tokens.owner!, "PUT", "/settings/development", { smtp: smtpSettings(smtp.port) })).status).toBe(200);
    const r = await as(tokens.owner!, "POST", "/mail/test", { env: "development", to: "ops@example.com" });
    expect(r.body).toEqual({ sent: true, via: "smtp" });
    expect(smtp.messages.at(-1)).toMatchObject({ to: ["ops@example.com"], user: SMTP_USER });
    expect(smtp.messages.at(-1)!.subject).toContain("test mail");

    const wrong = "wr0ng-secret-pa55";
    await as(tokens.owner!, "PUT", "/settings/development", { smtp: { password: wrong } });
    const failed = await as(tokens.owner!, "POST", "/mail/test", { env: "development", to: "ops@example.com" });
    expect(failed.status).toBe(502);
    expect(failed.body.error).toStartWith("the test mail could not be sent: EAUTH");
    expect(failed.body.error).toContain("Invalid username or password");
    expect(failed.text).not.toContain(wrong);
    expect(failed.text).not.toContain(Buffer.from(wrong).toString("base64"));

    await as(tokens.owner!, "PUT", "/settings/development", { smtp: { host: "127.0.0.1", port: 1, user: "", password: null } });
    const down = await as(tokens.owner!, "POST", "/mail/test", { env: "development", to: "ops@example.com" });
    expect(down.status).toBe(502);
    expect(down.body.error).toContain("ECONNREFUSED");
    await as(tokens.owner!, "PUT", "/settings/development", { smtp: { host: "" } });
  });

  test("bad bodies are 400", async () => {
    const cases: [unknown, string][] = [
      [{ env: "staging", to: "a@b.c" }, "env must be development or production"],
      [{ env: "development", to: "not an address" }, "recipient"],
      [{ env: "development", to: "a@b.c, c@d.e" }, "recipient"],
      [{ env: "development", to: "a@b.c\r\nBcc: x@y.z" }, "recipient"],
      [{ env: "development" }, "body.to: required"],
      [{ env: "development", to: "a@b.c", subject: "hi" }, "body.subject: unknown member"],
      [{ env: 1, to: "a@b.c" }, "body.env"],
    ];
    for (const [body, msg] of cases) {
      const r = await as(tokens.owner!, "POST", "/mail/test", body);
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.error).toContain(msg);
    }
  });
});
