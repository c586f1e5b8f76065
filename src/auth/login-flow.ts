// What every token login shares, whatever proved who the user is: the kinds of token a login may ask for (MAC, the
// default, or bearer), the grants beside the password (email codes, a second factor, passkeys: each registers
// itself with Accounts), the port of the second factor, and the token response for each kind.

import type { ApiContext } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import { oauthError } from "../errors.ts";
import type { Tokens } from "./sessions.ts";

/** The token kinds a login or refresh may ask for with `token_type`. */
export type TokenKind = "mac" | "bearer";

/** How a login proved the user: what the requireVerifiedEmail and second-factor checks look at. */
export type LoginMethod = "password" | "email_code" | "mfa" | "passkey" | "social";

/** Who a grant found: the username, the user's JSON (never the password) and how it was proved. */
export interface Credential {
  username: string;
  user: string;
  method: LoginMethod;
}

/** A grant of accessToken other than the password: checks `params` and answers who signed in, or throws 401/400. */
export type Grant = (ctx: ApiContext, s: CompiledSchema, params: Record<string, string>, ip: string | null) => Promise<Credential>;

/** The second factor (TOTP): after a first factor, whether one is needed - its challenge token - or null. */
export interface SecondFactor {
  challenge(ctx: ApiContext, s: CompiledSchema, username: string): Promise<string | null>;
}

/** The token kind `token_type` asks for (absent: MAC); 400 for anything else. */
export function tokenKindOf(params: Record<string, string>): TokenKind {
  const t = params.token_type;
  if (t === undefined || t === "mac") return "mac";
  if (t === "bearer") return "bearer";
  throw oauthError(400, "unsupported_token_type", "token_type must be mac or bearer");
}

/**
 * The token answer: the tokens, and the user's JSON (never the password) as GET /<schema>/<key> answers it. A MAC
 * token carries its key and algorithm; a bearer token has neither.
 */
export function tokenResponse(user: string, tokens: Tokens, kind: TokenKind = "mac"): string {
  const head =
    kind === "bearer"
      ? JSON.stringify({
          access_token: tokens.access_token,
          refresh_token: tokens.refresh_token,
          expires_in: tokens.expires_in,
          token_type: "bearer",
        })
      : JSON.stringify({ ...tokens, mac_algorithm: "hmac-sha-1", token_type: "mac" });
  return `${head.slice(0, -1)},"service":{"user":${user}}}`;
}
