// HTTPS in front of Burrow: the built binary (--trusted-proxy 127.0.0.1) behind Caddy, HAProxy and nginx, each
// running the config shipped in deploy/ on loopback with TLS (tests/helpers/proxies.ts). Through each proxy, on
// raw TLS sockets so the exact header bytes are seen: the legacy login's cookie arrives under the exact name
// `Set-Cookie` (the original Android SDK's case-sensitive lookup) and with Secure; MAC-signed calls verify for the
// host and port the client addressed, with the port implied or explicit, whatever forwarded headers the client
// adds; the logout's logged-out cookie arrives as `Set-Cookie` too; plain HTTP is redirected to https.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { KEYS, tempDir } from "../helpers/app.ts";
import { DOMAIN, type Proxy as RunningProxy, selfSigned, startCaddy, startHaproxy, startNginx } from "../helpers/proxies.ts";
import { headerLines, type RawAnswer, rawExchange } from "../helpers/raw-http.ts";
import { macAuth } from "../helpers/sign.ts";
import { buildBinary, ROOT, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";

const dir = tempDir("burrow-proxy-");
const exe = join(dir, "burrow");
let server: ServerProcess;
const proxies = new Map<string, RunningProxy>();
/** The session token each proxy's login test got, for its logout test. */
const sessions = new Map<string, string>();

const DAY = "(Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const LOGIN_COOKIE = new RegExp(
  `^Set-Cookie: session_burrow=([A-Za-z0-9]{48}); Path=/; Expires=(${DAY}, \\d\\d ${MONTH} \\d{4} \\d\\d:\\d\\d:\\d\\d GMT); Max-Age=3600; Secure; HttpOnly; SameSite=Lax$`,
);
const LOGOUT_COOKIE =
  "Set-Cookie: session_burrow=logged:out; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Secure; HttpOnly; SameSite=Lax";

const install = (script: string) =>
  execFileSync("node", [join(ROOT, "scripts", script)], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;

// Up to 120 s: the first run may install Caddy and nginx with apt-get; afterwards everything starts in about 2 s.
beforeAll(async () => {
  const [caddy, haproxy, nginx] = ["install-caddy.mjs", "install-haproxy.mjs", "install-nginx.mjs"].map(install);
  buildBinary(exe);
  server = await startServerProcess([exe], {
    BURROW_DIR: join(dir, "data"),
    BURROW_TRUSTED_PROXY: "127.0.0.1",
    BURROW_DEV_PUBLIC_KEY: KEYS.devPublic,
    BURROW_DEV_PRIVATE_KEY: KEYS.devPrivate,
    BURROW_PROD_PUBLIC_KEY: KEYS.prodPublic,
    BURROW_PROD_PRIVATE_KEY: KEYS.prodPrivate,
    BURROW_LOG_LEVEL: "warn",
  });
  const upstream = new URL(server.url).host;
  const cert = selfSigned(DOMAIN);
  const started = await Promise.allSettled([
    startCaddy(caddy!, upstream),
    startHaproxy(haproxy!, upstream, cert),
    startNginx(nginx!, upstream, cert),
  ]);
  for (const s of started) if (s.status === "fulfilled") proxies.set(s.value.name, s.value);
  const failed = started.find((s) => s.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}, 120_000);

afterAll(async () => {
  await Promise.all([...proxies.values()].map((p) => p.stop().catch(() => {})));
  if (server) await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A development API call through `px` over TLS as a client of https://api.example.com (or `host`). */
function call(
  px: RunningProxy,
  method: string,
  target: string,
  opts: { host?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `Host: ${opts.host ?? DOMAIN}`,
    `X-Service-API-Key: ${KEYS.devPublic}`,
    "Accept: application/vnd.service+json; version=0",
  ];
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
  if (opts.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(opts.body)}`);
  return rawExchange(px.httpsPort, lines.join("\r\n"), { tls: { ca: px.ca(), servername: DOMAIN }, body: opts.body });
}

/** The one Set-Cookie line of an answer, as received. */
function setCookieLine(answer: RawAnswer): string {
  const lines = headerLines(answer, "set-cookie");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

for (const name of ["Caddy", "HAProxy", "nginx"]) {
  describe(`behind ${name}`, () => {
    const px = () => proxies.get(name)!;
    const username = `ann-${name.toLowerCase()}`;
    const password = `${name}-password-1`;

    test("the login's session cookie arrives as `Set-Cookie`, Secure", async () => {
      const created = await call(px(), "POST", "/user", {
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ username, password }),
      });
      expect(created.status).toBe(201);
      const before = Date.now();
      const login = await call(px(), "GET", `/user/login?${new URLSearchParams({ username, password })}`);
      const after = Date.now();
      expect(login.status).toBe(200);
      expect(JSON.parse(login.body).username).toBe(username);
      const line = setCookieLine(login);
      expect(line.slice(0, line.indexOf(":"))).toBe("Set-Cookie");
      expect(line).toMatch(LOGIN_COOKIE);
      const [, token, expires] = LOGIN_COOKIE.exec(line)!;
      const expiresAt = Date.parse(expires!);
      expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
      expect(expiresAt).toBeLessThanOrEqual(after + 3600_000);
      sessions.set(name, token!);
      // The cookie is a session through the proxy.
      const me = await call(px(), "GET", "/user/loggedInUser", { headers: { Cookie: `session_burrow=${token}` } });
      expect(me.status).toBe(200);
      expect(JSON.parse(me.body).username).toBe(username);
    }, 20_000);

    test("MAC-signed calls verify for the host and port the client addressed", async () => {
      const form = new URLSearchParams({ username, password, token_type: "mac" }).toString();
      const token = await call(px(), "POST", "/user/accessToken", {
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form,
      });
      expect(token.status).toBe(200);
      const creds = JSON.parse(token.body) as { access_token: string; mac_key: string };
      const path = "/user/loggedInUser";
      const signed = (port: number, host = DOMAIN) => macAuth(creds, "GET", path, { host, port });
      // https://api.example.com/...: the port is implied (443); the proxy's loopback port stands in for it.
      const implied = await call(px(), "GET", path, { headers: { Authorization: signed(443) } });
      expect(implied.status).toBe(200);
      expect(JSON.parse(implied.body).username).toBe(username);
      // https://api.example.com:<port>/...: the port named in Host reaches Burrow.
      const explicit = await call(px(), "GET", path, {
        host: `${DOMAIN}:${px().httpsPort}`,
        headers: { Authorization: signed(px().httpsPort) },
      });
      expect(explicit.status).toBe(200);
      // Forwarded headers a client makes up do not change what Burrow checks the signature against.
      const spoofed = await call(px(), "GET", path, {
        headers: {
          Authorization: signed(443),
          "X-Forwarded-Host": "evil.example.net:8443",
          "X-Forwarded-Port": "8443",
          "X-Forwarded-Proto": "http",
        },
      });
      expect(spoofed.status).toBe(200);
      // The signature covers the port: one made for another port is refused.
      const otherPort = await call(px(), "GET", path, { headers: { Authorization: signed(8443) } });
      expect(otherPort.status).toBe(401);
    }, 20_000);

    test("the logout's logged-out cookie arrives as `Set-Cookie`, Secure", async () => {
      const token = sessions.get(name);
      expect(token).toBeDefined();
      const logout = await call(px(), "GET", "/user/logout", { headers: { Cookie: `session_burrow=${token}` } });
      expect(logout.status).toBe(200);
      const line = setCookieLine(logout);
      expect(line.slice(0, line.indexOf(":"))).toBe("Set-Cookie");
      expect(line).toBe(LOGOUT_COOKIE);
      const after = await call(px(), "GET", "/user/loggedInUser", { headers: { Cookie: `session_burrow=${token}` } });
      expect(after.status).not.toBe(200);
    }, 20_000);

    test("plain HTTP is redirected to https", async () => {
      const r = await rawExchange(px().httpPort, `GET /user/login?username=x HTTP/1.1\r\nHost: ${DOMAIN}`);
      expect([301, 308]).toContain(r.status);
      expect(headerLines(r, "location")[0]).toMatch(/^location: https:\/\/api\.example\.com(:\d+)?\/user\/login\?username=x$/i);
    });
  });
}
