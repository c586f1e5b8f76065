// The client library - the module the server serves at /_sdk/burrow.js, loaded from a temp file - against the real
// server in process, its fetch routed to app.handle: the calls the browser/Node/Bun/Deno end-to-end test leaves out -
// sign-in with a mailed code, the second factor (mfa_required as a BurrowError, then loginWithMfa), a storage callback
// holding the tokens, a live subscription told `end` when its session ends and `reset` after a restore, and a
// NetworkError for a server that cannot be reached.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resetStatements } from "../../src/schema/change-log.ts";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { type GraphFake, startGraphFake } from "../helpers/social-fakes.ts";

// The served module is plain JavaScript (its declarations, /_sdk/burrow.d.ts, name DOM types this program lacks).
let sdk: any;
const moduleDir = mkdtempSync(join(tmpdir(), "burrow-sdk-client-"));

let t: TestApp;
let graph: GraphFake;
const URL_BASE = "http://localhost";
/** A fetch that hands each request to the server in process (the loopback peer, so bearer tokens pass). */
const inProcess = ((input: string | URL | Request, init?: RequestInit) =>
  t.app.handle(input instanceof Request ? new Request(input, init) : new Request(String(input), init))) as typeof fetch;
const client = (o: Record<string, unknown> = {}) =>
  sdk.connect({ url: URL_BASE, publicKey: KEYS.devPublic, version: 0, fetch: inProcess, eventSource: false, ...o });

async function codeFor(to: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mail = ((await t.admin("GET", "/outbox")).body as { to: string; text: string }[]).find((m) => m.to === to);
    if (mail) return /\b(\d{6})\b/.exec(mail.text)![1]!;
    await Bun.sleep(20);
  }
  throw new Error(`no mail to ${to}`);
}

beforeAll(async () => {
  t = await makeTestApp({ peer: () => "127.0.0.1" });
  const served = await t.app.handle(new Request(`${URL_BASE}/_sdk/burrow.js`));
  expect(served.status).toBe(200);
  writeFileSync(join(moduleDir, "burrow.mjs"), await served.text());
  sdk = await import(join(moduleDir, "burrow.mjs"));
  graph = startGraphFake("graph-secret", "4321");
  expect(
    (
      await t.admin("PUT", "/settings/development", {
        social: { social1: { appId: "4321", appSecret: "graph-secret", baseUrl: graph.url } },
      })
    ).status,
  ).toBe(200);
  const open = { create: "open", read: "open", update: "open", delete: "open" };
  expect((await t.admin("PUT", "/schemas/note", { fields: { title: { type: "string" } }, permissions: open })).status).toBe(201);
});
afterAll(async () => {
  graph.stop();
  await t.close();
  rmSync(moduleDir, { recursive: true, force: true });
});

describe("the client in process", () => {
  test("a mailed code signs in; the tokens live in the storage callback given", async () => {
    const store = new Map<string, string>();
    const b = client({
      storage: {
        get: (k: string) => store.get(k) ?? null,
        set: (k: string, v: string) => void store.set(k, v),
        remove: (k: string) => void store.delete(k),
      },
    });
    await b.users.signup({ username: "cody", password: "cody-password", email: "cody@example.com" });
    await b.users.requestCode("cody");
    const user = await b.users.loginWithCode({ username: "cody", code: await codeFor("cody@example.com") });
    expect(user.username).toBe("cody");
    expect(store.size).toBe(1);
    expect((await b.users.current()).username).toBe("cody");
    const wrong = await b.users.loginWithCode({ username: "cody", code: "000000" }).catch((e: any) => e);
    expect(wrong).toBeInstanceOf(sdk.BurrowError);
    expect(wrong.status).toBe(401);
  });

  test("a second factor: login throws mfa_required with the token; loginWithMfa finishes", async () => {
    const b = client({ tokenType: "bearer" });
    await b.users.signup({ username: "mfa_user", password: "mfa-password" });
    await b.users.login({ username: "mfa_user", password: "mfa-password" });
    const { secret } = (await b.request("POST", "/user/mfa/totp")).body as { secret: string };
    const code = (steps = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + steps * 30_000 });
    expect((await b.request("POST", "/user/mfa/totp/confirm", { body: { code: code() } })).status).toBe(200);
    await b.users.logout();
    const refused = await b.users.login({ username: "mfa_user", password: "mfa-password" }).catch((e: any) => e);
    expect(refused).toBeInstanceOf(sdk.BurrowError);
    const body = refused.body as { error: string; mfa_token: string };
    expect([refused.status, body.error]).toEqual([401, "mfa_required"]);
    const user = await b.users.loginWithMfa({ mfaToken: body.mfa_token, code: code(1) });
    expect(user.username).toBe("mfa_user");
    expect(await b.users.isLoggedIn()).toBe(true);
  });

  test("a live subscription hears creates, then `end` when its session ends", async () => {
    const b = client();
    await b.users.signup({ username: "lena", password: "lena-password" });
    await b.users.login({ username: "lena", password: "lena-password" });
    const heard: string[] = [];
    let ended = "";
    const off = b
      .schema("note")
      .subscribe(
        { where: { title: "hello" } },
        (e: { type: string; object: { title?: string } }) => heard.push(`${e.type}:${String(e.object.title)}`),
        {
          onEnd: (reason: string) => {
            ended = reason;
          },
        },
      );
    await off.ready;
    await b.schema("note").create({ title: "hello" });
    await b.schema("note").create({ title: "other" });
    for (let i = 0; i < 100 && heard.length === 0; i++) await Bun.sleep(20);
    expect(heard).toEqual(["create:hello"]);
    await b.users.logout();
    for (let i = 0; i < 150 && ended === ""; i++) await Bun.sleep(20);
    expect(ended).toContain("session");
    await off().catch(() => {});
  });

  test("a restore under a connected client: `reset` with its reason, and the subscription stays live", async () => {
    const b = client();
    const reasons: string[] = [];
    const heard: string[] = [];
    const off = b.schema("note").subscribe({ where: { title: "after reset" } }, (e: { type: string }) => heard.push(e.type), {
      onReset: (r: string) => reasons.push(r),
    });
    await off.ready;
    // What a restore writes into the environment's change log (on a shared libSQL store, while the nodes run).
    for (const st of resetStatements()) await t.burrow.envDbs.development.execute(st);
    for (let i = 0; i < 150 && reasons.length === 0; i++) await Bun.sleep(20);
    expect(reasons).toEqual([expect.stringContaining("restored from a backup")]);
    await b.schema("note").create({ title: "after reset" });
    for (let i = 0; i < 150 && heard.length === 0; i++) await Bun.sleep(20);
    expect(heard).toEqual(["create"]);
    await off();
  });

  test("a social network's token signs in (creating the user on the first time)", async () => {
    const b = client();
    graph.tokens.set("graph-token-1", { id: "70001", name: "Sam Graph", email: "sam@example.com" });
    const created = await b.users.loginWithToken("social1", { social1_at: "graph-token-1", create: true });
    expect(created.username).toBe("70001");
    expect((await b.users.current()).username).toBe("70001");
    await b.users.logout();
    const again = await b.users.loginWithToken("social1", { social1_at: "graph-token-1" });
    expect(again.username).toBe("70001");
    const refused = await b.users.loginWithToken("social1", { social1_at: "unknown-token" }).catch((e: any) => e);
    expect(refused).toBeInstanceOf(sdk.BurrowError);
    expect(refused.status).toBe(401);
  });

  test("a wrong clock: a MAC refused for its timestamp is signed again with the server's time", async () => {
    // Answers whose Date header is an hour ahead make the client sign an hour ahead; the server's refusal names its
    // own time, and the client retries with that.
    const statuses: number[] = [];
    const shifted = (async (input: string | URL | Request, init?: RequestInit) => {
      const r = await inProcess(input, init);
      statuses.push(r.status);
      const headers = new Headers(r.headers);
      headers.set("date", new Date(Date.now() + 3600_000).toUTCString());
      return new Response(r.body, { status: r.status, headers });
    }) as typeof fetch;
    const b = client({ fetch: shifted });
    await b.users.signup({ username: "clocky", password: "clocky-password" });
    await b.users.login({ username: "clocky", password: "clocky-password" });
    const note = await b.schema("note").create({ title: "on time" });
    expect(note.sm_owner).toBe("user/clocky");
    expect((await b.schema("note").get(note.note_id)).title).toBe("on time");
    // Signed calls went out an hour ahead, were refused for their timestamp, and were signed again with the time the
    // refusal named: each call still succeeded.
    expect(statuses.filter((x) => x === 401).length).toBeGreaterThan(0);
  });

  test("a server that cannot be reached is a NetworkError, not a BurrowError", async () => {
    const b = sdk.connect({ url: "http://127.0.0.1:9", publicKey: KEYS.devPublic, version: 0 });
    const e = await b
      .schema("note")
      .get("x")
      .catch((err: any) => err);
    expect(e).toBeInstanceOf(sdk.NetworkError);
    expect(e).not.toBeInstanceOf(sdk.BurrowError);
  });
});
