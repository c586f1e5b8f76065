// Percent-escapes in URL paths, checked in one place for every route that takes path parameters: a malformed
// escape is 400 `malformed percent-encoding in the URL path` (docs/api/README.md). The router decodes the
// parameters itself; this only tells a malformed escape from a well-formed one, or decodes a raw segment.

import { ApiError } from "../errors.ts";
import { pathOf } from "./origin.ts";

export const MALFORMED_ESCAPE = "malformed percent-encoding in the URL path";

/**
 * 400 when a path parameter came from a malformed escape. Elysia's router gives null for one; Bun's native router
 * gives U+FFFD, which a well-formed %EF%BF%BD gives too, so then the raw path decides (rare, and never on a plain
 * path).
 */
export function checkPathParams(params: Record<string, string | null>, request: Request): void {
  for (const k in params) {
    const v = params[k];
    if (v === null || (v?.includes("\uFFFD") && !decodablePath(request.url))) throw new ApiError(400, MALFORMED_ESCAPE);
  }
}

/** One raw path segment (or a part of one), decoded; 400 for a malformed escape. */
export function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new ApiError(400, MALFORMED_ESCAPE);
  }
}

/** Whether the path of a URL decodes (every % starts a valid escape of UTF-8). */
function decodablePath(url: string): boolean {
  try {
    decodeURIComponent(pathOf(url));
    return true;
  } catch {
    return false;
  }
}
