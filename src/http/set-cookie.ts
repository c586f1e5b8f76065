// Writing the session cookie of the legacy login so that the original Java/Android SDK finds it: the SDK looks up
// the response header named exactly `Set-Cookie`. Bun.serve writes a Set-Cookie header set on a Response as
// `set-cookie`, but writes cookies set through the request's cookie map (`request.cookies`, on requests its native
// router hands over) as `Set-Cookie`. So a session cookie goes through that map when the request has one, and
// through a header otherwise (in-process requests, a re-dispatched method override). The map percent-encodes
// values, which a token (alphanumerics) never needs; the logged-out marker holds a ":" and goes as a header.

import type { CookieInit } from "bun";
import { type SessionCookie, setCookieValue } from "../auth/session-cookie.ts";

interface CookieWriter {
  set(name: string, value: string, options?: CookieInit): void;
}

/** The headers a session cookie adds to its answer: none when Bun writes it from the request's cookie map. */
export function sessionCookieHeaders(request: Request, cookie: SessionCookie): Record<string, string> {
  const jar = (request as Request & { cookies?: CookieWriter }).cookies;
  if (jar && typeof jar.set === "function") {
    jar.set(cookie.name, cookie.value, {
      path: "/",
      expires: cookie.expires,
      maxAge: cookie.maxAge,
      secure: cookie.secure,
      httpOnly: true,
      sameSite: "lax",
    });
    return {};
  }
  return { "set-cookie": setCookieValue(cookie) };
}
