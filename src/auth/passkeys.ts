// Passkeys (WebAuthn) on every user schema, with @simplewebauthn/server doing the attestation and assertion
// checks: a signed-in user registers a passkey (options, then the browser's response), lists and removes its
// passkeys; anyone with the API key asks for login options and signs in with accessToken grant_type=passkey.
// Challenges live 5 minutes in the database and work once; the relying party is the settings' (auth.passkeys.*)
// or the request's host and origin. Logins count against the account's failed-login budget like passwords;
// a signature counter that does not increase is refused. Login options for a username with no passkey (unknown
// or not) carry one decoy credential derived from the environment's secret, so they look like any user's.

import { createHmac } from "node:crypto";
import {
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { ApiError, badRequest, notFound, oauthError, unauthorized } from "../errors.ts";
import { isPlainObject } from "../plain-object.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { Accounts, UserRows } from "./accounts.ts";
import type { Credential } from "./login-flow.ts";
import { type PasskeyInfo, type RelyingParty, type StoredChallenge, type StoredPasskey, infoOf, passkeyStore } from "./passkey-store.ts";
import { randomToken } from "./sessions.ts";

export { PASSKEYS_DDL } from "./passkey-store.ts";

/** How long a challenge of registerOptions or loginOptions can be answered. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Passkeys one user may hold. */
export const MAX_PASSKEYS = 20;
const DEFAULT_NAME = "Passkey";
const MAX_NAME = 64;
/** The largest assertion or registration response taken (real ones are 1-3 KB). */
const MAX_RESPONSE = 16 * 1024;
/** The transports a decoy credential names: a platform passkey's. */
const DECOY_TRANSPORTS = ["internal", "hybrid"];

/** The settings auth.passkeys.*: empty means "the request's". */
export interface PasskeySettings {
  rpId: string;
  origins: string[];
}

/** Where a request came from: the host name it addressed and its origin (`https://host[:port]`). */
export interface RequestPlace {
  host: string;
  origin: string;
}

interface PasskeyDeps {
  accounts: Pick<Accounts, "limitIp" | "takeLoginAttempt" | "resetLoginAttempts">;
  users: Pick<UserRows, "json">;
  /** An environment's settings: auth.passkeys (the relying party) and app.name (its name, which browsers show). */
  settings: { get(env: EnvName): { [key: string]: unknown } };
  /** A secret of the environment that decoy credential ids are derived from (stable across nodes and restarts). */
  secret(env: EnvName): string;
}

/** The relying party of a ceremony: the settings', else the request's host name and origin. Pure. */
export function relyingParty(settings: PasskeySettings, place: RequestPlace): RelyingParty {
  return { id: settings.rpId || place.host, origins: settings.origins.length > 0 ? [...settings.origins] : [place.origin] };
}

/** The decoy credential id login options name for a username without passkeys: the same at every ask. Pure. */
export function decoyCredentialId(secret: string, schema: string, username: string): string {
  return createHmac("sha256", secret).update(`passkey decoy\0${schema}\0${username}`).digest("base64url");
}

/** A passkey's label: the one sent (trimmed, at most 64 characters) or "Passkey". Pure. */
export function passkeyName(v: unknown): string {
  if (v === undefined || v === null) return DEFAULT_NAME;
  if (typeof v !== "string" || v.trim() === "" || v.length > MAX_NAME)
    throw badRequest(`name must be a non-empty string of at most ${MAX_NAME} characters`);
  return v.trim();
}

/** Whether `v` looks like a browser's credential response with the given members in `response`. */
function isCredentialResponse(v: unknown, members: readonly string[]): boolean {
  if (!isPlainObject(v) || typeof v.id !== "string" || v.id === "" || v.id.length > 1024 || v.type !== "public-key") return false;
  const r = v.response;
  return isPlainObject(r) && members.every((m) => typeof r[m] === "string");
}

/** The registration response of a register body (the browser's credential JSON, with an optional `name`). Pure. */
export function registrationOf(body: Record<string, unknown>): RegistrationResponseJSON {
  if (!isCredentialResponse(body, ["clientDataJSON", "attestationObject"]) || JSON.stringify(body).length > MAX_RESPONSE)
    throw badRequest(
      'send the browser\'s registration response as JSON: {"id", "rawId", "type": "public-key", "response": {"clientDataJSON", "attestationObject", ...}}, optionally with "name"',
    );
  const { name: _, ...response } = body;
  return { clientExtensionResults: {}, ...response } as unknown as RegistrationResponseJSON;
}

/** The assertion and challenge id of an accessToken grant_type=passkey. Pure. */
export function assertionOf(params: Record<string, string>): { response: AuthenticationResponseJSON; challengeId: string } {
  const usage =
    "send grant_type=passkey with assertion (the browser's authentication response as JSON text) and challenge_id from loginOptions";
  const raw = params.assertion;
  const challengeId = params.challenge_id;
  if (!raw || !challengeId || raw.length > MAX_RESPONSE || challengeId.length > 64) throw oauthError(400, "invalid_request", usage);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw oauthError(400, "invalid_request", `assertion is not JSON; ${usage}`);
  }
  if (!isCredentialResponse(parsed, ["clientDataJSON", "authenticatorData", "signature"]))
    throw oauthError(400, "invalid_request", `assertion is not an authentication response; ${usage}`);
  return { response: { clientExtensionResults: {}, ...(parsed as object) } as AuthenticationResponseJSON, challengeId };
}

/** The challenge a browser signed, from a response's clientDataJSON; null when it cannot be read. Pure. */
export function signedChallenge(clientDataJSON: string): string | null {
  try {
    const c = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { challenge?: unknown };
    return typeof c.challenge === "string" && c.challenge.length <= 512 ? c.challenge : null;
  } catch {
    return null;
  }
}

const reason = (e: unknown) => String((e as Error)?.message ?? e).slice(0, 300);
const randomBytes = (n: number) => crypto.getRandomValues(new Uint8Array(n));
const fromBase64url = (s: string) => new Uint8Array(Buffer.from(s, "base64url"));
const refused = (why: string) => oauthError(401, "invalid_grant", why);

export class Passkeys {
  constructor(
    private readonly deps: PasskeyDeps,
    private readonly now: () => number = Date.now,
  ) {}

  private relyingParty(ctx: ApiContext, place: RequestPlace): RelyingParty {
    return relyingParty((this.deps.settings.get(ctx.env).auth as { passkeys: PasskeySettings }).passkeys, place);
  }

  /** The signed-in user of this schema (MAC, bearer or session cookie); 401 otherwise. */
  private signedIn(ctx: ApiContext, s: CompiledSchema): string {
    const p = ctx.principal;
    if (p.kind !== "user" || p.schema !== s.name) throw unauthorized(`sign in as a user of ${s.name} first`);
    return p.username;
  }

  /** POST /<userSchema>/passkeys/registerOptions: the creation options for navigator.credentials.create. */
  async registerOptions(
    ctx: ApiContext,
    s: CompiledSchema,
    place: RequestPlace,
    ip: string | null,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    await this.deps.accounts.limitIp(ctx, ip);
    const username = this.signedIn(ctx, s);
    const existing = await passkeyStore.ofUser(ctx.db, s.name, username);
    if (existing.length >= MAX_PASSKEYS) throw badRequest(`a user holds at most ${MAX_PASSKEYS} passkeys; remove one first`);
    const rp = this.relyingParty(ctx, place);
    // One user handle per user: the one its passkeys already have, or a new random one (never the username).
    const userHandle = existing[0]?.userHandle ?? Buffer.from(randomBytes(32)).toString("base64url");
    const options = await generateRegistrationOptions({
      rpName: (this.deps.settings.get(ctx.env).app as { name: string }).name,
      rpID: rp.id,
      userName: username,
      userDisplayName: username,
      userID: fromBase64url(userHandle),
      challenge: randomBytes(32),
      timeout: CHALLENGE_TTL_MS,
      attestationType: "none",
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
      authenticatorSelection: { residentKey: "required", userVerification: "required" },
    });
    await this.putChallenge(ctx, s, username, options.challenge, "register", rp, userHandle);
    return options;
  }

  /** POST /<userSchema>/passkeys/register: verify the browser's registration response and keep the passkey. */
  async register(ctx: ApiContext, s: CompiledSchema, body: Record<string, unknown>, ip: string | null): Promise<PasskeyInfo> {
    await this.deps.accounts.limitIp(ctx, ip);
    const username = this.signedIn(ctx, s);
    const name = passkeyName(body.name);
    const response = registrationOf(body);
    const challenge = signedChallenge(response.response.clientDataJSON);
    const ch = challenge === null ? null : await passkeyStore.takeRegisterChallenge(ctx.db, s.name, username, challenge);
    const now = this.now();
    if (!ch || ch.expires <= now || ch.userHandle === null)
      throw badRequest("the registration challenge is unknown, used or expired: ask registerOptions for a new one");
    let credential: { id: string; publicKey: Uint8Array; counter: number; transports?: string[] };
    try {
      const v = await verifyRegistrationResponse({
        response,
        expectedChallenge: ch.challenge,
        expectedOrigin: ch.rp.origins,
        expectedRPID: ch.rp.id,
        requireUserVerification: true,
      });
      if (!v.verified) throw new Error("the attestation does not verify");
      credential = v.registrationInfo.credential;
    } catch (e) {
      throw badRequest(`the passkey was not accepted: ${reason(e)}`);
    }
    if ((await passkeyStore.ofUser(ctx.db, s.name, username)).length >= MAX_PASSKEYS)
      throw badRequest(`a user holds at most ${MAX_PASSKEYS} passkeys; remove one first`);
    const stored: StoredPasskey = {
      id: credential.id,
      username,
      userHandle: ch.userHandle,
      publicKey: Buffer.from(credential.publicKey).toString("base64url"),
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
      created: now,
      lastUsed: null,
    };
    if (!(await passkeyStore.add(ctx.db, s.name, stored))) throw new ApiError(409, "this passkey is already registered");
    return infoOf(stored);
  }

  /**
   * POST /<userSchema>/passkeys/loginOptions: the request options for navigator.credentials.get, with the
   * `challenge_id` accessToken takes back. With a username, allowCredentials lists its passkeys, or one decoy
   * credential when it has none (an unknown username looks the same); without one it is empty (discoverable).
   */
  async loginOptions(
    ctx: ApiContext,
    s: CompiledSchema,
    body: Record<string, unknown>,
    place: RequestPlace,
    ip: string | null,
  ): Promise<PublicKeyCredentialRequestOptionsJSON & { challenge_id: string }> {
    await this.deps.accounts.limitIp(ctx, ip);
    const username = body.username ?? body[s.pk];
    if (username !== undefined && username !== null && (typeof username !== "string" || username === "" || username.length > 256))
      throw badRequest('send {} for a discoverable passkey, or {"username": <key>}');
    const rp = this.relyingParty(ctx, place);
    let allow: { id: string; transports?: string[] }[] = [];
    if (typeof username === "string") {
      const keys = await passkeyStore.ofUser(ctx.db, s.name, username);
      allow =
        keys.length > 0
          ? keys.map((p) => ({ id: p.id, transports: p.transports }))
          : [{ id: decoyCredentialId(this.deps.secret(ctx.env), s.name, username), transports: DECOY_TRANSPORTS }];
    }
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      allowCredentials: allow,
      challenge: randomBytes(32),
      timeout: CHALLENGE_TTL_MS,
      userVerification: "required",
    });
    const id = await this.putChallenge(ctx, s, typeof username === "string" ? username : null, options.challenge, "login", rp, null);
    return { ...options, challenge_id: id };
  }

  private async putChallenge(
    ctx: ApiContext,
    s: CompiledSchema,
    username: string | null,
    challenge: string,
    purpose: StoredChallenge["purpose"],
    rp: RelyingParty,
    userHandle: string | null,
  ): Promise<string> {
    const now = this.now();
    const id = randomToken(32);
    await passkeyStore.putChallenge(
      ctx.db,
      { id, schema: s.name, username, challenge, purpose, rp, userHandle, expires: now + CHALLENGE_TTL_MS },
      now,
    );
    return id;
  }

  /**
   * accessToken grant_type=passkey: `assertion` (the browser's authentication response as JSON text) and
   * `challenge_id` from loginOptions. The challenge is used up whatever the outcome; each check of a known
   * account's passkey takes one attempt from its failed-login budget, and a success gives the budget back.
   */
  readonly grant = async (ctx: ApiContext, s: CompiledSchema, params: Record<string, string>): Promise<Credential> => {
    const { response, challengeId } = assertionOf(params);
    const ch = await passkeyStore.takeLoginChallenge(ctx.db, s.name, challengeId);
    if (!ch || ch.expires <= this.now()) throw refused("the passkey challenge is unknown, used or expired: ask loginOptions for a new one");
    const key = await passkeyStore.byId(ctx.db, s.name, response.id);
    const account = key?.username ?? ch.username;
    if (account === null) throw refused("this passkey is not registered for this account");
    await this.deps.accounts.takeLoginAttempt(ctx, s, account);
    if (!key || (ch.username !== null && ch.username !== key.username)) throw refused("this passkey is not registered for this account");
    const handle = response.response.userHandle;
    if (handle && handle !== key.userHandle) throw refused("the passkey's user handle is not its account's");
    let newCounter: number;
    try {
      const v = await verifyAuthenticationResponse({
        response,
        expectedChallenge: ch.challenge,
        expectedOrigin: ch.rp.origins,
        expectedRPID: ch.rp.id,
        credential: { id: key.id, publicKey: fromBase64url(key.publicKey), counter: key.counter, transports: key.transports },
        requireUserVerification: true,
      });
      if (!v.verified) throw new Error("the signature does not verify");
      newCounter = v.authenticationInfo.newCounter;
    } catch (e) {
      throw refused(`the passkey was not accepted: ${reason(e)}`);
    }
    if (!(await passkeyStore.used(ctx.db, key.id, newCounter, this.now())))
      throw refused("the passkey's signature counter did not increase (a cloned authenticator?)");
    await this.deps.accounts.resetLoginAttempts(ctx, s, key.username);
    const user = await this.deps.users.json(ctx, s, key.username);
    if (user === null) throw refused("this passkey is not registered for this account");
    return { username: key.username, user, method: "passkey" };
  };

  /** GET /<userSchema>/passkeys: the signed-in user's passkeys. */
  async list(ctx: ApiContext, s: CompiledSchema, ip: string | null): Promise<PasskeyInfo[]> {
    await this.deps.accounts.limitIp(ctx, ip);
    return this.ofUser(ctx, s.name, this.signedIn(ctx, s));
  }

  /** DELETE /<userSchema>/passkeys/<id>: remove one of the signed-in user's passkeys; 404 when it has none of that id. */
  async remove(ctx: ApiContext, s: CompiledSchema, id: string, ip: string | null): Promise<void> {
    await this.deps.accounts.limitIp(ctx, ip);
    if (!(await this.removeOf(ctx, s.name, this.signedIn(ctx, s), id))) throw notFound("the user has no passkey of that id");
  }

  /** A user's passkeys (the admin API too). */
  async ofUser(ctx: ApiContext, schema: string, username: string): Promise<PasskeyInfo[]> {
    return (await passkeyStore.ofUser(ctx.db, schema, username)).map(infoOf);
  }

  /** Remove one passkey of a user (the admin API too); false when it has none of that id. */
  removeOf(ctx: ApiContext, schema: string, username: string, id: string): Promise<boolean> {
    return passkeyStore.remove(ctx.db, schema, username, id);
  }
}
