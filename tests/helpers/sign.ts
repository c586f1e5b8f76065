// Signing test requests the way the client SDKs do: MAC (OAuth 2.0) headers and OAuth 1.0 headers.

import { macSignature, normalizedString } from "../../src/auth/mac.ts";
import { signOAuth1 } from "../../src/auth/oauth1.ts";

let counter = 0;

export interface MacCredentials {
  access_token: string;
  mac_key: string;
}

/** `Authorization: MAC ...` for a request to http://localhost<path> (the harness's URL), or another host/port. */
export function macAuth(
  creds: MacCredentials,
  method: string,
  path: string,
  opts: { host?: string; port?: number; ts?: number; nonce?: string } = {},
): string {
  const ts = String(opts.ts ?? Math.floor(Date.now() / 1000));
  const nonce = opts.nonce ?? `n${++counter}`;
  const normalized = normalizedString({ ts, nonce, method, uri: path, host: opts.host ?? "localhost", port: opts.port ?? 80 });
  return `MAC id="${creds.access_token}",ts="${ts}",nonce="${nonce}",mac="${macSignature(creds.mac_key, normalized)}"`;
}

/** `Authorization: OAuth ...` signed with an environment's keys. */
export function oauthAuth(
  publicKey: string,
  privateKey: string,
  method: string,
  url: string,
  opts: { formBody?: string; timestamp?: number; nonce?: string } = {},
): string {
  return signOAuth1({
    method,
    url,
    consumerKey: publicKey,
    consumerSecret: privateKey,
    timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000),
    nonce: opts.nonce ?? `nonce-${++counter}-${Math.random().toString(36).slice(2)}`,
    formBody: opts.formBody,
  } as Parameters<typeof signOAuth1>[0]);
}
