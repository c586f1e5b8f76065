// Passkeys in a real browser against the built binary: Chromium's virtual authenticator (CDP WebAuthn domain,
// CTAP2, a platform authenticator with resident keys and user verification) registers a passkey from a page of the
// server's own origin (http://localhost is a secure context; rpId "localhost" and the origin are set through the
// admin settings API), then signs in with it by username and as a discoverable credential; the token responses,
// the counter and the user's passkey list are checked. Then an admin removes it on the console's user screen, and
// the authenticator's credential no longer signs in.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type CDPSession, type Page, chromium } from "playwright-core";
import { tempDir } from "../helpers/app.ts";
import { CHROMIUM_ARGS, chromiumPath } from "../helpers/chromium.ts";
import { buildBinary, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";

const dir = tempDir("burrow-passkeys-e2e-");
const exe = join(dir, "burrow");
const ADMIN = { email: "owner@example.com", password: "owner password 1" };
const KEY = "dev-public-key-passkeys";

let server: ServerProcess;
let origin: string;
let browser: Browser;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
const pageErrors: string[] = [];

/** The browser's side, run in the page: the API calls and navigator.credentials, as a web app would make them. */
const FLOW = `async ({ key, username, password }) => {
  const api = async (path, body, headers = {}) => {
    const r = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { "x-service-api-key": key, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };
  const out = {};
  out.password = await api("/user/accessToken", { username, password, token_type: "bearer" });
  const signed = { authorization: "Bearer " + out.password.body.access_token };
  out.registerOptions = await api("/user/passkeys/registerOptions", {}, signed);
  const created = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(out.registerOptions.body) });
  out.register = await api("/user/passkeys/register", { ...created.toJSON(), name: "Chromium" }, signed);
  const login = async (who) => {
    const options = await api("/user/passkeys/loginOptions", who === undefined ? {} : { username: who });
    const { challenge_id, ...publicKey } = options.body;
    const assertion = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) });
    const token = await api("/user/accessToken", { grant_type: "passkey", assertion: JSON.stringify(assertion.toJSON()), challenge_id, token_type: "bearer" });
    return { options, token };
  };
  out.byName = await login(username);
  out.discoverable = await login(undefined);
  out.list = await api("/user/passkeys", undefined, { authorization: "Bearer " + out.discoverable.token.body.access_token });
  return out;
}`;

/** One discoverable login in the page: the accessToken answer. */
const LOGIN = `async ({ key }) => {
  const headers = { "x-service-api-key": key, "content-type": "application/json" };
  const options = await (await fetch("/user/passkeys/loginOptions", { method: "POST", headers, body: "{}" })).json();
  const { challenge_id, ...publicKey } = options;
  const assertion = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) });
  const body = JSON.stringify({ grant_type: "passkey", assertion: JSON.stringify(assertion.toJSON()), challenge_id });
  const r = await fetch("/user/accessToken", { method: "POST", headers, body });
  return { status: r.status, body: await r.json() };
}`;

beforeAll(async () => {
  buildBinary(exe);
  server = await startServerProcess([exe], {
    BURROW_DIR: join(dir, "data"),
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_DEV_PUBLIC_KEY: KEY,
    BURROW_LOG_LEVEL: "warn",
  });
  // WebAuthn takes "localhost" as a relying party id (an IP address is none): the page is served under that name.
  origin = `http://localhost:${new URL(server.url).port}`;
  browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.setDefaultTimeout(20_000);
  cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  ({ authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) expect(await server.stop()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
  expect(pageErrors).toEqual([]);
});

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const login = await fetch(`${server.url}/_admin/api/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  const { token } = (await login.json()) as { token: string };
  const r = await fetch(`${server.url}/_admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

test("a passkey registered and used in Chromium through its virtual authenticator", async () => {
  const set = await admin("PUT", "/settings/development", { auth: { passkeys: { rpId: "localhost", origins: [origin] } } });
  expect(set.status).toBe(200);
  const created = await fetch(`${server.url}/user`, {
    method: "POST",
    headers: { "x-service-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify({ username: "pia", password: "pia password" }),
  });
  expect(created.status).toBe(201);

  await page.goto(`${origin}/_health`);
  expect(await page.evaluate("window.isSecureContext")).toBe(true);
  const out = (await page.evaluate(`(${FLOW})(${JSON.stringify({ key: KEY, username: "pia", password: "pia password" })})`)) as any;

  expect(out.password.status).toBe(200);
  expect(out.registerOptions.body.rp.id).toBe("localhost");
  expect([out.register.status, out.register.body.name]).toEqual([201, "Chromium"]);
  const id = out.register.body.id as string;

  expect(out.byName.options.body.allowCredentials.map((c: { id: string }) => c.id)).toEqual([id]);
  expect(out.discoverable.options.body.allowCredentials).toEqual([]);
  for (const login of [out.byName, out.discoverable]) {
    expect(login.token.status).toBe(200);
    expect([login.token.body.token_type, login.token.body.service.user.username]).toEqual(["bearer", "pia"]);
    expect(login.token.body.access_token).toBeString();
    expect(login.token.body.refresh_token).toBeString();
  }
  expect(out.list.status).toBe(200);
  expect(out.list.body.passkeys).toEqual([{ id, name: "Chromium", created: expect.any(String), lastUsed: expect.any(String) }]);

  // The authenticator holds one resident credential for localhost, whose counter went up with each use.
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  expect(credentials.map((c) => [c.rpId, c.isResidentCredential])).toEqual([["localhost", true]]);
  expect(credentials[0]!.signCount).toBeGreaterThanOrEqual(2);
  expect(Buffer.from(credentials[0]!.credentialId, "base64").toString("base64url")).toBe(id);
  // The admin API sees it too.
  const listed = await admin("GET", "/users/development/user/pia/passkeys");
  expect(listed.body.map((p: { id: string }) => p.id)).toEqual([id]);
}, 60_000);

test("the client library signs in with the passkey and keeps the tokens in localStorage", async () => {
  const out = (await page.evaluate(`(async () => {
    const { connect } = await import("/_sdk/burrow.js");
    const b = connect({ url: location.origin, publicKey: ${JSON.stringify(KEY)}, version: 0, storage: "local" });
    const user = await b.users.loginWithPasskey({ username: "pia" });
    // A second client on the same store (another tab, a reload) is signed in too.
    const again = connect({ url: location.origin, publicKey: ${JSON.stringify(KEY)}, version: 0, storage: "local" });
    const current = await again.users.current();
    const stored = () => Object.keys(localStorage).filter((k) => k.startsWith("burrow:")).length;
    const before = stored();
    await again.users.logout();
    return { user: user.username, current: current.username, stored: before, after: stored() };
  })()`)) as { user: string; current: string; stored: number; after: number };
  // The tokens were in localStorage, and a logout took them out.
  expect(out).toEqual({ user: "pia", current: "pia", stored: 1, after: 0 });
}, 60_000);

test("an admin removes the passkey on the console's user screen; it no longer signs in", async () => {
  await page.goto(`${origin}/_admin/`);
  await page.getByPlaceholder("Email").fill(ADMIN.email);
  await page.getByPlaceholder("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Screens" }).waitFor();
  await page.goto(`${origin}/_admin/#/users/user/pia`);
  await page.reload();
  const table = page.getByRole("table", { name: "Passkeys" });
  await table.getByRole("cell", { name: "Chromium" }).waitFor();
  expect(await table.getByRole("row").count()).toBe(2);
  await table.getByRole("button", { name: "Remove" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
  await table.waitFor({ state: "detached" });
  expect((await admin("GET", "/users/development/user/pia/passkeys")).body).toEqual([]);

  // The authenticator still holds the credential, but the server no longer knows it.
  await page.goto(`${origin}/_health`);
  const refused = (await page.evaluate(`(${LOGIN})(${JSON.stringify({ key: KEY })})`)) as { status: number; body: any };
  expect([refused.status, refused.body.error]).toEqual([401, "invalid_grant"]);
}, 60_000);
