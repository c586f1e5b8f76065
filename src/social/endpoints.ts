// Every social endpoint under a user schema, in both spellings: the neutral one (Social1, Social2, Aggregator) and the
// original service's provider names (Facebook, Twitter, Gigya; docs/api/social.md#endpoints), plus OpenID Connect. Each name
// maps to a provider, an action and the verbs it answers. Pure data.

export type ProviderKind = "social1" | "social2" | "aggregator" | "oidc";

export type Action =
  /** Create a user linked to the account (201 with the user). */
  | "create"
  /** A token response for the user linked to the account (401 when none is). */
  | "login"
  /** The token response, creating and linking a user first when none is linked. */
  | "loginWithCreate"
  /** The pre-OAuth 2.0 login: a session cookie and {username, <network>: <user info>}. */
  | "sessionLogin"
  /** As sessionLogin, creating and linking a user first when none is linked. */
  | "sessionLoginWithCreate"
  /** Link the account to the signed-in user. */
  | "link"
  /** Unlink the signed-in user's account of this provider. */
  | "unlink"
  /** The network's user object for the signed-in user. */
  | "info"
  /** Post a message (status update) as the signed-in user. */
  | "post";

export type Verb = "GET" | "POST" | "DELETE";

export interface SocialEndpoint {
  name: string;
  provider: ProviderKind;
  action: Action;
  verbs: readonly Verb[];
  /** The member a session login names the network's user object with ({username, <infoKey>: {...}}). */
  infoKey: string;
}

const READ: readonly Verb[] = ["GET", "POST"];
const WRITE: readonly Verb[] = ["POST", "GET"];
const REMOVE: readonly Verb[] = ["DELETE"];

function table(provider: ProviderKind, infoKey: string, rows: [string, Action, readonly Verb[]][]): SocialEndpoint[] {
  return rows.map(([name, action, verbs]) => ({ name, provider, action, verbs, infoKey }));
}

export const SOCIAL_ENDPOINTS: readonly SocialEndpoint[] = [
  ...table("social1", "social1", [
    ["createUserWithSocial1", "create", WRITE],
    ["social1AccessToken", "login", WRITE],
    ["social1AccessTokenWithCreate", "loginWithCreate", WRITE],
    ["linkUserWithSocial1", "link", READ],
    ["unlinkUserFromSocial1", "unlink", REMOVE],
    ["getSocial1UserInfo", "info", ["GET"]],
    ["postSocial1Message", "post", READ],
  ]),
  ...table("social1", "fb", [
    ["createUserWithFacebook", "create", WRITE],
    ["facebookAccessToken", "login", WRITE],
    ["facebookAccessTokenWithCreate", "loginWithCreate", WRITE],
    ["facebookLogin", "sessionLogin", WRITE],
    ["linkUserWithFacebook", "link", READ],
    ["unlinkUserFromFacebook", "unlink", REMOVE],
    ["getFacebookUserInfo", "info", ["GET"]],
    ["postFacebookMessage", "post", READ],
  ]),
  ...table("social2", "social2", [
    ["createUserWithSocial2", "create", WRITE],
    ["social2AccessToken", "login", WRITE],
    // A cookie login (docs/api/social.md#cookie-logins): 200 with a cookie and {username, social2: {...}}.
    ["social2AccessTokenWithCreate", "sessionLoginWithCreate", WRITE],
    ["social2Login", "sessionLogin", WRITE],
    ["linkUserWithSocial2", "link", READ],
    ["unlinkUserFromSocial2", "unlink", REMOVE],
    ["getSocial2UserInfo", "info", ["GET"]],
    ["social2StatusUpdate", "post", READ],
  ]),
  ...table("social2", "tw", [
    ["createUserWithTwitter", "create", WRITE],
    // The iOS and Java SDKs read a token response from both.
    ["twitterAccessToken", "login", WRITE],
    ["twitterAccessTokenWithCreate", "loginWithCreate", WRITE],
    // The REST documentation's cookie logins: {username, tw: {...}}.
    ["twitterLoginWithCreate", "sessionLoginWithCreate", WRITE],
    ["twitterLogin", "sessionLogin", WRITE],
    ["twitterlogin", "sessionLogin", WRITE],
    ["linkUserWithTwitter", "link", READ],
    ["unlinkUserFromTwitter", "unlink", REMOVE],
    ["getTwitterUserInfo", "info", ["GET"]],
    ["twitterStatusUpdate", "post", READ],
  ]),
  ...table("aggregator", "aggregator", [
    ["aggregatorAccessToken", "loginWithCreate", WRITE],
    ["linkUserWithAggregator", "link", WRITE],
    ["unlinkUserFromAggregator", "unlink", REMOVE],
  ]),
  ...table("aggregator", "gigya", [
    ["gigyaAccessToken", "loginWithCreate", WRITE],
    ["linkUserWithGigya", "link", WRITE],
    ["unlinkUserFromGigya", "unlink", REMOVE],
  ]),
  ...table("oidc", "oidc", [
    ["oidcAccessToken", "loginWithCreate", ["POST"]],
    ["linkUserWithOidc", "link", WRITE],
    ["unlinkUserFromOidc", "unlink", REMOVE],
  ]),
];

/** Parameter names per meaning, the neutral spelling first (docs/api/social.md#parameters). */
export const PARAM_NAMES = {
  social1Token: ["social1_at", "fb_at"],
  social2Token: ["social2_tk", "tw_tk"],
  social2Secret: ["social2_ts", "tw_ts"],
  social1Message: ["message", "social1_message"],
  social2Status: ["social2_st", "tw_st", "status"],
  aggregatorUid: ["aggregator_uid", "gigya_uid"],
  aggregatorTimestamp: ["aggregator_ts", "gigya_ts"],
  aggregatorSignature: ["aggregator_sig", "gigya_sig"],
} as const;

/** The first of `names` present in params. */
export function param(params: Record<string, string>, names: readonly string[]): string | undefined {
  for (const n of names) if (typeof params[n] === "string" && params[n] !== "") return params[n];
  return undefined;
}
