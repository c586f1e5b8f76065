// The core every call goes through: the API key and version headers, the user's token (MAC signature or Bearer),
// refreshing it before it expires and once on a 401, the clock correction from the server's Date header, JSON in
// and out, and BurrowError / NetworkError for failures.

import { BurrowError, type Json, NetworkError } from "./errors.ts";
import { macAuthorization } from "./mac.ts";
import { type TokenSet, type TokenStore, tokenStore } from "./storage.ts";

export interface ConnectOptions {
  url: string;
  publicKey: string;
  version?: number;
  tokenType?: "mac" | "bearer";
  storage?: "memory" | "local" | TokenStore;
  /** Live data over fetch streaming even where EventSource exists. */
  eventSource?: boolean;
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** A JSON value, or a string sent as it is. */
  body?: unknown;
  query?: string;
  headers?: Record<string, string>;
  /** false: send no token (logins, refresh). */
  signed?: boolean;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

/** Refresh this long before the access token's expiry. */
const EARLY_MS = 60_000;

export class Client {
  readonly base: string;
  readonly opts: ConnectOptions;
  /** Seconds to add to the local clock to get the server's. */
  skew = 0;
  private store: TokenStore;
  private storeKey: string;
  private token: TokenSet | null | undefined;
  private refreshing: Promise<TokenSet> | null = null;

  constructor(opts: ConnectOptions) {
    this.opts = opts;
    this.base = opts.url.replace(/\/+$/, "");
    this.store = tokenStore(opts.storage);
    this.storeKey = `burrow:${opts.publicKey}:${opts.version ?? "-"}`;
  }

  get tokenType(): "mac" | "bearer" {
    return this.opts.tokenType ?? "mac";
  }

  /** The API key and version headers of every call (the cross-origin marker lets a preflight find the environment). */
  keyHeaders(): Record<string, string> {
    const h: Record<string, string> = { "x-service-api-key": this.opts.publicKey };
    if (this.opts.version !== undefined) h.accept = `application/vnd.service+json; version=${this.opts.version}`;
    const here = (globalThis as { location?: { origin: string } }).location?.origin;
    if (here && here !== new URL(this.base).origin) h[`x-service-api-key-${this.opts.publicKey.toLowerCase()}`] = "1";
    return h;
  }

  async currentToken(): Promise<TokenSet | null> {
    if (this.token === undefined) {
      const saved = await this.store.get(this.storeKey);
      try {
        this.token = saved ? (JSON.parse(saved) as TokenSet) : null;
      } catch {
        this.token = null;
      }
    }
    return this.token;
  }

  async setToken(t: TokenSet | null): Promise<void> {
    this.token = t;
    await (t ? this.store.set(this.storeKey, JSON.stringify(t)) : this.store.remove(this.storeKey));
  }

  /** Keep the token set of a login answer; answers the user object. */
  async keep(answer: Json, schema: string, user?: string): Promise<Json> {
    const u = answer.service?.user;
    await this.setToken({
      access_token: answer.access_token,
      mac_key: answer.mac_key,
      refresh_token: answer.refresh_token,
      token_type: answer.token_type,
      expires_at: Date.now() + (answer.expires_in ?? 3600) * 1000,
      schema,
      user: user ?? u?.username,
    });
    return u;
  }

  /** A new token set from the refresh token (one at a time); a refused refresh ends the login here too. */
  refresh(): Promise<TokenSet> {
    this.refreshing ??= (async () => {
      const t = await this.currentToken();
      if (!t) throw new BurrowError(401, { error: "not signed in" });
      try {
        const a = await this.call("POST", `/${t.schema}/refreshToken`, {
          body: { refresh_token: t.refresh_token, token_type: t.token_type },
          signed: false,
        });
        await this.keep(a.body, t.schema, t.user);
        return this.token!;
      } catch (e) {
        if (e instanceof BurrowError && e.status === 401) await this.setToken(null);
        throw e;
      }
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** The Authorization header for a request, or nothing when signed out. */
  async authorization(method: string, url: URL, t: TokenSet | null): Promise<string | null> {
    if (!t) return null;
    return t.token_type === "bearer" || !t.mac_key
      ? `Bearer ${t.access_token}`
      : macAuthorization(t.access_token, t.mac_key, method, url, this.skew);
  }

  /** One call; 2xx answers, anything else throws. */
  async call(method: string, path: string, o: CallOptions = {}): Promise<Answer> {
    const url = new URL(this.base + path + (o.query ? `?${o.query}` : ""));
    const body = o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    let t = o.signed === false ? null : await this.currentToken();
    if (t && t.expires_at - EARLY_MS < Date.now()) t = await this.refresh();
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { ...this.keyHeaders(), ...o.headers };
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const auth = await this.authorization(method, url, t);
      if (auth) headers.authorization = auth;
      const r = await this.send(url, { method, headers, body });
      const parsed = await readBody(r);
      if (r.ok) return { status: r.status, headers: r.headers, body: parsed };
      if (r.status === 401 && t && attempt === 0) {
        // A clock off by more than the window: retry with the server's time; any other refusal: refresh once.
        const m = /server time (\d+)/.exec(parsed?.error ?? "");
        if (m) this.skew = Number(m[1]) - Date.now() / 1000;
        else {
          // Another client on the same store (a second tab) may have refreshed already: take its tokens.
          this.token = undefined;
          const stored = await this.currentToken();
          t = stored && stored.access_token !== t.access_token ? stored : await this.refresh();
        }
        continue;
      }
      throw new BurrowError(r.status, parsed);
    }
  }

  /** fetch, with the clock correction taken from the answer's Date header. */
  async send(url: URL | string, init: RequestInit): Promise<Response> {
    let r: Response;
    try {
      r = await (this.opts.fetch ?? fetch)(url, init);
    } catch (e) {
      throw new NetworkError(`${init.method ?? "GET"} ${url} failed: ${(e as Error)?.message ?? e}`, e);
    }
    const date = Date.parse(r.headers.get("date") ?? "");
    // Date has whole seconds: only a difference past a few of them is a skew worth correcting.
    if (date) {
      const d = (date - Date.now()) / 1000;
      this.skew = Math.abs(d) > 5 ? d : 0;
    }
    return r;
  }
}

/** JSON when the answer says so, text for text, a Blob for anything else; null for no body. */
export async function readBody(r: Response): Promise<Json> {
  const type = r.headers.get("content-type") ?? "";
  if (/json/.test(type)) {
    const text = await r.text();
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return text;
    }
  }
  if (!type || /^text\//.test(type)) return r.text();
  return r.blob();
}
