// One call to a social provider (Graph /me, verify_credentials, an OpenID issuer's discovery document): JSON in,
// JSON out, over keep-alive connections, bounded in time and size. A provider that cannot be reached, fails
// (5xx) or answers something other than JSON is a 502 whose message names the provider and nothing else: URLs
// carry access tokens, so they never reach an error or a log.

import { ApiError } from "../errors.ts";
import { outboundRequest } from "../net/outbound-request.ts";

const TIMEOUT_MS = 10_000;
const MAX_ANSWER = 1024 * 1024;

export interface ProviderAnswer {
  status: number;
  /** The parsed JSON answer (undefined for an empty body). */
  json: unknown;
}

/** 502 for a provider that did not give a usable answer; `debug` goes to the debug log only. */
export const providerDown = (label: string, what: string, debug?: string) =>
  new ApiError(502, `${label} ${what}; try again later`, { debug });

/**
 * Call a provider; 2xx and 4xx answers come back parsed (the caller decides what a refusal means), anything else
 * is a 502. Provider base URLs are the administrator's settings, so loopback and private addresses are allowed
 * (tests and on-premises proxies point them there).
 */
export async function callProvider(
  label: string,
  url: URL,
  init: { method: "GET" | "POST"; headers?: Record<string, string>; body?: string },
): Promise<ProviderAnswer> {
  let res;
  try {
    res = await outboundRequest(url, {
      method: init.method,
      headers: { accept: "application/json", "user-agent": "Burrow", ...init.headers },
      body: init.body,
      timeoutMs: TIMEOUT_MS,
      maxBody: MAX_ANSWER,
      allowPrivate: true,
    });
  } catch (e) {
    const err = e as { name?: string; code?: string };
    throw providerDown(label, err.name === "TimeoutError" ? "did not answer in time" : "could not be reached", err.code ?? err.name);
  }
  if (res.status >= 500 || res.status < 200 || (res.status >= 300 && res.status < 400)) throw providerDown(label, `answered ${res.status}`);
  if (res.body.trim() === "") return { status: res.status, json: undefined };
  try {
    return { status: res.status, json: JSON.parse(res.body) };
  } catch {
    throw providerDown(label, "answered something other than JSON");
  }
}
