// Social network 1, a Graph-API-style network (the original: Facebook). A sign-in token is checked by two calls
// made at once: the provider's token inspection (GET <baseUrl>/debug_token with the app access token
// <appId>|<appSecret>) must say it is valid and was issued to this app, and /me (with appsecret_proof,
// HMAC-SHA256 of the token keyed by the app secret) must name the same user. Stored tokens read /me only; messages
// are posted to <baseUrl>/me/feed. The app access token carries the app secret: it goes only into the
// inspection's URL, never into an error or a log.

import { createHmac } from "node:crypto";
import { badRequest } from "../errors.ts";
import { isPlainObject } from "../plain-object.ts";
import { callProvider, providerDown } from "./provider-http.ts";
import { REFUSED, type Refused, type SocialProfile, idString } from "./profile.ts";

export const SOCIAL1_LABEL = "Social network 1";

export interface GraphSettings {
  appId: string;
  appSecret: string;
  baseUrl: string;
}

/** The user fields asked of /me: what user info answers and what a new user is filled from. */
const ME_FIELDS = "id,name,first_name,last_name,email";

/** Graph's appsecret_proof: hex HMAC-SHA256 of the access token, keyed by the app secret. */
export function appSecretProof(appSecret: string, token: string): string {
  return createHmac("sha256", appSecret).update(token).digest("hex");
}

function endpoint(cfg: GraphSettings, path: string): URL {
  return new URL(`${cfg.baseUrl.replace(/\/+$/, "")}${path}`);
}

/** access_token and, with an app secret, appsecret_proof. */
function tokenParams(cfg: GraphSettings, token: string): Record<string, string> {
  return cfg.appSecret ? { access_token: token, appsecret_proof: appSecretProof(cfg.appSecret, token) } : { access_token: token };
}

/** Who the token belongs to, from /me alone (stored tokens, checked when linked); REFUSED when the provider refuses it (4xx). */
export async function graphProfile(cfg: GraphSettings, token: string): Promise<SocialProfile | Refused> {
  const url = endpoint(cfg, "/me");
  url.search = new URLSearchParams({ fields: ME_FIELDS, ...tokenParams(cfg, token) }).toString();
  const r = await callProvider(SOCIAL1_LABEL, url, { method: "GET" });
  if (r.status >= 400) return REFUSED;
  const me = r.json;
  const id = isPlainObject(me) ? idString(me.id) : null;
  if (!isPlainObject(me) || id === null) throw providerDown(SOCIAL1_LABEL, "answered without a user id");
  return {
    id,
    name: typeof me.name === "string" ? me.name : undefined,
    email: typeof me.email === "string" ? me.email : undefined,
    info: me,
  };
}

/** The user a token was issued for, when the provider's inspection says it is valid and this app's. */
async function inspectToken(cfg: GraphSettings, token: string): Promise<{ userId: string } | Refused> {
  const url = endpoint(cfg, "/debug_token");
  url.search = new URLSearchParams({ input_token: token, access_token: `${cfg.appId}|${cfg.appSecret}` }).toString();
  const r = await callProvider(SOCIAL1_LABEL, url, { method: "GET" });
  // A 4xx is a token the provider will not inspect, or an app id and secret it does not know: refused either way.
  if (r.status >= 400) return REFUSED;
  const data = isPlainObject(r.json) ? r.json.data : undefined;
  if (!isPlainObject(data)) throw providerDown(SOCIAL1_LABEL, "answered the token inspection without data");
  if (data.is_valid !== true || idString(data.app_id) !== cfg.appId) return REFUSED;
  if (typeof data.expires_at === "number" && data.expires_at > 0 && data.expires_at * 1000 <= Date.now()) return REFUSED;
  const userId = idString(data.user_id);
  return userId === null ? REFUSED : { userId };
}

/**
 * The profile behind a sign-in token, only when the token was issued to this app (social.social1.appId) and
 * names the same user in the inspection and at /me; REFUSED otherwise (another app's, invalid, expired or revoked
 * token). Needs the app secret: without it no inspection can be made, and the token is not accepted.
 */
export async function graphVerify(cfg: GraphSettings, token: string): Promise<SocialProfile | Refused> {
  if (!cfg.appId || !cfg.appSecret) throw badRequest(`${SOCIAL1_LABEL} needs social.social1.appId and appSecret to check tokens`);
  const [inspected, profile] = await Promise.allSettled([inspectToken(cfg, token), graphProfile(cfg, token)]);
  if (inspected.status === "rejected") throw inspected.reason;
  if (inspected.value === REFUSED) return REFUSED;
  if (profile.status === "rejected") throw profile.reason;
  if (profile.value === REFUSED || profile.value.id !== inspected.value.userId) return REFUSED;
  return profile.value;
}

/** Post a message to the user's feed: the provider's answer ({id}); REFUSED when the provider refuses the token. */
export async function graphPost(cfg: GraphSettings, token: string, message: string): Promise<Record<string, unknown> | Refused> {
  const r = await callProvider(SOCIAL1_LABEL, endpoint(cfg, "/me/feed"), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ message, ...tokenParams(cfg, token) }).toString(),
  });
  if (r.status >= 400) return REFUSED;
  return isPlainObject(r.json) ? r.json : {};
}
