// Vectors for the pure parts of social sign-in: the aggregator's signature and its window, the three-legged
// OAuth 1.0a signature a Social network 2 call carries (the provider's published example, checked with openssl),
// Graph's appsecret_proof, Graph token verification against the loopback Graph fake (only tokens issued to this
// app, for the user /me names, still valid), and the endpoint table (every name of
// docs/api/social.md#endpoints is served).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { baseStringUri, parseOAuthHeader, signOAuth1, verifyOAuth1 } from "../../src/auth/oauth1.ts";
import { aggregatorSignature, checkAggregatorSignature } from "../../src/social/aggregator-signature.ts";
import { PARAM_NAMES, SOCIAL_ENDPOINTS, param } from "../../src/social/endpoints.ts";
import type { ApiError } from "../../src/errors.ts";
import { REFUSED } from "../../src/social/profile.ts";
import { type GraphSettings, appSecretProof, graphVerify } from "../../src/social/social1-graph.ts";
import { type GraphFake, type GraphUser, startGraphFake } from "../helpers/social-fakes.ts";

const SECRET = "YWdncmVnYXRvciBwYXJ0bmVyIHNlY3JldA=="; // Base64 of "aggregator partner secret"

describe("aggregator signature", () => {
  // printf '%s' '1700000000_uid-1' | openssl dgst -sha1 -mac HMAC -macopt hexkey:$(printf '%s' 'aggregator partner secret' | xxd -p) -binary | base64
  const VECTOR = "gI40uf0V4zXt4s+DTWA4ilIHkUs=";

  test("Base64(HMAC-SHA1(decoded secret, <timestamp>_<uid>)) agrees with openssl", () => {
    expect(aggregatorSignature(SECRET, "1700000000", "uid-1")).toBe(VECTOR);
    expect(
      checkAggregatorSignature({ uid: "uid-1", timestamp: "1700000000", signature: VECTOR, secretBase64: SECRET, nowMs: 1700000000_000 }),
    ).toEqual({ ok: true, timestamp: 1700000000 });
  });

  test("the timestamp may be 180 s away either way, not more", () => {
    const at = (nowS: number) =>
      checkAggregatorSignature({ uid: "uid-1", timestamp: "1700000000", signature: VECTOR, secretBase64: SECRET, nowMs: nowS * 1000 }).ok;
    expect([at(1700000180), at(1699999820), at(1700000181), at(1699999819)]).toEqual([true, true, false, false]);
    expect(
      checkAggregatorSignature({ uid: "uid-1", timestamp: "1700000000", signature: VECTOR, secretBase64: SECRET, nowMs: 1700000181_000 }),
    ).toEqual({ ok: false, reason: "stale" });
  });

  test("any change to uid, timestamp, signature or secret fails", () => {
    const check = (uid: string, timestamp: string, signature: string, secretBase64 = SECRET) =>
      checkAggregatorSignature({ uid, timestamp, signature, secretBase64, nowMs: 1700000000_000 });
    expect(check("uid-2", "1700000000", VECTOR)).toEqual({ ok: false, reason: "signature" });
    expect(check("uid-1", "1700000001", VECTOR)).toEqual({ ok: false, reason: "signature" });
    expect(check("uid-1", "1700000000", VECTOR, Buffer.from("other").toString("base64"))).toEqual({ ok: false, reason: "signature" });
    expect(check("uid-1", "1700000000", VECTOR.replace("g", "h"))).toEqual({ ok: false, reason: "signature" });
    expect(check("uid-1", "1700000000", VECTOR.slice(0, -4))).toEqual({ ok: false, reason: "signature" });
    for (const [uid, ts, sig] of [
      ["", "1700000000", VECTOR],
      ["uid-1", "17e8", VECTOR],
      ["uid-1", "-1", VECTOR],
      ["uid-1", "1700000000", ""],
      ["u".repeat(256), "1700000000", VECTOR],
    ])
      expect(check(uid!, ts!, sig!)).toEqual({ ok: false, reason: "malformed" });
  });
});

describe("OAuth 1.0a with a user token", () => {
  // The provider's published example. Independently:
  // printf '%s' "$BASE" | openssl dgst -sha1 -hmac 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw&LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE' -binary | base64
  // → hCtSmYh+iHYCEqBWrE7C7hYmtUk=
  const example = {
    method: "POST",
    url: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true",
    consumerKey: "xvz1evFS4wEEPTGEFPHBog",
    consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
    token: "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
    tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
    timestamp: 1318622958,
    nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg",
    formBody: "status=Hello%20Ladies%20%2b%20Gentlemen%2c%20a%20signed%20OAuth%20request%21",
  };

  test("signs the published example to hCtSmYh+iHYCEqBWrE7C7hYmtUk=", () => {
    const header = parseOAuthHeader(signOAuth1(example))!;
    expect(header.oauth_signature).toBe("hCtSmYh+iHYCEqBWrE7C7hYmtUk=");
    expect(header.oauth_token).toBe(example.token);
  });

  test("a provider verifies it, and refuses a wrong token secret or a changed body", () => {
    const header = parseOAuthHeader(signOAuth1(example))!;
    const url = new URL(example.url);
    const args = {
      header,
      consumerSecret: example.consumerSecret,
      tokenSecret: example.tokenSecret,
      methods: ["POST"],
      baseUris: [baseStringUri(url)],
      query: url.search.slice(1),
      formBody: example.formBody,
      now: example.timestamp * 1000,
      windowSeconds: 300,
    };
    const bad = { ok: false, reason: "signature" } as const;
    expect(verifyOAuth1(args)).toEqual({ ok: true });
    expect(verifyOAuth1({ ...args, tokenSecret: "wrong" })).toEqual(bad);
    expect(verifyOAuth1({ ...args, formBody: "status=changed" })).toEqual(bad);
    expect(verifyOAuth1({ ...args, methods: ["GET"] })).toEqual(bad);
    expect(verifyOAuth1({ ...args, tokenSecret: undefined })).toEqual(bad);
  });
});

describe("Graph appsecret_proof", () => {
  test("hex HMAC-SHA256 of the token keyed by the app secret (openssl dgst -sha256 -hmac)", () => {
    expect(appSecretProof("app-secret-xyz", "token-abc")).toBe("8d09eaac5cdba7332dee102ce7c90209fa9a32b53f45ffd68fe0330b27e59bde");
  });
});

describe("Graph token verification (debug_token for this app, then /me)", () => {
  const APP_ID = "1234";
  const APP_SECRET = "graph-unit-app-secret";
  let graph: GraphFake;
  let cfg: GraphSettings;
  let n = 0;
  beforeAll(() => {
    graph = startGraphFake(APP_SECRET, APP_ID);
    graph.apps.set("12345", "other-secret");
    cfg = { appId: APP_ID, appSecret: APP_SECRET, baseUrl: graph.url };
  });
  afterAll(() => graph.stop());
  const issue = (user: Partial<GraphUser> = {}) => {
    const token = `unit-token-${++n}`;
    graph.tokens.set(token, { id: `5000${n}`, name: "Uma Unit", email: "uma@example.com", ...user });
    return token;
  };
  /** The ApiError a call throws (status and message), or what it answered. */
  const outcome = (p: Promise<unknown>) =>
    p.then(
      (v) => ({ answered: v }),
      (e: ApiError) => ({ status: e.status, message: e.message }),
    );

  test("a token issued to this app answers the /me profile; both calls carry what the provider checks", async () => {
    const token = issue();
    const r = await graphVerify(cfg, token);
    expect(r).toMatchObject({ id: `5000${n}`, name: "Uma Unit", email: "uma@example.com" });
    expect(Object.fromEntries(graph.inspections.at(-1)!)).toEqual({ input_token: token, access_token: `${APP_ID}|${APP_SECRET}` });
    expect(graph.queries.at(-1)!.get("appsecret_proof")).toBe(appSecretProof(APP_SECRET, token));
    // The app id may come as a number; it is compared as a string.
    expect(await graphVerify(cfg, issue({ inspection: { app_id: 1234 } }))).not.toBe(REFUSED);
  });

  test("another app's, unknown, expired and mismatched tokens are refused", async () => {
    const past = Math.floor(Date.now() / 1000) - 1;
    const cases: [string, string][] = [
      ["another app's", issue({ appId: "12345" })],
      ["an app id that only starts with ours", issue({ inspection: { app_id: "12340" } })],
      ["unknown", "never-issued"],
      ["expired", issue({ expiresAt: past })],
      ["valid by its flag but past its expiry", issue({ inspection: { is_valid: true, expires_at: past } })],
      ["not valid", issue({ inspection: { is_valid: false } })],
      ["is_valid not exactly true", issue({ inspection: { is_valid: "true" } })],
      ["without a user", issue({ inspection: { user_id: undefined } })],
      ["for another user than /me names", issue({ inspection: { user_id: "99" } })],
    ];
    for (const [what, token] of cases) expect([what, await graphVerify(cfg, token)]).toEqual([what, REFUSED]);
    // An app secret the provider does not know: the inspection is refused.
    expect(await graphVerify({ ...cfg, appSecret: "not-the-secret" }, issue())).toBe(REFUSED);
  });

  test("without the app secret nothing is asked; a failed inspection is a 502 without the app access token", async () => {
    const calls = graph.calls;
    expect(await outcome(graphVerify({ ...cfg, appSecret: "" }, issue()))).toEqual({
      status: 400,
      message: "Social network 1 needs social.social1.appId and appSecret to check tokens",
    });
    expect(graph.calls).toBe(calls);
    graph.inspectionDown = true;
    try {
      const down = await outcome(graphVerify(cfg, issue()));
      expect(down).toEqual({ status: 502, message: "Social network 1 answered 503; try again later" });
    } finally {
      graph.inspectionDown = false;
    }
    graph.mode = "garbage";
    try {
      expect(await outcome(graphVerify(cfg, issue()))).toEqual({
        status: 502,
        message: "Social network 1 answered something other than JSON; try again later",
      });
    } finally {
      graph.mode = "up";
    }
  });
});

describe("endpoint table", () => {
  const names = SOCIAL_ENDPOINTS.map((e) => e.name);

  test("names are unique, and every endpoint answers at least one verb", () => {
    expect(new Set(names).size).toBe(names.length);
    for (const e of SOCIAL_ENDPOINTS) expect(e.verbs.length).toBeGreaterThan(0);
  });

  test("every social path in both spellings of docs/api/social.md#endpoints is served", () => {
    // The neutral names of Social network 1, Social network 2 and the aggregator:
    const seed = [
      "createUserWithSocial1",
      "social1AccessTokenWithCreate",
      "social1AccessToken",
      "linkUserWithSocial1",
      "getSocial1UserInfo",
      "postSocial1Message",
      "unlinkUserFromSocial1",
      "createUserWithSocial2",
      "social2AccessTokenWithCreate",
      "social2Login",
      "linkUserWithSocial2",
      "getSocial2UserInfo",
      "social2StatusUpdate",
      "unlinkUserFromSocial2",
      "aggregatorAccessToken",
      "linkUserWithAggregator",
      "unlinkUserFromAggregator",
    ];
    for (const n of seed) expect(names).toContain(n);
    // The original service's provider names, user-schema sub-paths of their own:
    for (const n of [
      "createUserWithFacebook",
      "facebookAccessToken",
      "facebookAccessTokenWithCreate",
      "facebookLogin",
      "linkUserWithFacebook",
      "unlinkUserFromFacebook",
      "getFacebookUserInfo",
      "postFacebookMessage",
      "twitterAccessToken",
      "twitterAccessTokenWithCreate",
      "twitterLogin",
      "twitterlogin",
      "createUserWithTwitter",
      "linkUserWithTwitter",
      "unlinkUserFromTwitter",
      "getTwitterUserInfo",
      "twitterStatusUpdate",
      "gigyaAccessToken",
      "linkUserWithGigya",
      "unlinkUserFromGigya",
    ])
      expect(names).toContain(n);
  });

  test("parameters are read in either spelling, the neutral one first", () => {
    expect(param({ fb_at: "b" }, PARAM_NAMES.social1Token)).toBe("b");
    expect(param({ fb_at: "b", social1_at: "a" }, PARAM_NAMES.social1Token)).toBe("a");
    expect(param({ social1_at: "" }, PARAM_NAMES.social1Token)).toBeUndefined();
    expect(param(Object.create(null), PARAM_NAMES.social2Token)).toBeUndefined();
  });
});
