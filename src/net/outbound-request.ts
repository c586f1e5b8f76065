// One outbound HTTP(S) request to a URL a user supplied (a Web Push endpoint, later custom code's fetch):
// node:http(s) with a DNS lookup that admits only public addresses (checked at connect time, so a name cannot
// resolve to a public address for the check and a private one for the connection), a deadline, an abort
// signal, no redirects followed, and at most `maxBody` bytes of the answer read.

import type Http from "node:http";
import type Https from "node:https";
import { onFirstUse } from "../on-first-use.ts";
import { hostNotAllowed, publicOnlyLookup } from "./public-address.ts";

export interface OutboundInit {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes of the answer kept; the rest is discarded. */
  maxBody: number;
  /** Reach loopback and private addresses too (tests and trusted setups). */
  allowPrivate?: boolean;
  /** The lookup used when private addresses are refused (tests pass one with a fixed resolver). */
  lookup?: ReturnType<typeof publicOnlyLookup>;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const guarded = publicOnlyLookup();
/** node:http and node:https with one keep-alive agent each, loaded with the first request. */
const agents = onFirstUse(() => {
  const http = require("node:http") as typeof Http;
  const https = require("node:https") as typeof Https;
  return {
    http,
    https,
    "http:": new http.Agent({ keepAlive: true, maxSockets: 256 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: 256 }),
  };
});

/** Send one request; rejects on refusal (code EADDRNOTPUBLIC), network failure, timeout (name TimeoutError) or abort. */
export function outboundRequest(target: string | URL, init: OutboundInit): Promise<OutboundResponse> {
  const url = typeof target === "string" ? new URL(target) : target;
  return new Promise((resolve, reject) => {
    if (url.protocol !== "http:" && url.protocol !== "https:") return reject(new Error(`${url.protocol} URLs are not supported`));
    if (!init.allowPrivate) {
      const refusal = hostNotAllowed(url.hostname);
      if (refusal) return reject(Object.assign(new Error(`${url.hostname} is not allowed (${refusal})`), { code: "EADDRNOTPUBLIC" }));
    }
    if (init.signal?.aborted) return reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
    const net = agents();
    const req = (url.protocol === "https:" ? net.https : net.http).request(url, {
      method: init.method,
      headers: init.headers,
      agent: net[url.protocol],
      ...(init.allowPrivate ? {} : { lookup: init.lookup ?? guarded }),
    });
    const fail = (e: Error) => {
      cleanup();
      req.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(Object.assign(new Error(`timed out after ${init.timeoutMs} ms`), { name: "TimeoutError" })), init.timeoutMs);
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
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).subarray(0, init.maxBody).toString("utf8") });
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
