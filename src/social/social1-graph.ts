// Social network 1, a Graph-API-style network (the original: Facebook): the access token is checked by asking
// the provider who it belongs to (GET <baseUrl>/me), with appsecret_proof (HMAC-SHA256 of the token keyed by the
// app secret) when the app secret is set; messages are posted to <baseUrl>/me/feed.

import { createHmac } from "node:crypto";
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

/** Who the token belongs to; REFUSED when the provider refuses it (4xx). */
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
