// Social network 2, an OAuth 1.0a network (the original: Twitter): the user's token and token secret are checked
// with GET <baseUrl>/account/verify_credentials.json, signed with the app's consumer key and secret and the
// user's token and secret by our own OAuth 1.0 signer; status updates go to POST <baseUrl>/statuses/update.json.

import { signOAuth1 } from "../auth/oauth1.ts";
import { randomToken } from "../auth/sessions.ts";
import { isPlainObject } from "../plain-object.ts";
import { callProvider, providerDown } from "./provider-http.ts";
import { REFUSED, type Refused, type SocialProfile, idString } from "./profile.ts";

export const SOCIAL2_LABEL = "Social network 2";

export interface Social2Settings {
  consumerKey: string;
  consumerSecret: string;
  baseUrl: string;
}

export interface Social2Credentials {
  token: string;
  secret: string;
}

function endpoint(cfg: Social2Settings, path: string): URL {
  return new URL(`${cfg.baseUrl.replace(/\/+$/, "")}${path}`);
}

function authorization(cfg: Social2Settings, user: Social2Credentials, method: string, url: URL, formBody?: string): string {
  return signOAuth1({
    method,
    url,
    consumerKey: cfg.consumerKey,
    consumerSecret: cfg.consumerSecret,
    token: user.token,
    tokenSecret: user.secret,
    timestamp: Math.floor(Date.now() / 1000),
    nonce: randomToken(32),
    formBody,
  });
}

/** Who the token belongs to (verify_credentials); REFUSED when the provider refuses it (4xx). */
export async function social2Profile(cfg: Social2Settings, user: Social2Credentials): Promise<SocialProfile | Refused> {
  const url = endpoint(cfg, "/account/verify_credentials.json");
  url.search = "skip_status=true";
  const r = await callProvider(SOCIAL2_LABEL, url, { method: "GET", headers: { authorization: authorization(cfg, user, "GET", url) } });
  if (r.status >= 400) return REFUSED;
  const me = r.json;
  const id = isPlainObject(me) ? (idString(me.id_str) ?? idString(me.id)) : null;
  if (!isPlainObject(me) || id === null) throw providerDown(SOCIAL2_LABEL, "answered without a user id");
  return { id, name: typeof me.screen_name === "string" ? me.screen_name : typeof me.name === "string" ? me.name : undefined, info: me };
}

/** Post a status update: the provider's answer; REFUSED when the provider refuses the token. */
export async function social2StatusUpdate(
  cfg: Social2Settings,
  user: Social2Credentials,
  status: string,
): Promise<Record<string, unknown> | Refused> {
  const url = endpoint(cfg, "/statuses/update.json");
  const body = new URLSearchParams({ status }).toString();
  const r = await callProvider(SOCIAL2_LABEL, url, {
    method: "POST",
    headers: { authorization: authorization(cfg, user, "POST", url, body), "content-type": "application/x-www-form-urlencoded" },
    body,
  });
  if (r.status >= 400) return REFUSED;
  return isPlainObject(r.json) ? r.json : {};
}
