// The options of the listening server (Bun.serve, through app.listen): one definition, so that tests listen
// exactly as `burrow serve` does.

import type { Config } from "../config.ts";

/**
 * Bun's own body limit, set out of reach: past it Bun answers a bodiless 413 itself, before any JS runs. The
 * configured limit (config.bodyLimit) is enforced by readText on every body, declared or streamed, with the
 * JSON 413 and `Connection: close`, so the rest of an oversized body is never read.
 */
export const BUN_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

export function serveOptions(config: Pick<Config, "http">) {
  return { hostname: config.http.host, port: config.http.port, maxRequestBodySize: BUN_BODY_LIMIT };
}
