// Social sign-in over any user schema: create a user from a provider account, log in (a token response or the
// pre-OAuth 2.0 cookie session), log in creating the user first, link, unlink, and the provider calls made as
// the signed-in user (user info, message post). Credentials are checked with the provider every time (Graph's
// token inspection for this app and /me, verify_credentials, the aggregator's signature, an OpenID ID token); the
// provider's user id is the link key.

import type { Accounts, UserRows } from "../auth/accounts.ts";
import type { NonceCache } from "../auth/nonces.ts";
import type { Datastore } from "../datastore/datastore.ts";
import { ApiError, badRequest, notFound, unauthorized } from "../errors.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { CompiledSchema } from "../schema/compiled.ts";
import type { OidcProviderSetting } from "../system/settings.ts";
import { AGGREGATOR_WINDOW_SECONDS, checkAggregatorSignature } from "./aggregator-signature.ts";
import { type Action, PARAM_NAMES, type ProviderKind, type SocialEndpoint, param } from "./endpoints.ts";
import { OidcVerifier, oidcLabel } from "./oidc.ts";
import { REFUSED, type Refused, type SocialProfile } from "./profile.ts";
import { type GraphSettings, SOCIAL1_LABEL, graphPost, graphProfile, graphVerify } from "./social1-graph.ts";
import { type Social2Settings, SOCIAL2_LABEL, social2Profile, social2StatusUpdate } from "./social2-oauth1.ts";
import type { Credentials, SocialLinks } from "./social-links.ts";

export const AGGREGATOR_LABEL = "The social-login aggregator";
const MAX_USERNAME = 256;
const MAX_MESSAGE = 64 * 1024;

export interface SocialSettings {
  social1: GraphSettings;
  social2: Social2Settings;
  aggregator: { secret: string; baseUrl: string };
  oidc: Record<string, OidcProviderSetting>;
}

interface SocialDeps {
  settings(env: EnvName): SocialSettings;
  accounts: Accounts;
  users: UserRows;
  data: Datastore;
  links: SocialLinks;
  nonces: NonceCache;
  oidc?: OidcVerifier;
}

/** A provider as one request names it: which account type, how it is called in messages, its link key. */
interface Provider {
  kind: ProviderKind;
  label: string;
  /** The link key: social1, social2, aggregator or oidc:<name>. */
  key: string;
  oidc?: { name: string; cfg: OidcProviderSetting };
}

/** A checked credential: who it belongs to, and what to keep for later calls. */
type Verified = { ok: true; profile: SocialProfile; credentials: Credentials } | { ok: false; reason: string };

/** What an endpoint answers: JSON text and a status, and a cookie session to start when the action is a session login. */
export interface SocialAnswer {
  status: number;
  body: string;
  session?: { token: string; expiresIn: number };
}

const ok = (body: unknown, status = 200): SocialAnswer => ({ status, body: JSON.stringify(body) });

export class SocialAccounts {
  private readonly oidc: OidcVerifier;

  constructor(private readonly deps: SocialDeps) {
    this.oidc = deps.oidc ?? new OidcVerifier();
  }

  /** Run one endpoint for a user schema; every call counts towards the client's per-IP limit of the auth endpoints. */
  async run(
    ctx: ApiContext,
    s: CompiledSchema,
    endpoint: SocialEndpoint,
    params: Record<string, string>,
    ip: string | null,
  ): Promise<SocialAnswer> {
    await this.deps.accounts.limitIp(ctx, ip);
    const provider = this.provider(ctx, endpoint.provider, params);
    const action = endpoint.action;
    switch (action) {
      case "create":
        return this.create(ctx, s, provider, params);
      case "login":
      case "loginWithCreate":
      case "sessionLogin":
      case "sessionLoginWithCreate":
        return this.login(ctx, s, provider, params, action, endpoint.infoKey);
      case "link":
        return this.link(ctx, s, provider, params);
      case "unlink":
        return this.unlink(ctx, s, provider);
      case "info":
        return this.info(ctx, s, provider);
      case "post":
        return this.post(ctx, s, provider, params);
    }
  }

  /** The provider a request names, refused (400) when this environment has not set it up. */
  private provider(ctx: ApiContext, kind: ProviderKind, params: Record<string, string>): Provider {
    const cfg = this.deps.settings(ctx.env);
    switch (kind) {
      case "social1":
        if (!cfg.social1.appId)
          throw badRequest(`${SOCIAL1_LABEL} is not set up in ${ctx.env}: set social.social1.appId (and appSecret) in the settings`);
        return { kind, label: SOCIAL1_LABEL, key: kind };
      case "social2":
        if (!cfg.social2.consumerKey || !cfg.social2.consumerSecret)
          throw badRequest(
            `${SOCIAL2_LABEL} is not set up in ${ctx.env}: set social.social2.consumerKey and consumerSecret in the settings`,
          );
        return { kind, label: SOCIAL2_LABEL, key: kind };
      case "aggregator":
        if (!cfg.aggregator.secret)
          throw new ApiError(401, `${AGGREGATOR_LABEL} is not set up in ${ctx.env}: set social.aggregator.secret in the settings`);
        return { kind, label: AGGREGATOR_LABEL, key: kind };
      case "oidc": {
        const name = params.provider;
        if (!name)
          throw badRequest(
            `send provider: the name of an OpenID provider in social.oidc (${Object.keys(cfg.oidc).join(", ") || "none is set up"})`,
          );
        const p = Object.hasOwn(cfg.oidc, name) ? cfg.oidc[name] : undefined;
        if (!p)
          throw badRequest(`OpenID provider "${name.slice(0, 64)}" is not set up in ${ctx.env}: add it to social.oidc in the settings`);
        return { kind, label: oidcLabel(name), key: `oidc:${name}`, oidc: { name, cfg: p } };
      }
    }
  }

  /** Check the request's credential with its provider. */
  private async verify(ctx: ApiContext, p: Provider, params: Record<string, string>): Promise<Verified> {
    const cfg = this.deps.settings(ctx.env);
    switch (p.kind) {
      case "social1": {
        // Without the app secret a token cannot be checked as this app's: a setup error, not a refused token.
        if (!cfg.social1.appSecret)
          throw badRequest(
            `${SOCIAL1_LABEL} is not fully set up in ${ctx.env}: set social.social1.appSecret in the settings (tokens are checked with the provider as issued to this app)`,
          );
        const token = param(params, PARAM_NAMES.social1Token);
        if (!token || token.length > 4096) return { ok: false, reason: "send the access token as social1_at (or fb_at)" };
        return verified(await graphVerify(cfg.social1, token), { token });
      }
      case "social2": {
        const token = param(params, PARAM_NAMES.social2Token);
        const secret = param(params, PARAM_NAMES.social2Secret);
        if (!token || !secret || token.length > 4096 || secret.length > 4096)
          return { ok: false, reason: "send the token and token secret as social2_tk and social2_ts (or tw_tk and tw_ts)" };
        return verified(await social2Profile(cfg.social2, { token, secret }), { token, secret });
      }
      case "aggregator":
        return this.verifyAggregator(ctx, cfg.aggregator.secret, params);
      case "oidc": {
        const idToken = params.id_token;
        if (!idToken) return { ok: false, reason: "send the ID token as id_token" };
        const r = await this.oidc.verify(p.oidc!.name, p.oidc!.cfg, idToken, params.nonce || undefined);
        return r.ok ? { ok: true, profile: r.profile, credentials: {} } : r;
      }
    }
  }

  /** The aggregator's signed user: signature, a recent timestamp, and each signature accepted once. */
  private async verifyAggregator(ctx: ApiContext, secret: string, params: Record<string, string>): Promise<Verified> {
    const uid = param(params, PARAM_NAMES.aggregatorUid);
    const timestamp = param(params, PARAM_NAMES.aggregatorTimestamp);
    const signature = param(params, PARAM_NAMES.aggregatorSignature);
    if (!uid || !timestamp || !signature)
      return { ok: false, reason: "send aggregator_uid, aggregator_ts and aggregator_sig (or gigya_uid, gigya_ts and gigya_sig)" };
    const r = checkAggregatorSignature({ uid, timestamp, signature, secretBase64: secret, nowMs: Date.now() });
    if (!r.ok) {
      const why = {
        malformed: "the signed user is malformed",
        stale: `the signature timestamp is more than ${AGGREGATOR_WINDOW_SECONDS} seconds away`,
        signature: "the signature does not verify",
      };
      return { ok: false, reason: why[r.reason] };
    }
    if (!(await this.deps.nonces.firstUse(`${ctx.env}|aggregator|${signature}`, (r.timestamp + AGGREGATOR_WINDOW_SECONDS + 1) * 1000)))
      return { ok: false, reason: "this signature was already used; sign in with the aggregator again" };
    return { ok: true, profile: { id: uid, info: { UID: uid } }, credentials: {} };
  }

  private signedIn(ctx: ApiContext, s: CompiledSchema): string {
    const p = ctx.principal;
    if (p.kind !== "user" || p.schema !== s.name) throw unauthorized();
    return p.username;
  }

  /** The user linked to the verified account and its JSON; a link whose user is gone is forgotten. */
  private async linkedUser(
    ctx: ApiContext,
    s: CompiledSchema,
    p: Provider,
    v: Extract<Verified, { ok: true }>,
  ): Promise<{ username: string; user: string } | null> {
    const link = await this.deps.links.byAccount(ctx, s.name, p.key, v.profile.id);
    if (!link) return null;
    const user = await this.deps.users.json(ctx, s, link.username);
    if (user !== null) return { username: link.username, user };
    await this.deps.links.removeAccount(ctx, s.name, p.key, v.profile.id);
    return null;
  }

  private alreadyLinked(p: Provider): ApiError {
    return badRequest(`this ${p.label} account is already linked to another user`);
  }

  /** Create a user linked to the account; its username is `username` or the provider's user id. */
  private async createUser(
    ctx: ApiContext,
    s: CompiledSchema,
    p: Provider,
    v: Extract<Verified, { ok: true }>,
    requested: string | undefined,
  ): Promise<{ username: string; user: string }> {
    const username = requested || v.profile.id;
    if (username.length > MAX_USERNAME) throw badRequest(`the username is longer than ${MAX_USERNAME} characters`);
    const body: Record<string, unknown> = { [s.pk]: username };
    const emailField = s.def.user?.email;
    if (emailField && emailField !== s.pk && v.profile.email) body[emailField] = v.profile.email;
    let user;
    try {
      user = await this.deps.data.createLinkedUser(
        ctx,
        s.name,
        body,
        this.deps.links.insertAfterCreate(s.name, p.key, v.profile.id, username, v.credentials),
      );
    } catch (e) {
      if ((e as { code?: string }).code === "SQLITE_CONSTRAINT") throw this.alreadyLinked(p);
      throw e;
    }
    if (user === null) throw badRequest(`the username "${username}" is taken; send another one as username`);
    return { username, user };
  }

  private async create(ctx: ApiContext, s: CompiledSchema, p: Provider, params: Record<string, string>): Promise<SocialAnswer> {
    const v = await this.verify(ctx, p, params);
    if (!v.ok) throw badRequest(`${p.label} refused the credentials: ${v.reason}`);
    if (await this.linkedUser(ctx, s, p, v)) throw this.alreadyLinked(p);
    const { user } = await this.createUser(ctx, s, p, v, params[s.pk] ?? params.username);
    return { status: 201, body: user };
  }

  private async login(
    ctx: ApiContext,
    s: CompiledSchema,
    p: Provider,
    params: Record<string, string>,
    action: Action,
    infoKey: string,
  ): Promise<SocialAnswer> {
    const v = await this.verify(ctx, p, params);
    if (!v.ok) throw unauthorized(`${p.label} refused the credentials: ${v.reason}`);
    const withCreate = action === "loginWithCreate" || action === "sessionLoginWithCreate";
    let linked = await this.linkedUser(ctx, s, p, v);
    if (linked) {
      if (p.kind === "social1" || p.kind === "social2") await this.deps.links.touch(ctx, s.name, p.key, v.profile.id, v.credentials);
    } else {
      if (!withCreate)
        throw unauthorized(`no user is linked to this ${p.label} account; create one first (createUserWith…) or link it (linkUserWith…)`);
      linked = await this.createUser(ctx, s, p, v, params[s.pk] ?? params.username);
    }
    const { username, user } = linked;
    // The provider vouches for the account (no verified-email requirement); a second factor still applies.
    await this.deps.accounts.admit(ctx, s, { username, user, method: "social" });
    if (action === "sessionLogin" || action === "sessionLoginWithCreate") {
      const session = await this.deps.accounts.issueCookieSession(ctx, s, username);
      return { status: 200, body: JSON.stringify({ username, [infoKey]: v.profile.info }), session };
    }
    return {
      status: 200,
      body: await this.deps.accounts.issueTokens(ctx, s, username, user, params.token_type === "bearer" ? "bearer" : "mac"),
    };
  }

  private async link(ctx: ApiContext, s: CompiledSchema, p: Provider, params: Record<string, string>): Promise<SocialAnswer> {
    const username = this.signedIn(ctx, s);
    // The aggregator answers 401 for any failed link (docs/api/social.md#link-and-unlink); the networks 400.
    const refuse = (m: string) => (p.kind === "aggregator" ? unauthorized(m) : badRequest(m));
    const v = await this.verify(ctx, p, params);
    if (!v.ok) throw refuse(`${p.label} refused the credentials: ${v.reason}`);
    if (!(await this.deps.links.link(ctx, s.name, p.key, v.profile.id, username, v.credentials)))
      throw refuse(`this ${p.label} account is already linked to another user`);
    return ok({});
  }

  private async unlink(ctx: ApiContext, s: CompiledSchema, p: Provider): Promise<SocialAnswer> {
    const username = this.signedIn(ctx, s);
    const link = await this.deps.links.byUser(ctx, s.name, p.key, username);
    if (!link) throw notFound(`${username} is not linked to ${p.label}`);
    const others = (await this.deps.links.providersOf(ctx, s.name, username)).filter((k) => k !== p.key);
    if (others.length === 0 && (await this.deps.users.passwordHash(ctx, s, username)) === null)
      throw badRequest(
        `${p.label} is the only way ${username} can log in: set a password first (resetPassword with only "new") or link another account`,
      );
    await this.deps.links.unlink(ctx, s.name, p.key, username);
    return ok({});
  }

  /** The signed-in user's link to a network that can be called on their behalf. */
  private async networkLink(ctx: ApiContext, s: CompiledSchema, p: Provider): Promise<Credentials> {
    if (p.kind !== "social1" && p.kind !== "social2") throw notFound(`${p.label} has no user info or messages`);
    const username = this.signedIn(ctx, s);
    const link = await this.deps.links.byUser(ctx, s.name, p.key, username);
    if (!link) throw notFound(`${username} is not linked to ${p.label}`);
    return link.credentials;
  }

  private refusedStored(p: Provider): ApiError {
    return badRequest(`${p.label} refused the stored credentials (expired or revoked); log in with ${p.label} again`);
  }

  private async info(ctx: ApiContext, s: CompiledSchema, p: Provider): Promise<SocialAnswer> {
    const c = await this.networkLink(ctx, s, p);
    const cfg = this.deps.settings(ctx.env);
    const r: SocialProfile | Refused =
      p.kind === "social1"
        ? await graphProfile(cfg.social1, c.token ?? "")
        : await social2Profile(cfg.social2, { token: c.token ?? "", secret: c.secret ?? "" });
    if (r === REFUSED) throw this.refusedStored(p);
    return ok(r.info);
  }

  private async post(ctx: ApiContext, s: CompiledSchema, p: Provider, params: Record<string, string>): Promise<SocialAnswer> {
    const c = await this.networkLink(ctx, s, p);
    const cfg = this.deps.settings(ctx.env);
    const text = param(params, p.kind === "social1" ? PARAM_NAMES.social1Message : PARAM_NAMES.social2Status);
    if (!text) throw badRequest(p.kind === "social1" ? "send the message as message" : "send the status as social2_st (or tw_st)");
    if (text.length > MAX_MESSAGE) throw badRequest(`the message is longer than ${MAX_MESSAGE} characters`);
    const r =
      p.kind === "social1"
        ? await graphPost(cfg.social1, c.token ?? "", text)
        : await social2StatusUpdate(cfg.social2, { token: c.token ?? "", secret: c.secret ?? "" }, text);
    if (r === REFUSED) throw this.refusedStored(p);
    return ok(r);
  }
}

function verified(r: SocialProfile | Refused, credentials: Credentials): Verified {
  return r === REFUSED
    ? { ok: false, reason: "the token is invalid, expired, revoked or for another app" }
    : { ok: true, profile: r, credentials };
}
