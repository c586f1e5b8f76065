// `burrow health [--url URL]`: GET <url>/_health and exit 0 on a 200, 1 otherwise (one line on stderr).
// For container HEALTHCHECKs and probes on machines without curl (the scratch image). Without --url it asks the
// server this configuration would start (--http / BURROW_HTTP), with 0.0.0.0 and :: meaning this machine.

import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";

/** The URL of the local server the configuration describes. */
export function localUrl(http: Config["http"]): string {
  const host = http.host === "0.0.0.0" || http.host === "" ? "127.0.0.1" : http.host === "::" ? "::1" : http.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${http.port}`;
}

export async function health(config: Config, flags: Record<string, string | boolean>): Promise<void> {
  const base = typeof flags["--url"] === "string" ? flags["--url"].replace(/\/+$/, "") : localUrl(config.http);
  const url = `${base}/_health`;
  let status: number;
  try {
    status = (await fetch(url, { signal: AbortSignal.timeout(5000), redirect: "manual" })).status;
  } catch (e) {
    throw new ApiError(503, `health: ${url} did not answer (${(e as { code?: string }).code ?? (e as Error).message})`);
  }
  if (status !== 200) throw new ApiError(503, `health: ${url} answered ${status}`);
  process.stdout.write(`ok ${url}\n`);
}
