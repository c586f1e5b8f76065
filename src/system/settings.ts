// Per-environment runtime settings: the one place features keep their configuration (CORS, rate limits,
// SMTP, push, ...). A typed spec validates writes; secrets are write-only and read back as {"set": bool}.

import type { Client } from "@libsql/core/api";
import { badRequest } from "../errors.ts";
import { BUMP_EPOCH, readEpoch } from "./system-db.ts";
import { ENVIRONMENTS, type EnvName } from "./environments.ts";
import { isPlainObject as isObj } from "../plain-object.ts";
import { AUTH_SETTINGS, CODE_SETTINGS } from "./settings-code.ts";
import { isTimeZone } from "../time-zone.ts";

export type Leaf = {
  type: "string" | "integer" | "boolean" | "string[]" | "string-map" | "oidc-map";
  secret?: boolean;
  url?: boolean;
  /** An IANA time zone name. */
  zone?: boolean;
  min?: number;
  max?: number;
  oneOf?: readonly string[];
  /** A server-wide setting, read from (and only written in) this environment's document. */
  only?: EnvName;
  default: Record<EnvName, unknown>;
};
export type Spec = { [key: string]: Leaf | Spec };
type SettingsDoc = { [key: string]: unknown };

const both = (v: unknown) => ({ development: v, production: v });

/** Every known setting with its type and per-environment default. Features add their keys here. */
const SETTINGS_SPEC: Spec = {
  app: {
    name: { type: "string", default: both("Burrow app") },
  },
  cors: {
    origins: { type: "string[]", default: { development: ["*"], production: [] } },
  },
  rateLimits: {
    ipPerMinute: { type: "integer", min: 1, max: 1_000_000, default: both(300) },
    failedLoginsPerAccount: { type: "integer", min: 1, max: 1_000_000, default: both(10) },
    failedLoginWindowMinutes: { type: "integer", min: 1, max: 10_080, default: both(15) },
    /** Accounts one client IP (an IPv6 client by its /64) may create in an hour with the public key. */
    signupsPerIpPerHour: { type: "integer", min: 1, max: 1_000_000, default: { development: 1000, production: 100 } },
  },
  smtp: {
    host: { type: "string", default: both("") },
    port: { type: "integer", min: 1, max: 65535, default: both(587) },
    secure: { type: "boolean", default: both(false) },
    user: { type: "string", default: both("") },
    password: { type: "string", secret: true, default: both("") },
    from: { type: "string", default: both("") },
  },
  push: {
    clientSend: { type: "boolean", default: { development: true, production: false } },
    apns: {
      url: { type: "string", default: { development: "https://api.sandbox.push.apple.com", production: "https://api.push.apple.com" } },
      topic: { type: "string", default: both("") },
      keyP8: { type: "string", secret: true, default: both("") },
      keyId: { type: "string", default: both("") },
      teamId: { type: "string", default: both("") },
      p12: { type: "string", secret: true, default: both("") },
      p12Password: { type: "string", secret: true, default: both("") },
      ca: { type: "string", default: both("") },
    },
    fcm: {
      url: { type: "string", default: both("https://fcm.googleapis.com") },
      serviceAccount: { type: "string", secret: true, default: both("") },
    },
    web: {
      vapidPublicKey: { type: "string", default: both("") },
      vapidPrivateKey: { type: "string", secret: true, default: both("") },
      subject: { type: "string", default: both("mailto:push@localhost") },
      allowPrivateEndpoints: { type: "boolean", default: both(false) },
    },
    concurrency: { type: "integer", min: 1, max: 10_000, default: both(500) },
  },
  code: CODE_SETTINGS,
  auth: AUTH_SETTINGS,
  social: {
    /** The Graph-style network (the original: Facebook): GET <baseUrl>/me?fields=...&access_token=...&appsecret_proof=... */
    social1: {
      appId: { type: "string", default: both("") },
      appSecret: { type: "string", secret: true, default: both("") },
      baseUrl: { type: "string", url: true, default: both("https://graph.facebook.com") },
    },
    /** The OAuth 1.0a network (the original: Twitter): <baseUrl>/account/verify_credentials.json, signed. */
    social2: {
      consumerKey: { type: "string", default: both("") },
      consumerSecret: { type: "string", secret: true, default: both("") },
      baseUrl: { type: "string", url: true, default: both("https://api.twitter.com/1.1") },
    },
    /** The social-login aggregator (the original: Gigya): its partner secret, Base64 as the provider shows it. */
    aggregator: {
      secret: { type: "string", secret: true, default: both("") },
      baseUrl: { type: "string", url: true, default: both("https://socialize.gigya.com") },
    },
    /** OpenID Connect providers by name: {"apple": {"clientIds": [...]}, "acme": {"issuer": "https://...", "clientIds": [...]}}. */
    oidc: { type: "oidc-map", default: both({}) },
  },
  files: {
    store: { type: "string", oneOf: ["local", "s3"], default: both("local") },
    maxBytes: { type: "integer", min: 1, max: 1024 ** 3, default: both(20 * 1024 * 1024) },
    s3: {
      endpoint: { type: "string", default: both("") },
      bucket: { type: "string", default: both("") },
      region: { type: "string", default: both("") },
      accessKeyId: { type: "string", default: both("") },
      secretAccessKey: { type: "string", secret: true, default: both("") },
      prefix: { type: "string", default: both("") },
    },
  },
  /** Live data (/_live): change log retention and the limits of streams (docs/api/live.md). */
  live: {
    /** Hours the change log keeps changes for streams that reconnect; older gaps get `event: reset`. */
    retentionHours: { type: "integer", min: 1, max: 720, default: both(24) },
    /** Open stream connections per client IP (an IPv6 client by its /64) on one node. */
    streamsPerIp: { type: "integer", min: 1, max: 100_000, default: { development: 1000, production: 100 } },
    subscriptionsPerStream: { type: "integer", min: 1, max: 1000, default: both(50) },
    channelsPerStream: { type: "integer", min: 1, max: 1000, default: both(20) },
    /** Bytes a slow client may leave unread before its connection is closed (it resumes from the change log). */
    bufferBytes: { type: "integer", min: 16 * 1024, max: 64 * 1024 * 1024, default: both(1024 * 1024) },
  },
  /** Scheduled backups of the whole data directory: server-wide, so read from production's settings only. */
  backups: {
    /** Hours between scheduled backups; 0 = no schedule (POST /_admin/api/backups and `burrow backup` still work). */
    every: { type: "integer", min: 0, max: 8760, only: "production", default: both(0) },
    /** Backups kept in <data dir>/backups/ after each new one; older ones are deleted. */
    keep: { type: "integer", min: 1, max: 1000, only: "production", default: both(7) },
    /** Also upload each backup to production's S3 file store (files.s3.*), under <prefix>backups/. */
    s3: { type: "boolean", only: "production", default: both(false) },
  },
};

const isLeaf = (s: Leaf | Spec): s is Leaf => typeof (s as Leaf).type === "string" && "default" in s;

/** The full settings document of an environment: stored values over defaults. */
export function resolveSettings(env: EnvName, stored: SettingsDoc, spec: Spec = SETTINGS_SPEC): SettingsDoc {
  const out: SettingsDoc = {};
  for (const [k, s] of Object.entries(spec)) {
    const v = Object.hasOwn(stored, k) ? stored[k] : undefined;
    out[k] = isLeaf(s) ? (v === undefined ? structuredClone(s.default[env]) : v) : resolveSettings(env, isObj(v) ? v : {}, s);
  }
  return out;
}

/** The spec as the admin console draws its settings form: each leaf's type, limits and defaults, sections nested. */
export function describeSettings(spec: Spec = SETTINGS_SPEC): SettingsDoc {
  const out: SettingsDoc = {};
  for (const [k, s] of Object.entries(spec))
    out[k] = isLeaf(s) ? { ...s, default: s.secret ? both(null) : s.default } : describeSettings(s);
  return out;
}

/** The document as the admin API shows it: secrets replaced by whether they are set. */
export function redactSettings(doc: SettingsDoc, spec: Spec = SETTINGS_SPEC): SettingsDoc {
  const out: SettingsDoc = {};
  for (const [k, s] of Object.entries(spec)) {
    const v = doc[k];
    out[k] = isLeaf(s) ? (s.secret ? redactSecret(s, v) : v) : redactSettings(isObj(v) ? v : {}, s);
  }
  return out;
}

/** A secret as reads show it: whether it is set (a map: also its names, never the values). */
function redactSecret(s: Leaf, v: unknown): unknown {
  if (s.type === "string-map") return { set: isObj(v) && Object.keys(v).length > 0, keys: isObj(v) ? Object.keys(v).sort() : [] };
  return { set: typeof v === "string" && v !== "" };
}

/** A redacted secret sent back unchanged: {set} (a map: {set, keys}). */
function isRedaction(s: Leaf, v: unknown): boolean {
  if (!isObj(v) || typeof v.set !== "boolean") return false;
  const keys = Object.keys(v);
  return s.type === "string-map" ? keys.length === 2 && Array.isArray(v.keys) : keys.length === 1;
}

/** Settings of a patch that only another environment's document holds (server-wide ones), as "a.b" paths. */
export function otherEnvSettings(env: EnvName, patch: unknown, spec: Spec = SETTINGS_SPEC, path = ""): { path: string; only: EnvName }[] {
  if (!isObj(patch)) return [];
  const out: { path: string; only: EnvName }[] = [];
  for (const [k, v] of Object.entries(patch)) {
    const s = Object.hasOwn(spec, k) ? spec[k]! : undefined;
    const p = path ? `${path}.${k}` : k;
    if (!s) continue;
    if (isLeaf(s)) {
      if (s.only && s.only !== env) out.push({ path: p, only: s.only });
    } else out.push(...otherEnvSettings(env, v, s, p));
  }
  return out;
}

/** Merge a patch into the stored document, validating every key. null resets a setting to its default. */
export function mergeSettings(stored: SettingsDoc, patch: unknown, spec: Spec = SETTINGS_SPEC, path = ""): SettingsDoc {
  if (!isObj(patch)) throw badRequest(`settings${path ? ` "${path}"` : ""} must be a JSON object`);
  const out: SettingsDoc = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    const p = path ? `${path}.${k}` : k;
    if (!Object.hasOwn(spec, k)) throw badRequest(`unknown setting "${p}"`);
    const s = spec[k]!;
    if (v === null) {
      delete out[k];
      continue;
    }
    if (!isLeaf(s)) {
      out[k] = mergeSettings(isObj(stored[k]) ? (stored[k] as SettingsDoc) : {}, v, s, p);
      continue;
    }
    if (s.secret && isRedaction(s, v)) continue; // round-tripped redaction
    out[k] = checkLeaf(s, v, p);
  }
  return out;
}

function checkLeaf(s: Leaf, v: unknown, p: string): unknown {
  switch (s.type) {
    case "string":
      if (s.oneOf && !(typeof v === "string" && s.oneOf.includes(v)))
        throw badRequest(`setting "${p}" must be one of ${s.oneOf.join(", ")}`);
      if (s.url && !(typeof v === "string" && isHttpUrl(v))) throw badRequest(`setting "${p}" must be an http(s) URL without a query`);
      if (s.zone && !(typeof v === "string" && isTimeZone(v)))
        throw badRequest(`setting "${p}" must be a time zone (an IANA name such as "Europe/Berlin", or "UTC")`);
      if (typeof v === "string" && v.length <= 65536) return v;
      throw badRequest(`setting "${p}" must be a string`);
    case "boolean":
      if (typeof v === "boolean") return v;
      throw badRequest(`setting "${p}" must be true or false`);
    case "integer":
      if (typeof v === "number" && Number.isSafeInteger(v) && (s.min === undefined || v >= s.min) && (s.max === undefined || v <= s.max))
        return v;
      throw badRequest(`setting "${p}" must be an integer${s.min !== undefined ? ` from ${s.min} to ${s.max}` : ""}`);
    case "string-map": {
      const names = isObj(v) ? Object.keys(v) : null;
      if (
        names &&
        names.length <= 1000 &&
        names.every(
          (n) =>
            /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(n) &&
            typeof v![n as keyof typeof v] === "string" &&
            (v![n as keyof typeof v] as string).length <= 65536,
        )
      )
        return Object.fromEntries(names.map((n) => [n, (v as Record<string, string>)[n]]));
      throw badRequest(`setting "${p}" must be an object of names (letters, digits, _ . -) to string values`);
    }
    case "oidc-map":
      return checkOidcMap(v, p);
    case "string[]":
      if (Array.isArray(v) && v.length <= 1000 && v.every((x) => typeof x === "string" && x.length <= 2048)) return v;
      throw badRequest(`setting "${p}" must be an array of strings`);
  }
}

/** Issuers of the providers that need no "issuer" setting. */
export const KNOWN_OIDC_ISSUERS: Readonly<Record<string, string>> = {
  apple: "https://appleid.apple.com",
  google: "https://accounts.google.com",
};

export interface OidcProviderSetting {
  issuer: string;
  clientIds: string[];
}

/** social.oidc: provider name -> {issuer (a URL; apple and google have theirs), clientIds (the accepted audiences)}. */
function checkOidcMap(v: unknown, p: string): Record<string, OidcProviderSetting> {
  if (!isObj(v) || Object.keys(v).length > 50)
    throw badRequest(`setting "${p}" must be an object of provider names to {"issuer", "clientIds"}`);
  const out: Record<string, OidcProviderSetting> = {};
  for (const [name, cfg] of Object.entries(v)) {
    const at = `${p}.${name}`;
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name))
      throw badRequest(`setting "${at}": a provider name is 1 to 32 lowercase letters, digits, _ or -, starting with a letter`);
    if (!isObj(cfg)) throw badRequest(`setting "${at}" must be an object {"issuer", "clientIds"}`);
    for (const k of Object.keys(cfg)) if (k !== "issuer" && k !== "clientIds") throw badRequest(`unknown setting "${at}.${k}"`);
    const issuer = cfg.issuer ?? KNOWN_OIDC_ISSUERS[name];
    if (typeof issuer !== "string" || !isHttpUrl(issuer))
      throw badRequest(
        `setting "${at}.issuer" must be the issuer's http(s) URL${KNOWN_OIDC_ISSUERS[name] ? "" : " (only apple and google have a default)"}`,
      );
    const ids = cfg.clientIds;
    if (
      !Array.isArray(ids) ||
      ids.length === 0 ||
      ids.length > 50 ||
      !ids.every((x) => typeof x === "string" && x.length > 0 && x.length <= 512)
    )
      throw badRequest(`setting "${at}.clientIds" must be a non-empty array of the client ids (audiences) the app uses`);
    out[name] = { issuer: issuer.replace(/\/+$/, ""), clientIds: [...ids] };
  }
  return out;
}

/**
 * A patch that touches social.social1 may not leave it with an app id and no app secret: sign-in checks each token
 * with the provider as issued to this app, which takes the secret.
 */
function checkSocial1(patch: unknown, resolved: SettingsDoc): void {
  if (!isObj(patch) || !isObj(patch.social) || !Object.hasOwn(patch.social, "social1")) return;
  const s1 = isObj(resolved.social) && isObj(resolved.social.social1) ? resolved.social.social1 : {};
  if (s1.appId && !s1.appSecret)
    throw badRequest(
      `setting "social.social1.appSecret" is required with social.social1.appId: sign-in checks each token with the provider as issued to this app, using the app secret`,
    );
}

function isHttpUrl(s: string): boolean {
  if (s.length > 2048) return false;
  try {
    const u = new URL(s);
    return (u.protocol === "https:" || u.protocol === "http:") && u.search === "" && u.hash === "";
  } catch {
    return false;
  }
}

/** Settings of both environments, cached in memory; reloaded when another process changes them. */
export class Settings {
  private docs = new Map<EnvName, SettingsDoc>();
  constructor(private readonly db: Client) {}

  async load(): Promise<void> {
    const rs = await this.db.execute(`SELECT env, doc FROM settings`);
    const stored = new Map(rs.rows.map((r) => [r.env as string, JSON.parse(r.doc as string) as SettingsDoc]));
    for (const env of ENVIRONMENTS) this.docs.set(env, resolveSettings(env, stored.get(env) ?? {}));
  }

  /** The configuration epoch seen by the last refresh(). */
  private seenEpoch: number | undefined;

  /**
   * Reload if the configuration epoch moved since the last refresh (settings saved by another thread or process;
   * the first call always loads); answers whether it reloaded. The epoch is read before the settings, so what is
   * loaded is at least as new as the epoch remembered.
   */
  async refresh(): Promise<boolean> {
    const epoch = await readEpoch(this.db);
    if (epoch === this.seenEpoch) return false;
    await this.load();
    this.seenEpoch = epoch;
    return true;
  }

  /** The resolved settings (secrets included) for server-side use. */
  get(env: EnvName): SettingsDoc {
    return this.docs.get(env) ?? resolveSettings(env, {});
  }

  async stored(env: EnvName): Promise<SettingsDoc> {
    const rs = await this.db.execute({ sql: `SELECT doc FROM settings WHERE env = ?`, args: [env] });
    return rs.rows.length ? (JSON.parse(rs.rows[0]!.doc as string) as SettingsDoc) : {};
  }

  /** Merge a patch and store it; `validate` sees the resolved document first and may refuse it (400). */
  async update(env: EnvName, patch: unknown, validate?: (env: EnvName, resolved: SettingsDoc) => void): Promise<SettingsDoc> {
    const [misplaced] = otherEnvSettings(env, patch);
    if (misplaced)
      throw badRequest(
        `setting "${misplaced.path}" is server-wide: set it in ${misplaced.only}'s settings (PUT /_admin/api/settings/${misplaced.only})`,
      );
    const next = mergeSettings(await this.stored(env), patch);
    checkSocial1(patch, resolveSettings(env, next));
    validate?.(env, resolveSettings(env, next));
    await this.db.batch(
      [
        {
          sql: `INSERT INTO settings (env, doc, updated) VALUES (?, ?, ?) ON CONFLICT(env) DO UPDATE SET doc = excluded.doc, updated = excluded.updated`,
          args: [env, JSON.stringify(next), Date.now()],
        },
        BUMP_EPOCH,
      ],
      "write",
    );
    const resolved = resolveSettings(env, next);
    this.docs.set(env, resolved);
    return resolved;
  }
}
