// Real HTTP fakes of the social providers on loopback: a Graph-style network (/me checks the access token and
// appsecret_proof; /me/feed posts), an OAuth 1.0a network (verify_credentials and statuses/update check the
// three-legged HMAC-SHA1 signature, timestamp and nonce) and an OpenID Connect issuer (discovery, JWKS, and real
// RS256-signed ID tokens, with key rotation). Each counts its calls and can be switched to failing.

import { createHmac } from "node:crypto";
import { type JWK, type KeyObject, SignJWT, exportJWK, generateKeyPair } from "jose";
import { baseStringUri, parseOAuthHeader, verifyOAuth1 } from "../../src/auth/oauth1.ts";

type Mode = "up" | "down" | "garbage";

interface Fake {
  url: string;
  calls: number;
  mode: Mode;
  stop(): void;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** What a failing fake answers: a 503, or a 200 that is not JSON. */
function failing(mode: Mode): Response | null {
  if (mode === "down") return new Response("upstream unavailable", { status: 503 });
  if (mode === "garbage") return new Response("<html>not json</html>", { status: 200, headers: { "content-type": "text/html" } });
  return null;
}

/** Serve a fake on a free loopback port: counts calls, answers as failing while its mode says so. */
function serve(fake: Fake, handle: (req: Request, url: URL) => Response | Promise<Response>, basePath = ""): void {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      fake.calls++;
      return failing(fake.mode) ?? handle(req, new URL(req.url));
    },
  });
  fake.url = `http://127.0.0.1:${server.port}${basePath}`;
  fake.stop = () => void server.stop(true);
}

export interface GraphUser {
  id: string;
  name: string;
  email?: string;
}

export interface GraphFake extends Fake {
  /** access token -> the user it belongs to */
  tokens: Map<string, GraphUser>;
  posts: { user: string; message: string }[];
  /** When set, /me refuses a request without the right appsecret_proof. */
  appSecret: string | null;
  /** The query strings /me was called with (to check what was sent). */
  queries: URLSearchParams[];
}

export function startGraphFake(appSecret: string | null = null): GraphFake {
  const fake: GraphFake = { url: "", calls: 0, mode: "up", tokens: new Map(), posts: [], appSecret, queries: [], stop: () => {} };
  const oauthError = (message: string, code: number) => json({ error: { message, type: "OAuthException", code } }, 400);
  const userOf = (p: URLSearchParams): GraphUser | Response => {
    const token = p.get("access_token") ?? "";
    const user = fake.tokens.get(token);
    if (!user) return oauthError("Invalid OAuth access token.", 190);
    if (fake.appSecret !== null && p.get("appsecret_proof") !== createHmac("sha256", fake.appSecret).update(token).digest("hex"))
      return json({ error: { message: "Invalid appsecret_proof provided in the API argument", type: "GraphMethodException", code: 100 } }, 400);
    return user;
  };
  serve(fake, async (req, url) => {
    if (req.method === "GET" && url.pathname === "/me") {
      fake.queries.push(url.searchParams);
      const user = userOf(url.searchParams);
      if (user instanceof Response) return user;
      const fields = (url.searchParams.get("fields") ?? "id,name").split(",");
      const all: Record<string, unknown> = { ...user, first_name: user.name.split(" ")[0], last_name: user.name.split(" ").slice(1).join(" ") };
      return json(Object.fromEntries(fields.filter((f) => all[f] !== undefined).map((f) => [f, all[f]])));
    }
    if (req.method === "POST" && url.pathname === "/me/feed") {
      const form = new URLSearchParams(await req.text());
      const user = userOf(form);
      if (user instanceof Response) return user;
      fake.posts.push({ user: user.id, message: form.get("message") ?? "" });
      return json({ id: `${user.id}_${fake.posts.length}` });
    }
    return json({ error: { message: "Unknown path components", type: "OAuthException", code: 2500 } }, 400);
  });
  return fake;
}

export interface Social2User {
  id_str: string;
  screen_name: string;
  name: string;
}

export interface Social2Fake extends Fake {
  consumers: Map<string, string>;
  /** access token -> its secret and user */
  tokens: Map<string, { secret: string; user: Social2User }>;
  statuses: { user: string; status: string }[];
  /** Why the last request was refused. */
  lastRefusal: string;
}

/** The OAuth 1.0a network, its API under /1.1 (as the real one). */
export function startSocial2Fake(): Social2Fake {
  const fake: Social2Fake = { url: "", calls: 0, mode: "up", consumers: new Map(), tokens: new Map(), statuses: [], lastRefusal: "", stop: () => {} };
  const seen = new Set<string>();
  const refuse = (why: string) => {
    fake.lastRefusal = why;
    return json({ errors: [{ code: 32, message: "Could not authenticate you." }] }, 401);
  };
  const authenticate = (req: Request, formBody?: string): Social2User | Response => {
    const header = parseOAuthHeader(req.headers.get("authorization") ?? "");
    if (!header) return refuse("no OAuth header");
    const consumerSecret = fake.consumers.get(header.oauth_consumer_key ?? "");
    if (consumerSecret === undefined) return refuse("unknown consumer");
    const token = fake.tokens.get(header.oauth_token ?? "");
    if (!token) return refuse("unknown token");
    const nonce = `${header.oauth_consumer_key}|${header.oauth_nonce}|${header.oauth_timestamp}`;
    if (seen.has(nonce)) return refuse("replayed nonce");
    const url = new URL(req.url);
    const r = verifyOAuth1({ header, consumerSecret, tokenSecret: token.secret, methods: [req.method], baseUris: [baseStringUri(url)], query: url.search.slice(1), formBody, now: Date.now(), windowSeconds: 300 });
    if (!r.ok) return refuse(r.reason === "signature" ? "bad signature" : `bad ${r.reason}`);
    seen.add(nonce);
    return token.user;
  };
  serve(fake, async (req, url) => {
    if (req.method === "GET" && url.pathname === "/1.1/account/verify_credentials.json") {
      const user = authenticate(req);
      return user instanceof Response ? user : json({ ...user, id: Number(user.id_str) });
    }
    if (req.method === "POST" && url.pathname === "/1.1/statuses/update.json") {
      const body = await req.text();
      const user = authenticate(req, body);
      if (user instanceof Response) return user;
      const status = new URLSearchParams(body).get("status") ?? "";
      fake.statuses.push({ user: user.id_str, status });
      return json({ id_str: String(1000 + fake.statuses.length), text: status, user: { id_str: user.id_str } });
    }
    return json({ errors: [{ code: 34, message: "Sorry, that page does not exist." }] }, 404);
  }, "/1.1");
  return fake;
}

export interface OidcIssuer extends Fake {
  issuer: string;
  jwksCalls: number;
  /** Serve the discovery document but fail the key set (503). */
  jwksDown: boolean;
  /** A signed ID token: iss, sub, aud, iat and exp (an hour) by default; claims override them. */
  idToken(claims: Record<string, unknown>, opts?: { expiresIn?: number | string; key?: "current" | "foreign"; alg?: string }): Promise<string>;
  /** A new signing key with a new kid; the old one is no longer published. */
  rotate(): Promise<void>;
}

/** An OpenID Connect issuer: /.well-known/openid-configuration, /jwks, and ID tokens signed with its key. */
export async function startOidcIssuer(): Promise<OidcIssuer> {
  let kid = "key-1";
  let { privateKey, publicKey } = await generateKeyPair("RS256");
  const foreign = await generateKeyPair("RS256");
  let jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  const fake: OidcIssuer = {
    url: "",
    issuer: "",
    calls: 0,
    jwksCalls: 0,
    jwksDown: false,
    mode: "up",
    stop: () => {},
    async idToken(claims, opts = {}) {
      const key: KeyObject | CryptoKey = opts.key === "foreign" ? foreign.privateKey : privateKey;
      const now = Math.floor(Date.now() / 1000);
      const { exp, iat, ...rest } = claims;
      let jwt = new SignJWT({ iss: fake.issuer, ...rest }).setProtectedHeader({ alg: opts.alg ?? "RS256", kid }).setIssuedAt((iat as number | undefined) ?? now);
      jwt = exp !== undefined ? jwt.setExpirationTime(exp as number) : jwt.setExpirationTime(opts.expiresIn ?? "1h");
      return jwt.sign(key);
    },
    async rotate() {
      kid = `key-${Number(kid.slice(4)) + 1}`;
      ({ privateKey, publicKey } = await generateKeyPair("RS256"));
      jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
    },
  };
  serve(fake, (_req, url) => {
    const path = url.pathname;
    if (path === "/.well-known/openid-configuration") return json({ issuer: fake.issuer, jwks_uri: `${fake.issuer}/jwks`, id_token_signing_alg_values_supported: ["RS256"] });
    if (path === "/jwks") {
      fake.jwksCalls++;
      return fake.jwksDown ? new Response("unavailable", { status: 503 }) : json({ keys: [jwk] });
    }
    return json({ error: "not found" }, 404);
  });
  fake.issuer = fake.url;
  return fake;
}
