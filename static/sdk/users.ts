// Accounts of a user schema (docs/api/users.md): sign-up, the token logins (password, mailed code, second
// factor, passkey, social and OpenID tokens), logout and the current user. Tokens go to the client's store.

import type { Json } from "./errors.ts";
import type { Client } from "./client.ts";

const b64url = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const toB64url = (b: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(b)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** Social and OpenID token logins by provider: the endpoint, and the one that creates the user first. */
const SOCIAL: Record<string, [string, string]> = {
  social1: ["social1AccessToken", "social1AccessTokenWithCreate"],
  social2: ["social2AccessToken", "twitterAccessTokenWithCreate"],
  aggregator: ["aggregatorAccessToken", "aggregatorAccessToken"],
  oidc: ["oidcAccessToken", "oidcAccessToken"],
};

export function users(c: Client, schema: string) {
  const path = `/${encodeURIComponent(schema)}`;
  const token = async (params: Record<string, unknown>, endpoint = "accessToken", user?: string) => {
    const a = await c.call("POST", `${path}/${endpoint}`, { body: { ...params, token_type: c.tokenType }, signed: false });
    return c.keep(a.body, schema, user);
  };
  return {
    /** Create an account (the login field, a password, any other fields); does not sign in. */
    signup: async (fields: Record<string, unknown>) => (await c.call("POST", path, { body: fields, signed: false })).body,
    login: (p: { username: string; password: string; new_password?: string }) => token(p, undefined, p.username),
    requestCode: async (username: string) => void (await c.call("POST", `${path}/requestCode`, { body: { username } })),
    loginWithCode: (p: { username: string; code: string }) => token({ grant_type: "email_code", ...p }, undefined, p.username),
    loginWithMfa: (p: { mfaToken: string; code: string }) => token({ grant_type: "mfa", mfa_token: p.mfaToken, code: p.code }),
    /** A token login with a social network or OpenID provider ("social1", "social2", "aggregator", "oidc"). */
    loginWithToken: (provider: string, params: Record<string, unknown> & { create?: boolean }) => {
      const { create, ...rest } = params;
      const names = SOCIAL[provider];
      return token(rest, names ? names[create ? 1 : 0] : provider);
    },
    /** Sign in with a passkey (navigator.credentials); without a username the browser offers the ones it holds. */
    loginWithPasskey: async (p: { username?: string } = {}) => {
      const nav = (globalThis as { navigator?: Navigator }).navigator;
      if (!nav?.credentials) throw new Error("passkeys need navigator.credentials (a browser)");
      const { challenge_id, ...o } = (await c.call("POST", `${path}/passkeys/loginOptions`, { body: p, signed: false })).body;
      const PKC = (globalThis as Json).PublicKeyCredential;
      const publicKey = PKC?.parseRequestOptionsFromJSON
        ? PKC.parseRequestOptionsFromJSON(o)
        : { ...o, challenge: b64url(o.challenge), allowCredentials: o.allowCredentials?.map((x: Json) => ({ ...x, id: b64url(x.id) })) };
      const cred = (await nav.credentials.get({ publicKey })) as Json;
      const r = cred.response;
      const json = cred.toJSON
        ? cred.toJSON()
        : {
            id: cred.id,
            rawId: toB64url(cred.rawId),
            type: cred.type,
            clientExtensionResults: cred.getClientExtensionResults(),
            response: {
              clientDataJSON: toB64url(r.clientDataJSON),
              authenticatorData: toB64url(r.authenticatorData),
              signature: toB64url(r.signature),
              userHandle: r.userHandle && toB64url(r.userHandle),
            },
          };
      return token({ grant_type: "passkey", assertion: JSON.stringify(json), challenge_id });
    },
    /** End the login here and on the server (the local tokens go even when the server call fails). */
    logout: async () => {
      try {
        await c.call("GET", `${path}/logout`);
      } finally {
        await c.setToken(null);
      }
    },
    current: async () => (await c.call("GET", `${path}/loggedInUser`)).body,
    /** Whether tokens of a login are kept (they may still have been revoked on the server). */
    isLoggedIn: async () => (await c.currentToken())?.schema === schema,
  };
}

export type Users = ReturnType<typeof users>;
