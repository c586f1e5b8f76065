// One outbound HTTP(S) request to a URL someone supplied: node:http(s), a deadline, an abort signal, no redirects
// followed, and at most `maxBody` bytes of the answer read. Callers are guarded (custom code's http service, Web
// Push endpoints: only public addresses) or unguarded (social providers, whose base URLs are the administrator's
// settings, and the guarded callers when a setting allows private addresses).
// Guarded and unguarded requests never share a connection: each has its own keep-alive agents, and a guarded
// agent opens every connection through a public-only lookup (checked at connect time, so a name cannot resolve
// to a public address for the check and a private one for the connection). A pooled connection is reused only
// by requests of the same guard and lookup, so one opened for an unguarded caller to a name that resolves to a
// private address never carries a guarded request. IP literals are judged before any connection (they are not
// looked up).

import type Http from "node:http";
import type Https from "node:https";
import { onFirstUse } from "../on-first-use.ts";
import { hostNotAllowed, isPublicOnlyLookup, publicOnlyLookup } from "./public-address.ts";

/** A DNS lookup as node:net calls it. */
export type Lookup = ReturnType<typeof publicOnlyLookup>;

export interface OutboundInit {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes of the answer kept; the rest is discarded. */
  maxBody: number;
  /** Reach loopback and private addresses too (administrator-set URLs, trusted setups). */
  allowPrivate?: boolean;
  /**
   * The lookup guarded requests resolve through instead of the public-only one on the system resolver (tests: a
   * fixed resolver). Only one made by publicOnlyLookup is accepted, so every address is still checked. Ignored
   * with allowPrivate.
   */
  lookup?: Lookup;
  /** The lookup unguarded requests (allowPrivate) resolve through instead of the system's (tests: names to loopback). */
  unguardedLookup?: Lookup;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Keep-alive agents of one guard and lookup, one per protocol. */
interface Pool {
  "http:": Http.Agent;
  "https:": Https.Agent;
}

const modules = onFirstUse(() => ({ http: require("node:http") as typeof Http, https: require("node:https") as typeof Https }));
const publicOnly = publicOnlyLookup();
/**
 * How long a pooled connection may sit idle before it is closed (an agent's socket timeout closes only free
 * sockets). Without it a burst (a Web Push broadcast opens up to its in-flight limit of connections to one
 * service) leaves its connections open for as long as the far end keeps them. Read when a pool is made.
 */
export const outboundPoolSettings = { idleSocketMs: 15_000 };
/** The key of the unguarded pool that resolves through the system resolver. */
const SYSTEM = {};
/** Pools by lookup, guarded and unguarded apart: a connection never moves from one guard or lookup to another. */
const pools = { guarded: new WeakMap<object, Pool>(), unguarded: new WeakMap<object, Pool>() };

/** The agents for a guard and lookup (none: the system's), made with the first request that needs them. */
function poolFor(guarded: boolean, lookup: Lookup | undefined): Pool {
  const key = lookup ?? SYSTEM;
  const byLookup = guarded ? pools.guarded : pools.unguarded;
  let pool = byLookup.get(key);
  if (!pool) {
    const { http, https } = modules();
    // The agent's own lookup wins over a request's, so every socket this pool opens goes through it.
    const options = {
      keepAlive: true,
      maxSockets: 256,
      timeout: outboundPoolSettings.idleSocketMs,
      ...(key === SYSTEM ? {} : { lookup: key as Lookup }),
    };
    pool = { "http:": new http.Agent(options), "https:": new https.Agent(options) };
    byLookup.set(key, pool);
  }
  return pool;
}

const refused = (message: string) => Object.assign(new Error(message), { code: "EADDRNOTPUBLIC" });

/** Send one request; rejects on refusal (code EADDRNOTPUBLIC), network failure, timeout (name TimeoutError) or abort. */
export function outboundRequest(target: string | URL, init: OutboundInit): Promise<OutboundResponse> {
  const url = typeof target === "string" ? new URL(target) : target;
  return new Promise((resolve, reject) => {
    if (url.protocol !== "http:" && url.protocol !== "https:") return reject(new Error(`${url.protocol} URLs are not supported`));
    const guarded = !init.allowPrivate;
    if (guarded) {
      // Literals never reach the lookup, so they are judged here; names are judged by the pool's lookup.
      const refusal = hostNotAllowed(url.hostname);
      if (refusal) return reject(refused(`${url.hostname} is not allowed (${refusal})`));
      if (init.lookup && !isPublicOnlyLookup(init.lookup))
        return reject(new Error("a guarded request resolves names only through a lookup made by publicOnlyLookup"));
    }
    if (init.signal?.aborted) return reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
    const { http, https } = modules();
    const lookup = guarded ? (init.lookup ?? publicOnly) : init.unguardedLookup;
    const pool = poolFor(guarded, lookup);
    const req = (url.protocol === "https:" ? https : http).request(url, {
      method: init.method,
      headers: init.headers,
      agent: pool[url.protocol],
      ...(lookup ? { lookup } : {}),
    });
    const fail = (e: Error) => {
      cleanup();
      req.destroy();
      reject(e);
    };
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`timed out after ${init.timeoutMs} ms`), { name: "TimeoutError" })),
      init.timeoutMs,
    );
    const onAbort = () => fail(Object.assign(new Error("aborted"), { name: "AbortError" }));
    init.signal?.addEventListener("abort", onAbort, { once: true });
    const cleanup = () => {
      clearTimeout(timer);
      init.signal?.removeEventListener("abort", onAbort);
    };
    req.on("error", (e) => {
      cleanup();
      reject(e);
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        cleanup();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).subarray(0, init.maxBody).toString("utf8"),
        });
      };
      res.on("data", (c: Buffer) => {
        if (size < init.maxBody) chunks.push(c);
        size += c.length;
        if (size >= init.maxBody) {
          finish();
          res.destroy();
        }
      });
      res.on("end", finish);
      res.on("error", (e) => {
        if (!done) fail(e);
      });
    });
    req.end(init.body);
  });
}
