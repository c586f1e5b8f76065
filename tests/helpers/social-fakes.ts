// Real HTTP fakes of the social providers on loopback: a Graph-style network (tokens issued per app; debug_token
// inspects them for an app, /me checks the access token and appsecret_proof; /me/feed posts), an OAuth 1.0a
// network (verify_credentials and statuses/update check the three-legged HMAC-SHA1 signature, timestamp and
// nonce) and an OpenID Connect issuer (discovery, JWKS, and real RS256-signed ID tokens, with key rotation). Each
// counts its calls and can be switched to failing.

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

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

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
  /** The app the token was issued to (default: the fake's own app, `appId`). */
  appId?: string;
  /** When the token expires, Unix seconds (0: never; default: an hour from now). */
  expiresAt?: number;
  /** Members the token inspection answers instead of the true ones (a provider answering oddly). */
  inspection?: Record<string, unknown>;
}

export interface GraphFake extends Fake {
  /** access token -> the user it belongs to (and the app it was issued to) */
  tokens: Map<string, GraphUser>;
  posts: { user: string; message: string }[];
  /** The app the tests set up (social.social1.appId): tokens are issued to it unless they name another. */
  appId: string;
  /** Its secret: debug_token wants the app access token <appId>|<appSecret>; when set, /me wants its appsecret_proof. */
  appSecret: string | null;
  /** Other apps on the network, id -> secret. They do not require appsecret_proof, so /me takes their tokens with any. */
  apps: Map<string, string>;
  /** The query strings /me was called with (to check what was sent). */
  queries: URLSearchParams[];
  /** The query strings debug_token was called with. */
  inspections: URLSearchParams[];
  /** debug_token answers 503 while set (/me keeps working). */
  inspectionDown: boolean;
}

/**
 * The Graph-style network: /me (the token's user; appsecret_proof checked for the tests' app), /me/feed, and
 * debug_token, which, given a valid app access token, says which app a token was issued to, for which user, and
 * whether it is still valid; tokens of unknown or expired grants are inspected as invalid.
 */
export function startGraphFake(appSecret: string | null = null, appId = "1"): GraphFake {
  const fake: GraphFake = {
    url: "",
    calls: 0,
    mode: "up",
    tokens: new Map(),
    posts: [],
    appId,
    appSecret,
    apps: new Map(),
    queries: [],
    inspections: [],
    inspectionDown: false,
    stop: () => {},
  };
  const oauthError = (message: string, code: number) => json({ error: { message, type: "OAuthException", code } }, 400);
  const now = () => Math.floor(Date.now() / 1000);
  const expiresAt = (user: GraphUser) => user.expiresAt ?? now() + 3600;
  const expired = (user: GraphUser) => expiresAt(user) !== 0 && expiresAt(user) <= now();
  const userOf = (p: URLSearchParams): GraphUser | Response => {
    const token = p.get("access_token") ?? "";
    const user = fake.tokens.get(token);
    if (!user) return oauthError("Invalid OAuth access token.", 190);
    if (expired(user)) return oauthError("Error validating access token: Session has expired.", 190);
    if (
      (user.appId ?? fake.appId) === fake.appId &&
      fake.appSecret !== null &&
      p.get("appsecret_proof") !== createHmac("sha256", fake.appSecret).update(token).digest("hex")
    )
      return json(
        { error: { message: "Invalid appsecret_proof provided in the API argument", type: "GraphMethodException", code: 100 } },
        400,
      );
    return user;
  };
  /** The app an app access token (<id>|<secret>) authenticates, or null. */
  const appOf = (appToken: string): string | null => {
    const bar = appToken.indexOf("|");
    if (bar < 0) return null;
    const [id, secret] = [appToken.slice(0, bar), appToken.slice(bar + 1)];
    const known = id === fake.appId ? (fake.appSecret ?? "") : fake.apps.get(id);
    return known !== undefined && known === secret ? id : null;
  };
  const inspect = (p: URLSearchParams): Response => {
    fake.inspections.push(p);
    if (fake.inspectionDown) return new Response("inspection unavailable", { status: 503 });
    if (appOf(p.get("access_token") ?? "") === null) return oauthError("Invalid OAuth access token signature.", 190);
    const input = p.get("input_token");
    if (!input) return oauthError("(#100) The parameter input_token is required", 100);
    const user = fake.tokens.get(input);
    if (!user) return json({ data: { error: { code: 190, message: "Invalid OAuth access token." }, is_valid: false, scopes: [] } });
    const app = user.appId ?? fake.appId;
    const data: Record<string, unknown> = {
      app_id: app,
      type: "USER",
      application: `App ${app}`,
      data_access_expires_at: now() + 90 * 86_400,
      expires_at: expiresAt(user),
      is_valid: !expired(user),
      issued_at: now() - 60,
      scopes: ["public_profile", "email"],
      user_id: user.id,
      ...(expired(user) ? { error: { code: 190, message: "Error validating access token: Session has expired.", subcode: 463 } } : {}),
      ...user.inspection,
    };
    return json({ data });
  };
  serve(fake, async (req, url) => {
    if (req.method === "GET" && url.pathname === "/debug_token") return inspect(url.searchParams);
    if (req.method === "GET" && url.pathname === "/me") {
      fake.queries.push(url.searchParams);
      const user = userOf(url.searchParams);
      if (user instanceof Response) return user;
      const fields = (url.searchParams.get("fields") ?? "id,name").split(",");
      const all: Record<string, unknown> = {
        id: user.id,
        name: user.name,
        email: user.email,
        first_name: user.name.split(" ")[0],
        last_name: user.name.split(" ").slice(1).join(" "),
      };
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
  const fake: Social2Fake = {
    url: "",
    calls: 0,
    mode: "up",
    consumers: new Map(),
    tokens: new Map(),
    statuses: [],
    lastRefusal: "",
    stop: () => {},
  };
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
    const r = verifyOAuth1({
      header,
      consumerSecret,
      tokenSecret: token.secret,
      methods: [req.method],
      baseUris: [baseStringUri(url)],
      query: url.search.slice(1),
      formBody,
      now: Date.now(),
      windowSeconds: 300,
    });
    if (!r.ok) return refuse(r.reason === "signature" ? "bad signature" : `bad ${r.reason}`);
    seen.add(nonce);
    return token.user;
  };
  serve(
    fake,
    async (req, url) => {
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
    },
    "/1.1",
  );
  return fake;
}

export interface OidcIssuer extends Fake {
  issuer: string;
  jwksCalls: number;
  /** Serve the discovery document but fail the key set (503). */
  jwksDown: boolean;
  /** A signed ID token: iss, sub, aud, iat and exp (an hour) by default; claims override them. */
  idToken(
    claims: Record<string, unknown>,
    opts?: { expiresIn?: number | string; key?: "current" | "foreign"; alg?: string },
  ): Promise<string>;
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
      let jwt = new SignJWT({ iss: fake.issuer, ...rest })
        .setProtectedHeader({ alg: opts.alg ?? "RS256", kid })
        .setIssuedAt((iat as number | undefined) ?? now);
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
    if (path === "/.well-known/openid-configuration")
      return json({ issuer: fake.issuer, jwks_uri: `${fake.issuer}/jwks`, id_token_signing_alg_values_supported: ["RS256"] });
    if (path === "/jwks") {
      fake.jwksCalls++;
      return fake.jwksDown ? new Response("unavailable", { status: 503 }) : json({ keys: [jwk] });
    }
    return json({ error: "not found" }, 404);
  });
  fake.issuer = fake.url;
  return fake;
}
