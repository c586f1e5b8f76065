// Social sign-in end to end through the API, against real HTTP fakes of each provider on loopback: Social network
// 1 (Graph /me with appsecret_proof), Social network 2 (verify_credentials checking the OAuth 1.0a signature),
// the aggregator's signed user, and an OpenID Connect issuer signing real ID tokens. Both spellings of every
// endpoint, parameters from the query, a form or JSON, and the ugly cases: bad tokens, providers down, replays,
// stale signatures, wrong audiences, linking what another user holds, unlinking the last way to log in.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { type MacCredentials, macAuth } from "../helpers/sign.ts";
import {
  type GraphFake,
  type OidcIssuer,
  type Social2Fake,
  startGraphFake,
  startOidcIssuer,
  startSocial2Fake,
} from "../helpers/social-fakes.ts";
import { aggregatorSignature } from "../../src/social/aggregator-signature.ts";
import { SOCIAL_ENDPOINTS, type SocialEndpoint } from "../../src/social/endpoints.ts";
import { OIDC_KEY_REFETCH_COOLDOWN_MS } from "../../src/social/oidc.ts";

const APP_ID = "1234";
const APP_SECRET = "graph-app-secret-1";
/** Another app on Social network 1: tokens issued to it must not sign anyone in here. */
const OTHER_APP = { id: "5678", secret: "other-graph-app-secret" };
const CONSUMER = { key: "consumer-key-1", secret: "consumer-secret-1" };
const AGGREGATOR_SECRET = Buffer.from("aggregator partner secret").toString("base64");
const CLIENT_ID = "com.example.app";
/** Every provider credential used below: none may appear in a response or a log line. */
const SECRETS: string[] = [APP_SECRET, OTHER_APP.secret, CONSUMER.secret, AGGREGATOR_SECRET];

let t: TestApp;
let graph: GraphFake;
let social2: Social2Fake;
let issuer: OidcIssuer;

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
const signed = (c: MacCredentials, method: string, path: string, extra: { body?: unknown } = {}) => ({
  ...extra,
  headers: { authorization: macAuth(c, method, path) },
});

function graphToken(id: string, name = `User ${id}`, email?: string, appId?: string): string {
  const token = `fb-token-${id}-${Math.random().toString(36).slice(2)}`;
  graph.tokens.set(token, { id, name, email, appId });
  SECRETS.push(token);
  return token;
}

function social2Token(id: string): { tk: string; ts: string } {
  const tk = `${id}-tw-token-${Math.random().toString(36).slice(2)}`;
  const ts = `tw-secret-${Math.random().toString(36).slice(2)}`;
  social2.tokens.set(tk, { secret: ts, user: { id_str: id, screen_name: `sn${id}`, name: `Tweeter ${id}` } });
  SECRETS.push(tk, ts);
  return { tk, ts };
}

function aggregatorUser(uid: string, at = Math.floor(Date.now() / 1000)) {
  const ts = String(at);
  return { uid, ts, sig: aggregatorSignature(AGGREGATOR_SECRET, ts, uid) };
}

async function passwordLogin(username: string, password: string): Promise<MacCredentials> {
  const r = await t.request("POST", "/user/accessToken", form({ username, password, token_type: "mac" }));
  expect(r.status).toBe(200);
  return r.body;
}

/** Nothing a provider gave us, and no app secret, in what the server said or logged. */
function expectNoSecrets(text: string) {
  for (const s of SECRETS) expect(text).not.toContain(s);
}

beforeAll(async () => {
  graph = startGraphFake(APP_SECRET, APP_ID);
  graph.apps.set(OTHER_APP.id, OTHER_APP.secret);
  social2 = startSocial2Fake();
  social2.consumers.set(CONSUMER.key, CONSUMER.secret);
  issuer = await startOidcIssuer();
  t = await makeTestApp({ logLevel: "debug" });
  const user = (await t.admin("GET", "/schemas/user")).body;
  await t.admin("PUT", "/schemas/user", { ...user, fields: { ...user.fields, email: { type: "string" } } });
  const set = await t.admin("PUT", "/settings/development", {
    social: {
      social1: { appId: APP_ID, appSecret: APP_SECRET, baseUrl: graph.url },
      social2: { consumerKey: CONSUMER.key, consumerSecret: CONSUMER.secret, baseUrl: social2.url },
      aggregator: { secret: AGGREGATOR_SECRET },
      oidc: { acme: { issuer: issuer.issuer, clientIds: [CLIENT_ID, "web-client"] } },
    },
  });
  expect(set.status).toBe(200);
  await t.request("POST", "/user", { body: { username: "ann", password: "ann-password" } });
});
afterAll(async () => {
  graph.stop();
  social2.stop();
  issuer.stop();
  expectNoSecrets(t.logs.join("\n"));
  await t.close();
});

describe("settings", () => {
  test("provider secrets are write-only; URLs are checked", async () => {
    const r = await t.admin("GET", "/settings/development");
    expect(r.body.social.social1).toEqual({ appId: "1234", appSecret: { set: true }, baseUrl: graph.url });
    expect(r.body.social.social2.consumerSecret).toEqual({ set: true });
    expect(r.body.social.aggregator.secret).toEqual({ set: true });
    expect(r.body.social.oidc.acme).toEqual({ issuer: issuer.issuer, clientIds: [CLIENT_ID, "web-client"] });
    expectNoSecrets(r.text);
    const prod = (await t.admin("GET", "/settings/production")).body.social;
    expect(prod.social1.baseUrl).toBe("https://graph.facebook.com");
    expect(prod.social2.baseUrl).toBe("https://api.twitter.com/1.1");
    for (const bad of [
      { social1: { baseUrl: "ftp://x" } },
      { social1: { baseUrl: "not a url" } },
      { oidc: { acme: { clientIds: ["x"] } } },
      { oidc: { apple: { clientIds: [] } } },
      { oidc: { "Bad Name": { issuer: "https://x", clientIds: ["a"] } } },
      { oidc: { acme: { issuer: "https://x", clientIds: ["a"], extra: 1 } } },
    ]) {
      const w = await t.admin("PUT", "/settings/production", { social: bad });
      expect([bad, w.status]).toEqual([bad, 400]);
    }
    const apple = await t.admin("PUT", "/settings/production", { social: { oidc: { apple: { clientIds: ["com.example.ios"] } } } });
    expect(apple.body.social.oidc.apple).toEqual({ issuer: "https://appleid.apple.com", clientIds: ["com.example.ios"] });
  });

  test("a provider not set up in the environment is refused with what to set", async () => {
    const r = await t.request("POST", "/user/facebookAccessToken", { version: 1, ...form({ fb_at: "x", token_type: "mac" }) });
    expect(r.status).toBe(404); // no version 1 deployed yet: the schema is unknown there
    await t.admin("POST", "/deploy", {});
    const p = await t.request("POST", "/user/facebookAccessToken", { version: 1, ...form({ fb_at: "x", token_type: "mac" }) });
    expect(p.status).toBe(400);
    expect(p.body.error).toContain("social.social1.appId");
    const agg = await t.request("POST", "/user/gigyaAccessToken", {
      version: 1,
      ...form({ gigya_uid: "u", gigya_ts: "1", gigya_sig: "x" }),
    });
    expect(agg.status).toBe(401);
    expect(agg.body.error).toContain("social.aggregator.secret");
  });
});

describe("Social network 1 (Graph)", () => {
  test("createUserWithSocial1 inspects the token for this app, reads /me with appsecret_proof, and links the provider id", async () => {
    const token = graphToken("10001", "Bea Graph", "bea@example.com");
    const r = await t.request("POST", "/user/createUserWithSocial1", { body: { social1_at: token } });
    expect(r.status).toBe(201);
    expect(r.body.username).toBe("10001");
    expect(r.body.email).toBe("bea@example.com");
    expect(r.body.password).toBeUndefined();
    expectNoSecrets(r.text);
    const q = graph.queries.at(-1)!;
    expect(q.get("fields")).toContain("id");
    expect(q.get("appsecret_proof")).toMatch(/^[0-9a-f]{64}$/);
    const inspected = graph.inspections.at(-1)!;
    expect([inspected.get("input_token"), inspected.get("access_token")]).toEqual([token, `${APP_ID}|${APP_SECRET}`]);
    // The account is linked: creating again is refused, and the token logs in.
    const again = await t.request("POST", "/user/createUserWithFacebook", { body: { fb_at: token, username: "other" } });
    expect(again.status).toBe(400);
    expect(again.body.error).toContain("already linked");
    expect((await t.request("GET", "/user/other")).status).toBe(404);
    const login = await t.request("POST", "/user/social1AccessToken", form({ social1_at: token, token_type: "mac" }));
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({
      token_type: "mac",
      mac_algorithm: "hmac-sha-1",
      expires_in: 3600,
      service: { user: { username: "10001" } },
    });
    expect(login.headers.get("cache-control")).toBe("no-store");
    const me = await t.request("GET", "/user/loggedInUser", signed(login.body, "GET", "/user/loggedInUser"));
    expect(me.body.username).toBe("10001");
  });

  test("a token the provider refuses creates nothing: 400 on create, 401 on login", async () => {
    const r = await t.request("POST", "/user/createUserWithFacebook", { body: { fb_at: "not-a-token", username: "ghost" } });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("refused");
    expect((await t.request("GET", "/user/ghost")).status).toBe(404);
    const l = await t.request("POST", "/user/facebookAccessToken", form({ fb_at: "not-a-token", token_type: "mac" }));
    expect(l.status).toBe(401);
    expect(typeof l.body.error).toBe("string");
  });

  test("login with a never-linked account is 401 {error}, not a 500", async () => {
    const token = graphToken("10002");
    const r = await t.request("POST", "/user/facebookAccessToken", form({ fb_at: token, token_type: "mac" }));
    expect(r.status).toBe(401);
    expect(r.body.error).toContain("no user is linked");
  });

  test("WithCreate creates once (with the username asked for), then logs the same user in", async () => {
    const token = graphToken("10003");
    const first = await t.request(
      "POST",
      "/user/facebookAccessTokenWithCreate",
      form({ fb_at: token, token_type: "mac", username: "carol" }),
    );
    expect(first.status).toBe(200);
    expect(first.body.service.user.username).toBe("carol");
    const second = await t.request(
      "POST",
      "/user/social1AccessTokenWithCreate",
      form({ social1_at: token, token_type: "mac", username: "ignored" }),
    );
    expect(second.body.service.user.username).toBe("carol");
    expect((await t.request("GET", "/user/ignored")).status).toBe(404);
    // A taken username is a clear 400.
    const taken = await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: graphToken("10004"), username: "ann" }));
    expect(taken.status).toBe(400);
    expect(taken.body.error).toContain("taken");
  });

  test("parameters come from the query, a form or JSON alike", async () => {
    const viaQuery = await t.request("GET", `/user/createUserWithFacebook?fb_at=${graphToken("10005")}`);
    expect(viaQuery.status).toBe(201);
    const viaForm = await t.request("POST", "/user/createUserWithFacebook", form({ fb_at: graphToken("10006") }));
    expect(viaForm.status).toBe(201);
    const viaQueryOnPost = await t.request("POST", `/user/createUserWithSocial1?social1_at=${graphToken("10007")}`);
    expect(viaQueryOnPost.status).toBe(201);
    expect(
      (await t.request("POST", "/user/createUserWithFacebook", { raw: "{bad json", headers: { "content-type": "application/json" } }))
        .status,
    ).toBe(400);
    expect((await t.request("POST", "/user/createUserWithFacebook", { body: ["array"] })).status).toBe(400);
    const proto = await t.request("POST", "/user/createUserWithFacebook", {
      raw: '{"__proto__": {"fb_at": "x"}, "constructor": "y"}',
      headers: { "content-type": "application/json" },
    });
    expect(proto.status).toBe(400);
    expect(({} as Record<string, unknown>).fb_at).toBeUndefined();
  });

  test("link, user info, message post and unlink act as the signed-in user", async () => {
    const ann = await passwordLogin("ann", "ann-password");
    const token = graphToken("10008", "Ann Graph");
    expect((await t.request("GET", `/user/linkUserWithFacebook?fb_at=${token}`)).status).toBe(401);
    const path = `/user/linkUserWithFacebook?fb_at=${token}`;
    const link = await t.request("GET", path, signed(ann, "GET", path));
    expect(link.status).toBe(200);
    const viaToken = await t.request("POST", "/user/facebookAccessToken", form({ fb_at: token, token_type: "mac" }));
    expect(viaToken.body.service.user.username).toBe("ann");

    const info = await t.request("GET", "/user/getSocial1UserInfo", signed(ann, "GET", "/user/getSocial1UserInfo"));
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ id: "10008", name: "Ann Graph" });
    const postPath = "/user/postFacebookMessage?message=hello%20graph";
    const post = await t.request("GET", postPath, signed(ann, "GET", postPath));
    expect(post.status).toBe(200);
    expect(post.body.id).toStartWith("10008_");
    expect(graph.posts.at(-1)).toEqual({ user: "10008", message: "hello graph" });
    expect((await t.request("GET", "/user/postFacebookMessage", signed(ann, "GET", "/user/postFacebookMessage"))).status).toBe(400);

    // Another user cannot take the account over.
    await t.request("POST", "/user", { body: { username: "dave", password: "dave-password" } });
    const dave = await passwordLogin("dave", "dave-password");
    const steal = await t.request("GET", path, signed(dave, "GET", path));
    expect(steal.status).toBe(400);
    expect(steal.body.error).toContain("already linked to another user");

    const unlink = await t.request("DELETE", "/user/unlinkUserFromSocial1", signed(ann, "DELETE", "/user/unlinkUserFromSocial1"));
    expect(unlink.status).toBe(200);
    const again = await t.request("DELETE", "/user/unlinkUserFromFacebook", signed(ann, "DELETE", "/user/unlinkUserFromFacebook"));
    expect(again.status).toBe(404);
    expect((await t.request("GET", "/user/getFacebookUserInfo", signed(ann, "GET", "/user/getFacebookUserInfo"))).status).toBe(404);
    expect((await t.request("POST", "/user/facebookAccessToken", form({ fb_at: token }))).status).toBe(401);
  });

  test("the last way to log in is not unlinked until the user has a password", async () => {
    const token = graphToken("10009");
    const login = await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: token, username: "erin" }));
    const erin: MacCredentials = login.body;
    const refused = await t.request("DELETE", "/user/unlinkUserFromFacebook", signed(erin, "DELETE", "/user/unlinkUserFromFacebook"));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain("only way");
    // A password-less user cannot log in with a password...
    expect((await t.request("POST", "/user/accessToken", form({ username: "erin", password: "" }))).status).toBe(401);
    // ...until it sets its first one (no old password needed when there is none).
    const set = await t.request(
      "POST",
      "/user/resetPassword",
      signed(erin, "POST", "/user/resetPassword", { body: { new: { password: "erin-first-pw" } } }),
    );
    expect(set.status).toBe(200);
    expect(
      (
        await t.request(
          "POST",
          "/user/resetPassword",
          signed(erin, "POST", "/user/resetPassword", { body: { new: { password: "again" } } }),
        )
      ).status,
    ).toBe(401);
    const ok = await t.request("DELETE", "/user/unlinkUserFromFacebook", signed(erin, "DELETE", "/user/unlinkUserFromFacebook"));
    expect(ok.status).toBe(200);
    await passwordLogin("erin", "erin-first-pw");
  });

  test("a provider that is down or answers garbage is a 502 {error} without any secret", async () => {
    const token = graphToken("10010");
    for (const mode of ["down", "garbage"] as const) {
      graph.mode = mode;
      const r = await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: token }));
      expect([mode, r.status]).toEqual([mode, 502]);
      expect(r.body.error).toContain("Social network 1");
      expectNoSecrets(r.text);
    }
    graph.mode = "up";
    const unreachable = await t.admin("PUT", "/settings/development", { social: { social1: { baseUrl: "http://127.0.0.1:9" } } });
    expect(unreachable.status).toBe(200);
    const r = await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: token }));
    expect(r.status).toBe(502);
    expect(r.body.error).toBe("Social network 1 could not be reached; try again later");
    await t.admin("PUT", "/settings/development", { social: { social1: { baseUrl: graph.url } } });
  });

  test("a wrong app secret fails at the provider (token inspection and appsecret_proof)", async () => {
    await t.admin("PUT", "/settings/development", { social: { social1: { appSecret: "not-the-app-secret" } } });
    const r = await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: graphToken("10011") }));
    expect(r.status).toBe(401);
    await t.admin("PUT", "/settings/development", { social: { social1: { appSecret: APP_SECRET } } });
  });

  test("deleting a user removes its links", async () => {
    const token = graphToken("10012");
    const created = await t.request("POST", "/user/createUserWithFacebook", { body: { fb_at: token, username: "gone" } });
    expect(created.status).toBe(201);
    const login = await t.request("POST", "/user/facebookAccessToken", form({ fb_at: token }));
    const del = await t.request("DELETE", "/user/gone", signed(login.body, "DELETE", "/user/gone"));
    expect(del.status).toBe(200);
    expect((await t.request("POST", "/user/facebookAccessToken", form({ fb_at: token }))).status).toBe(401);
    const rows = await t.burrow.envDbs.development.execute("SELECT count(*) AS n FROM _burrow_social_links WHERE username = 'gone'");
    expect(rows.rows[0]!.n).toBe(0);
    // A link left behind by a user removed outside the datastore (a dropped schema) is forgotten on next use.
    const stale = graphToken("10013");
    await t.request("POST", "/user/createUserWithFacebook", { body: { fb_at: stale, username: "stale" } });
    await t.burrow.envDbs.development.execute(
      `DELETE FROM ${t.burrow.catalog.development().schemas.get("user")!.table} WHERE username = 'stale'`,
    );
    expect((await t.request("POST", "/user/facebookAccessToken", form({ fb_at: stale }))).status).toBe(401);
    const recreated = await t.request("POST", "/user/createUserWithFacebook", { body: { fb_at: stale, username: "stale-again" } });
    expect(recreated.status).toBe(201);
  });
});

describe("Social network 1 accepts only tokens issued to this app", () => {
  /** Every Social network 1 endpoint that signs in, creates a user or links an account. */
  const SIGN_IN = SOCIAL_ENDPOINTS.filter(
    (e) => e.provider === "social1" && ["create", "login", "loginWithCreate", "sessionLogin", "link"].includes(e.action),
  );
  /** What each answers for a token the provider refuses (README): create and link 400, the logins 401. */
  const refusedStatus = (e: SocialEndpoint) => (e.action === "create" || e.action === "link" ? 400 : 401);

  /** Call an endpoint with a token, by its first verb; link as `as`. */
  function call(e: SocialEndpoint, token: string, as?: MacCredentials) {
    if (e.verbs[0] === "GET") {
      const path = `/user/${e.name}?fb_at=${encodeURIComponent(token)}`;
      return t.request("GET", path, as ? signed(as, "GET", path) : {});
    }
    const path = `/user/${e.name}`;
    const body = form({ social1_at: token, token_type: "mac" });
    return t.request("POST", path, { ...body, headers: { ...body.headers, ...(as ? { authorization: macAuth(as, "POST", path) } : {}) } });
  }

  test("a token another app was issued is refused on every endpoint that signs in, creates or links, as an invalid one is", async () => {
    expect(SIGN_IN.map((e) => e.name).sort()).toEqual([
      "createUserWithFacebook",
      "createUserWithSocial1",
      "facebookAccessToken",
      "facebookAccessTokenWithCreate",
      "facebookLogin",
      "linkUserWithFacebook",
      "linkUserWithSocial1",
      "social1AccessToken",
      "social1AccessTokenWithCreate",
    ]);
    // The victim signed up through this app; someone holds a token of theirs that another app was issued.
    expect(
      (await t.request("POST", "/user/createUserWithSocial1", { body: { social1_at: graphToken("40001"), username: "victim" } })).status,
    ).toBe(201);
    await t.request("POST", "/user", { body: { username: "linker", password: "linker-password" } });
    const linker = await passwordLogin("linker", "linker-password");
    const tokens: [string, string][] = [
      ["the victim's, another app's", graphToken("40001", "Victim", undefined, OTHER_APP.id)],
      ["a new account's, another app's", graphToken("40002", "Newcomer", undefined, OTHER_APP.id)],
      ["invalid", "not-a-token"],
    ];
    for (const e of SIGN_IN) {
      for (const [what, token] of tokens) {
        const r = await call(e, token, e.action === "link" ? linker : undefined);
        expect([e.name, what, r.status]).toEqual([e.name, what, refusedStatus(e)]);
        expect(r.body.error).toBe("Social network 1 refused the credentials: the token is invalid, expired, revoked or for another app");
        expect(r.headers.get("set-cookie")).toBeNull();
      }
    }
    expect((await t.request("GET", "/user/40002")).status).toBe(404);
    expect((await t.admin("GET", "/users/development/user/linker/social")).body).toEqual([]);
    expect((await t.admin("GET", "/users/development/user/victim/social")).body.map((l: { subject: string }) => l.subject)).toEqual([
      "40001",
    ]);
    // Every one was inspected for this app; the victim's own token still signs in.
    expect(graph.inspections.at(-1)!.get("access_token")).toBe(`${APP_ID}|${APP_SECRET}`);
    const own = await t.request("POST", "/user/facebookAccessToken", form({ fb_at: graphToken("40001"), token_type: "mac" }));
    expect([own.status, own.body.service?.user?.username]).toEqual([200, "victim"]);
  });

  test("expired tokens, and inspections naming another user than /me, are refused", async () => {
    const expired = graphToken("40003");
    graph.tokens.get(expired)!.expiresAt = Math.floor(Date.now() / 1000) - 60;
    expect((await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: expired }))).status).toBe(401);
    const mismatched = graphToken("40004");
    graph.tokens.get(mismatched)!.inspection = { user_id: "40001" };
    expect((await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: mismatched }))).status).toBe(401);
    expect((await t.request("GET", "/user/40003")).status).toBe(404);
    expect((await t.request("GET", "/user/40004")).status).toBe(404);
  });

  test("a token inspection that fails is a 502 that names the provider only", async () => {
    graph.inspectionDown = true;
    try {
      const r = await t.request("POST", "/user/facebookAccessTokenWithCreate", form({ fb_at: graphToken("40005") }));
      expect(r.status).toBe(502);
      expect(r.body.error).toBe("Social network 1 answered 503; try again later");
      expectNoSecrets(r.text);
      expect(r.text).not.toContain(`${APP_ID}|`);
    } finally {
      graph.inspectionDown = false;
    }
  });

  test("settings may not leave an app id without its secret; an environment stored that way answers 400 naming it", async () => {
    const message =
      'setting "social.social1.appSecret" is required with social.social1.appId: sign-in checks each token with the provider as issued to this app, using the app secret';
    const dropped = await t.admin("PUT", "/settings/development", { social: { social1: { appSecret: null } } });
    expect([dropped.status, dropped.body.error]).toEqual([400, message]);
    expect((await t.admin("GET", "/settings/development")).body.social.social1.appSecret).toEqual({ set: true });
    const idOnly = await t.admin("PUT", "/settings/production", { social: { social1: { appId: "777" } } });
    expect([idOnly.status, idOnly.body.error]).toEqual([400, message]);
    const emptySecret = await t.admin("PUT", "/settings/production", { social: { social1: { appId: "777", appSecret: "" } } });
    expect(emptySecret.status).toBe(400);
    expect((await t.admin("PUT", "/settings/production", { social: { social1: { appId: "777", appSecret: "prod-secret" } } })).status).toBe(
      200,
    );
    expect((await t.admin("PUT", "/settings/production", { social: { social1: null } })).status).toBe(200);
    expect((await t.admin("GET", "/settings/production")).body.social.social1.appId).toBe("");

    // Settings stored before this rule: an app id and no secret.
    const doc = await t.burrow.settings.stored("development");
    delete (doc.social as { social1: Record<string, unknown> }).social1.appSecret;
    await t.burrow.system.execute({ sql: "UPDATE settings SET doc = ? WHERE env = 'development'", args: [JSON.stringify(doc)] });
    await t.burrow.settings.load();
    try {
      const calls = graph.calls;
      const ann = await passwordLogin("ann", "ann-password");
      const token = graphToken("40006");
      for (const e of SIGN_IN) {
        const r = await call(e, token, e.action === "link" ? ann : undefined);
        expect([e.name, r.status]).toEqual([e.name, 400]);
        expect(r.body.error).toBe(
          "Social network 1 is not fully set up in development: set social.social1.appSecret in the settings (tokens are checked with the provider as issued to this app)",
        );
      }
      expect(graph.calls).toBe(calls);
      expect((await t.request("GET", "/user/40006")).status).toBe(404);
    } finally {
      expect((await t.admin("PUT", "/settings/development", { social: { social1: { appSecret: APP_SECRET } } })).status).toBe(200);
    }
    expect((await t.request("POST", "/user/createUserWithSocial1", { body: { social1_at: graphToken("40006") } })).status).toBe(201);
  });
});

describe("Social network 2 (OAuth 1.0a)", () => {
  test("createUserWithSocial2 verifies the signed verify_credentials call", async () => {
    const { tk, ts } = social2Token("20001");
    const r = await t.request("POST", "/user/createUserWithSocial2", { body: { social2_tk: tk, social2_ts: ts } });
    expect(r.status).toBe(201);
    expect(r.body.username).toBe("20001");
    expectNoSecrets(r.text);
    const token = await t.request(
      "POST",
      "/user/social2AccessToken",
      form({ social2_tk: tk, social2_ts: ts, token_type: "mac", mac_algorithm: "hmac-sha-1" }),
    );
    expect(token.status).toBe(200);
    expect(token.body.service.user.username).toBe("20001");
  });

  test("a wrong token secret fails the provider's signature check", async () => {
    const { tk } = social2Token("20002");
    const r = await t.request("POST", "/user/twitterAccessTokenWithCreate", form({ tw_tk: tk, tw_ts: "wrong-secret", token_type: "mac" }));
    expect(r.status).toBe(401);
    expect(social2.lastRefusal).toBe("bad signature");
    const c = await t.request("GET", `/user/createUserWithTwitter?tw_tk=${tk}&tw_ts=wrong`);
    expect(c.status).toBe(400);
    expect((await t.request("GET", "/user/20002")).status).toBe(404);
  });

  test("social2Login and social2AccessTokenWithCreate answer {username, social2} with a session cookie", async () => {
    const { tk, ts } = social2Token("20003");
    const r = await t.request("POST", "/user/social2AccessTokenWithCreate", {
      ...form({ social2_tk: tk, social2_ts: ts, token_type: "mac", username: "tweety" }),
      headers: { "content-type": "application/x-www-form-urlencoded", "x-service-user-agent": "test" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ username: "tweety", social2: { id_str: "20003", screen_name: "sn20003", name: "Tweeter 20003", id: 20003 } });
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^session_burrow=[A-Za-z0-9]{48}; Path=\//);
    const me = await t.request("GET", "/user/loggedInUser", { headers: { cookie: cookie.split(";")[0]! } });
    expect(me.body.username).toBe("tweety");
    const login = await t.request("POST", "/user/social2Login", form({ social2_tk: tk, social2_ts: ts }));
    expect(login.body.username).toBe("tweety");
    expect(login.headers.get("set-cookie")).toStartWith("session_burrow=");
    const original = await t.request("POST", "/user/twitterLogin", form({ tw_tk: tk, tw_ts: ts }));
    expect(original.body).toMatchObject({ username: "tweety", tw: { id_str: "20003" } });
    // The SDKs' twitterAccessTokenWithCreate reads a token response.
    const sdk = await t.request("POST", "/user/twitterAccessTokenWithCreate", form({ tw_tk: tk, tw_ts: ts, token_type: "mac" }));
    expect(sdk.body.service.user.username).toBe("tweety");
    expect((await t.request("POST", "/user/social2Login", form({ social2_tk: social2Token("20009").tk, social2_ts: "x" }))).status).toBe(
      401,
    );
  });

  test("status update and user info are signed calls as the user; unlink", async () => {
    const { tk, ts } = social2Token("20004");
    const login = await t.request("POST", "/user/twitterAccessTokenWithCreate", form({ tw_tk: tk, tw_ts: ts, username: "poster" }));
    const c: MacCredentials = login.body;
    const path = "/user/twitterStatusUpdate?tw_st=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21";
    const r = await t.request("GET", path, signed(c, "GET", path));
    expect(r.status).toBe(200);
    expect(social2.statuses.at(-1)).toEqual({ user: "20004", status: "Hello Ladies + Gentlemen, a signed OAuth request!" });
    expect(r.body.text).toBe("Hello Ladies + Gentlemen, a signed OAuth request!");
    const post = await t.request(
      "POST",
      "/user/social2StatusUpdate",
      signed(c, "POST", "/user/social2StatusUpdate", { body: { social2_st: "via json" } }),
    );
    expect(post.status).toBe(200);
    expect(social2.statuses.at(-1)!.status).toBe("via json");
    const info = await t.request("GET", "/user/getTwitterUserInfo", signed(c, "GET", "/user/getTwitterUserInfo"));
    expect(info.body).toMatchObject({ id_str: "20004", screen_name: "sn20004" });
    // A revoked token at the provider is a clear 400, not a 401 that would make SDKs refresh their session.
    social2.tokens.delete(tk);
    const revoked = await t.request("GET", "/user/getSocial2UserInfo", signed(c, "GET", "/user/getSocial2UserInfo"));
    expect(revoked.status).toBe(400);
    expect(revoked.body.error).toContain("log in with Social network 2 again");
    const other = social2Token("20005");
    const linkPath = `/user/linkUserWithSocial2?social2_ts=${other.ts}&social2_tk=${other.tk}`;
    expect((await t.request("GET", linkPath, signed(c, "GET", linkPath))).status).toBe(200);
    // Linking another account of the same network replaces the first.
    expect(
      (await t.request("POST", "/user/twitterAccessToken", form({ tw_tk: other.tk, tw_ts: other.ts }))).body.service.user.username,
    ).toBe("poster");
    const unlink = await t.request("DELETE", "/user/unlinkUserFromTwitter", signed(c, "DELETE", "/user/unlinkUserFromTwitter"));
    expect(unlink.status).toBe(400); // poster has no password and no other link
  });
});

describe("aggregator", () => {
  test("a valid signed user creates the user and answers a token response", async () => {
    const u = aggregatorUser("agg-user-1");
    const r = await t.request(
      "POST",
      "/user/aggregatorAccessToken",
      form({ aggregator_uid: u.uid, aggregator_ts: u.ts, aggregator_sig: u.sig, token_type: "mac" }),
    );
    expect(r.status).toBe(200);
    expect(r.body.service.user.username).toBe("agg-user-1");
    // The same signature again is a replay.
    const replay = await t.request(
      "POST",
      "/user/aggregatorAccessToken",
      form({ aggregator_uid: u.uid, aggregator_ts: u.ts, aggregator_sig: u.sig, token_type: "mac" }),
    );
    expect(replay.status).toBe(401);
    expect(replay.body.error).toContain("already used");
    // A fresh signature logs the same user in (gigya spelling).
    const later = aggregatorUser("agg-user-1", Math.floor(Date.now() / 1000) - 5);
    const again = await t.request(
      "POST",
      "/user/gigyaAccessToken",
      form({ gigya_uid: later.uid, gigya_ts: later.ts, gigya_sig: later.sig, token_type: "mac" }),
    );
    expect(again.status).toBe(200);
    expect(again.body.service.user.username).toBe("agg-user-1");
  });

  test("stale or future timestamps, a wrong signature and missing values are 401 {error}", async () => {
    // 190 s, not 181: the test's `now` is whole seconds and the server's has the fraction and the time since, so a
    // timestamp 181 s ahead can be under 180 s ahead by the time the server looks.
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      aggregatorUser("agg-2", now - 190),
      aggregatorUser("agg-2", now + 190),
      { ...aggregatorUser("agg-2"), sig: aggregatorUser("agg-3").sig },
      { ...aggregatorUser("agg-2"), uid: "agg-other" },
      { uid: "agg-2", ts: "abc", sig: "x" },
      { uid: "agg-2", ts: String(now), sig: "" },
    ];
    for (const u of cases) {
      const r = await t.request("POST", "/user/gigyaAccessToken", form({ gigya_uid: u.uid, gigya_ts: u.ts, gigya_sig: u.sig }));
      expect([u, r.status]).toEqual([u, 401]);
      expect(typeof r.body.error).toBe("string");
    }
    expect((await t.request("GET", "/user/agg-2")).status).toBe(404);
  });

  test("link (JSON body) and unlink for the signed-in user", async () => {
    const ann = await passwordLogin("ann", "ann-password");
    const u = aggregatorUser("agg-ann");
    const link = await t.request(
      "POST",
      "/user/linkUserWithGigya",
      signed(ann, "POST", "/user/linkUserWithGigya", { body: { gigya_uid: u.uid, gigya_ts: u.ts, gigya_sig: u.sig } }),
    );
    expect(link.status).toBe(200);
    const v = aggregatorUser("agg-ann");
    const login = await t.request(
      "POST",
      "/user/aggregatorAccessToken",
      form({
        aggregator_uid: v.uid,
        aggregator_ts: String(Number(v.ts) - 1),
        aggregator_sig: aggregatorSignature(AGGREGATOR_SECRET, String(Number(v.ts) - 1), v.uid),
      }),
    );
    expect(login.body.service.user.username).toBe("ann");
    const bad = await t.request(
      "POST",
      "/user/linkUserWithAggregator",
      signed(ann, "POST", "/user/linkUserWithAggregator", { body: { aggregator_uid: "x", aggregator_ts: "1", aggregator_sig: "x" } }),
    );
    expect(bad.status).toBe(401);
    expect(
      (await t.request("DELETE", "/user/unlinkUserFromAggregator", signed(ann, "DELETE", "/user/unlinkUserFromAggregator"))).status,
    ).toBe(200);
    expect((await t.request("DELETE", "/user/unlinkUserFromGigya", signed(ann, "DELETE", "/user/unlinkUserFromGigya"))).status).toBe(404);
  });
});

describe("OpenID Connect", () => {
  const oidc = (fields: Record<string, string>) => t.request("POST", "/user/oidcAccessToken", { body: { provider: "acme", ...fields } });

  test("a valid ID token creates the user on first login and logs it in after", async () => {
    const idToken = await issuer.idToken({ sub: "oidc-sub-1", aud: CLIENT_ID, email: "ola@example.com", email_verified: true });
    const r = await oidc({ id_token: idToken });
    expect(r.status).toBe(200);
    expect(r.body.service.user).toMatchObject({ username: "oidc-sub-1", email: "ola@example.com" });
    const second = await t.request(
      "POST",
      "/user/oidcAccessToken",
      form({ provider: "acme", id_token: await issuer.idToken({ sub: "oidc-sub-1", aud: "web-client" }), username: "ignored" }),
    );
    expect(second.body.service.user.username).toBe("oidc-sub-1");
    const named = await oidc({
      id_token: await issuer.idToken({ sub: "oidc-sub-2", aud: CLIENT_ID, email: "x@example.com", email_verified: false }),
      username: "olga",
    });
    expect(named.body.service.user.username).toBe("olga");
    expect(named.body.service.user.email).toBeUndefined(); // not verified: not copied
  });

  test("expired, wrong audience, wrong issuer, forged and malformed tokens are 401 with the reason", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, Promise<string> | string][] = [
      ["expired", issuer.idToken({ sub: "s", aud: CLIENT_ID, exp: now - 3600, iat: now - 7200 })],
      ["another app", issuer.idToken({ sub: "s", aud: "someone-else" })],
      ["another issuer", issuer.idToken({ sub: "s", aud: CLIENT_ID, iss: "https://evil.example" })],
      ["signature", issuer.idToken({ sub: "s", aud: CLIENT_ID }, { key: "foreign" })],
      ["not a signed JWT", "abc.def"],
      ["malformed", "e30.e30.e30"],
    ];
    for (const [reason, token] of cases) {
      const r = await oidc({ id_token: await token });
      expect([reason, r.status]).toEqual([reason, 401]);
      expect(r.body.error).toContain(reason);
    }
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub: "s", aud: CLIENT_ID, iss: issuer.issuer, exp: now + 60, iat: now })).toString("base64url")}.`;
    expect((await oidc({ id_token: unsigned })).status).toBe(401);
  });

  test("the nonce must match when the token carries one (raw or its SHA-256)", async () => {
    const raw = "nonce-raw-value";
    const hashed = new Bun.CryptoHasher("sha256").update(raw).digest("hex");
    const token = await issuer.idToken({ sub: "oidc-nonce", aud: CLIENT_ID, nonce: hashed });
    expect((await oidc({ id_token: token })).status).toBe(401);
    expect((await oidc({ id_token: token, nonce: "other" })).status).toBe(401);
    expect((await oidc({ id_token: token, nonce: raw })).status).toBe(200);
    expect((await oidc({ id_token: token, nonce: hashed })).status).toBe(200);
    const noClaim = await issuer.idToken({ sub: "oidc-nonce", aud: CLIENT_ID });
    expect((await oidc({ id_token: noClaim, nonce: raw })).status).toBe(401);
  });

  test("keys are cached, and fetched again when a token names an unknown kid", async () => {
    await oidc({ id_token: await issuer.idToken({ sub: "oidc-keys", aud: CLIENT_ID }) });
    const before = issuer.jwksCalls;
    await oidc({ id_token: await issuer.idToken({ sub: "oidc-keys", aud: CLIENT_ID }) });
    expect(issuer.jwksCalls).toBe(before);
    await issuer.rotate();
    await Bun.sleep(OIDC_KEY_REFETCH_COOLDOWN_MS + 50);
    const r = await oidc({ id_token: await issuer.idToken({ sub: "oidc-keys", aud: CLIENT_ID }) });
    expect(r.status).toBe(200);
    expect(issuer.jwksCalls).toBe(before + 1);
  });

  test("unknown providers, missing tokens and an issuer that is down", async () => {
    expect((await t.request("POST", "/user/oidcAccessToken", { body: { provider: "nope", id_token: "x" } })).status).toBe(400);
    expect((await t.request("POST", "/user/oidcAccessToken", { body: { id_token: "x" } })).status).toBe(400);
    expect((await t.request("POST", "/user/oidcAccessToken", { body: { provider: "__proto__", id_token: "x" } })).status).toBe(400);
    expect((await oidc({})).status).toBe(401);
    const down = await startOidcIssuer();
    down.mode = "down";
    await t.admin("PUT", "/settings/development", {
      social: { oidc: { acme: { issuer: issuer.issuer, clientIds: [CLIENT_ID] }, down: { issuer: down.issuer, clientIds: [CLIENT_ID] } } },
    });
    const r = await t.request("POST", "/user/oidcAccessToken", {
      body: { provider: "down", id_token: await down.idToken({ sub: "s", aud: CLIENT_ID }) },
    });
    expect(r.status).toBe(502);
    expect(r.body.error).toContain('OpenID provider "down"');
    // Discovery answers but the key set fails: still the issuer's fault, 502.
    down.mode = "up";
    down.jwksDown = true;
    const keys = await t.request("POST", "/user/oidcAccessToken", {
      body: { provider: "down", id_token: await down.idToken({ sub: "s", aud: CLIENT_ID }) },
    });
    expect(keys.status).toBe(502);
    expect(keys.body.error).toBe('OpenID provider "down" did not serve its keys; try again later');
    down.stop();
  });

  test("link and unlink name the provider", async () => {
    const ann = await passwordLogin("ann", "ann-password");
    const idToken = await issuer.idToken({ sub: "ann-at-acme", aud: CLIENT_ID });
    const link = await t.request(
      "POST",
      "/user/linkUserWithOidc",
      signed(ann, "POST", "/user/linkUserWithOidc", { body: { provider: "acme", id_token: idToken } }),
    );
    expect(link.body).toEqual({});
    expect(link.status).toBe(200);
    expect((await oidc({ id_token: await issuer.idToken({ sub: "ann-at-acme", aud: CLIENT_ID }) })).body.service.user.username).toBe("ann");
    const path = "/user/unlinkUserFromOidc?provider=acme";
    expect((await t.request("DELETE", path, signed(ann, "DELETE", path))).status).toBe(200);
    expect((await t.request("DELETE", path, signed(ann, "DELETE", path))).status).toBe(404);
  });
});

describe("as the original SDKs call them", () => {
  test("the JS SDK: form token calls, JSON create with its loginField, GET link, DELETE unlink, gigya JSON link", async () => {
    await t.admin("PUT", "/schemas/member", {
      fields: { pw: { type: "password" }, mail: { type: "string" } },
      user: { key: "login", password: "pw", email: "mail" },
    });
    const token = graphToken("30001", "Member One", "m1@example.com");
    // createUserWithFacebook: JSON with fb_at, token_type and the schema's login field.
    const created = await t.request("POST", "/member/createUserWithFacebook", {
      body: { fb_at: token, token_type: "mac", login: "member-one" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ login: "member-one", mail: "m1@example.com" });
    // loginWithFacebookToken: a form POST to facebookAccessToken; the SDK reads service.user.
    const login = await t.request("POST", "/member/facebookAccessToken", form({ fb_at: token, token_type: "mac" }));
    expect(login.body.service.user.login).toBe("member-one");
    // The same account may link to one user in each user schema.
    expect(
      (await t.request("POST", "/user/createUserWithFacebook", { body: { fb_at: token, token_type: "mac", username: "in-user" } })).status,
    ).toBe(201);
    const c: MacCredentials = login.body;
    const info = await t.request("GET", "/member/getFacebookUserInfo", signed(c, "GET", "/member/getFacebookUserInfo"));
    expect(info.body.id).toBe("30001");
    const u = aggregatorUser("member-agg");
    const link = await t.request(
      "POST",
      "/member/linkUserWithGigya",
      signed(c, "POST", "/member/linkUserWithGigya", { body: { gigya_uid: u.uid, gigya_ts: u.ts, gigya_sig: u.sig } }),
    );
    expect(link.status).toBe(200);
    expect(
      (await t.request("DELETE", "/member/unlinkUserFromFacebook", signed(c, "DELETE", "/member/unlinkUserFromFacebook"))).status,
    ).toBe(200);
    // With Facebook gone the aggregator is the last way in: refused.
    expect((await t.request("DELETE", "/member/unlinkUserFromGigya", signed(c, "DELETE", "/member/unlinkUserFromGigya"))).status).toBe(400);
    // A user of another user schema is not signed in here.
    expect((await t.request("GET", "/user/getFacebookUserInfo", signed(c, "GET", "/user/getFacebookUserInfo"))).status).toBe(401);
  });
});

describe("routing and limits", () => {
  test("on a schema without a user block the names keep their datastore meaning", async () => {
    await t.admin("PUT", "/schemas/thing", { fields: { label: { type: "string" } } });
    await t.request("POST", "/thing", { body: { thing_id: "getFacebookUserInfo", label: "an object" } });
    const r = await t.request("GET", "/thing/getFacebookUserInfo");
    expect(r.body.label).toBe("an object");
    expect((await t.request("POST", "/thing/facebookAccessToken", form({ fb_at: "x" }))).status).toBe(404);
    expect((await t.request("DELETE", "/thing/unlinkUserFromFacebook")).status).toBe(404);
    expect((await t.request("DELETE", "/thing/getFacebookUserInfo")).status).toBe(200);
    expect((await t.request("GET", "/thing/getFacebookUserInfo")).status).toBe(404);
  });

  test("every social endpoint counts towards the per-IP limit: 429 with Retry-After", async () => {
    const limited = await makeTestApp({ peer: () => "127.0.0.9" });
    await limited.admin("PUT", "/settings/development", {
      rateLimits: { ipPerMinute: 3 },
      social: { aggregator: { secret: AGGREGATOR_SECRET } },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await limited.request("POST", "/user/gigyaAccessToken", form({ gigya_uid: "u", gigya_ts: "1", gigya_sig: "x" }))).status,
      );
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const r = await limited.request("GET", "/user/getFacebookUserInfo");
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    await limited.close();
  });
});
