// Parse the API version from `Accept: application/vnd.service+json; version=N`. Pure.
// Lenient about the media type (clients have mistyped it) but strict about the version number.

import { ApiError } from "../errors.ts";

const VERSION_RE = /(?:^|[;,\s])version\s*=\s*("?)([^";,\s]*)\1/i;
export const MAX_API_VERSION = 1_000_000;

/** Clients send the same few Accept values over and over; remember their parse. */
const seen = new Map<string, number | null>();

/** The requested version, or null when the header names none. 400 for a malformed version. */
export function parseAcceptVersion(accept: string | null): number | null {
  if (accept === null) return null;
  const known = seen.get(accept);
  if (known !== undefined) return known;
  const v = parseVersion(accept);
  if (seen.size >= 256) seen.clear();
  seen.set(accept, v);
  return v;
}

function parseVersion(accept: string): number | null {
  const m = VERSION_RE.exec(accept);
  if (!m) return null;
  const raw = m[2]!;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) > MAX_API_VERSION)
    throw new ApiError(
      400,
      `invalid API version "${raw.slice(0, 32)}" in the Accept header; expected version=0 (development) or version=N (production)`,
    );
  return Number(raw);
}
