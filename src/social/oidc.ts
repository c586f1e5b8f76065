// OpenID Connect sign-in (Sign in with Apple, Google, any issuer by URL): an ID token is verified against its
// issuer's keys with jose: the signature (keys from the issuer's JWKS, found through its discovery document,
// cached and fetched again when a token names an unknown key id), iss, aud (the configured client ids), exp, and
// the nonce when the token carries one. The subject (`sub`) is the link key.

import { createHash } from "node:crypto";
import type * as Jose from "jose";
import type { JWTPayload, JWTVerifyGetKey } from "jose";
import { onFirstUse } from "../on-first-use.ts";
import { ApiError } from "../errors.ts";
import { isPlainObject } from "../plain-object.ts";
import type { OidcProviderSetting } from "../system/settings.ts";
import { callProvider, providerDown } from "./provider-http.ts";
import type { SocialProfile } from "./profile.ts";

const jose = onFirstUse(() => require("jose") as typeof Jose);

/** How long a discovery document is kept. */
const DISCOVERY_TTL_MS = 3600_000;
/** Signature algorithms accepted: what Apple (RS256), Google (RS256) and common issuers (ES256, PS256) sign with. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** Clock difference tolerated on exp, iat and nbf. */
const CLOCK_TOLERANCE_S = 60;
const MAX_ID_TOKEN = 16 * 1024;
/**
 * A token naming an unknown key id fetches the issuer's keys again, at most once in this interval (a rotation is
 * picked up within it; a flood of forged key ids costs the issuer one request per interval).
 */
export const OIDC_KEY_REFETCH_COOLDOWN_MS = 2000;

/** Issuers whose tokens may name them without the scheme (Google's documented quirk). */
const ISSUER_ALIASES: Readonly<Record<string, string>> = { "https://accounts.google.com": "accounts.google.com" };

interface IssuerKeys {
  jwks: JWTVerifyGetKey;
  expires: number;
}

export type OidcResult = { ok: true; profile: SocialProfile } | { ok: false; reason: string };

export const oidcLabel = (provider: string) => `OpenID provider "${provider}"`;

export class OidcVerifier {
  private readonly issuers = new Map<string, IssuerKeys | Promise<IssuerKeys>>();

  /** Verify an ID token for a configured provider; a refusal names what was wrong, never the token. */
  async verify(provider: string, cfg: OidcProviderSetting, idToken: string, nonce: string | undefined): Promise<OidcResult> {
    if (idToken.length > MAX_ID_TOKEN || idToken.split(".").length !== 3) return { ok: false, reason: "the ID token is not a signed JWT" };
    const keys = await this.keys(provider, cfg.issuer);
    let payload: JWTPayload;
    try {
      const alias = ISSUER_ALIASES[cfg.issuer];
      ({ payload } = await jose().jwtVerify(idToken, keys.jwks, {
        issuer: alias ? [cfg.issuer, alias] : cfg.issuer,
        audience: cfg.clientIds,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ["sub", "exp", "iat"],
      }));
    } catch (e) {
      return { ok: false, reason: refusal(provider, e) };
    }
    const sub = payload.sub;
    if (typeof sub !== "string" || sub.length === 0 || sub.length > 255)
      return { ok: false, reason: "the ID token has no usable subject (sub)" };
    const claimed = payload.nonce;
    if (claimed !== undefined || nonce !== undefined) {
      if (typeof claimed !== "string" || nonce === undefined || !nonceMatches(claimed, nonce))
        return {
          ok: false,
          reason: nonce === undefined ? "the ID token carries a nonce: send it as nonce" : "the nonce does not match the ID token's",
        };
    }
    const verified = payload.email_verified === true || payload.email_verified === "true";
    const email = typeof payload.email === "string" && verified ? payload.email : undefined;
    const name = typeof payload.name === "string" ? payload.name : undefined;
    const info: Record<string, unknown> = { sub, iss: payload.iss, ...(email ? { email } : {}), ...(name ? { name } : {}) };
    return { ok: true, profile: { id: sub, email, name, info } };
  }

  /** The issuer's key set: its discovery document's jwks_uri, fetched once an hour at most. */
  private async keys(provider: string, issuer: string): Promise<IssuerKeys> {
    const cached = this.issuers.get(issuer);
    if (cached && (cached instanceof Promise || cached.expires > Date.now())) return cached;
    const loading = this.discover(provider, issuer);
    this.issuers.set(issuer, loading);
    try {
      const keys = await loading;
      this.issuers.set(issuer, keys);
      return keys;
    } catch (e) {
      this.issuers.delete(issuer);
      throw e;
    }
  }

  private async discover(provider: string, issuer: string): Promise<IssuerKeys> {
    const label = oidcLabel(provider);
    const r = await callProvider(label, new URL(`${issuer}/.well-known/openid-configuration`), { method: "GET" });
    const doc = r.json;
    if (r.status >= 400 || !isPlainObject(doc)) throw providerDown(label, `answered ${r.status} for its discovery document`);
    if (doc.issuer !== issuer && doc.issuer !== ISSUER_ALIASES[issuer])
      throw providerDown(label, "names another issuer in its discovery document");
    let jwksUri: URL;
    try {
      jwksUri = new URL(String(doc.jwks_uri));
      if (jwksUri.protocol !== "https:" && jwksUri.protocol !== "http:") throw new Error();
    } catch {
      throw providerDown(label, "has no usable jwks_uri in its discovery document");
    }
    const remote = jose().createRemoteJWKSet(jwksUri, {
      timeoutDuration: 10_000,
      cooldownDuration: OIDC_KEY_REFETCH_COOLDOWN_MS,
      cacheMaxAge: 600_000,
    });
    return { jwks: remote, expires: Date.now() + DISCOVERY_TTL_MS };
  }
}

/** The token's nonce is the one sent, or its SHA-256 in hex (Apple's and Firebase's pattern: the app keeps the raw nonce). */
function nonceMatches(claimed: string, sent: string): boolean {
  return claimed === sent || claimed === createHash("sha256").update(sent).digest("hex");
}

/** What was wrong with a token, in words a developer can act on; 502 when the issuer's keys could not be fetched. */
function refusal(provider: string, e: unknown): string {
  if (e instanceof jose().errors.JWTExpired) return "the ID token has expired";
  if (e instanceof jose().errors.JWTClaimValidationFailed) {
    if (e.claim === "aud") return `the ID token was issued for another app (its audience is not one of social.oidc.${provider}.clientIds)`;
    if (e.claim === "iss") return `the ID token was issued by another issuer than social.oidc.${provider}.issuer`;
    return `the ID token's ${e.claim} claim is not valid (${e.reason})`;
  }
  if (e instanceof jose().errors.JWSSignatureVerificationFailed) return "the ID token's signature does not verify";
  if (e instanceof jose().errors.JWKSNoMatchingKey) return "the ID token is signed with a key the issuer does not publish";
  if (e instanceof jose().errors.JOSEAlgNotAllowed) return "the ID token is signed with an algorithm that is not accepted";
  // jose's plain JOSEError is its key set fetch failing (not 200, not JSON); token defects have their own classes.
  const keySetFailed = e instanceof jose().errors.JOSEError && e.code === jose().errors.JOSEError.code;
  if (keySetFailed || e instanceof jose().errors.JWKSTimeout || e instanceof jose().errors.JWKSInvalid || e instanceof TypeError)
    throw providerDown(oidcLabel(provider), "did not serve its keys", String(e));
  if (e instanceof jose().errors.JOSEError) return "the ID token is malformed";
  throw e instanceof ApiError ? e : providerDown(oidcLabel(provider), "did not serve its keys", String(e));
}
