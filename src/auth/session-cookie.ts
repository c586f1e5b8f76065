// The legacy cookie session of GET /<userSchema>/login (docs/api/users.md#legacy-cookie-session): the cookie's name, reading its
// token from a Cookie header, and the Set-Cookie values that start and end it. Pure.
//
// The name starts with "session_" because the original Java/Android SDK stores and replays only cookies
// named so (StackMobCookieStore); its value is an access token of the session store (48 alphanumerics).

export const SESSION_COOKIE = "session_burrow";

/**
 * The value a logout leaves behind. Browsers drop the cookie (it is already expired); the original Java SDK
 * cannot store an empty value and would keep replaying the revoked token, so it gets this marker instead, which
 * means "no session" (an anonymous caller), not a refused one. It holds a ":" because that is how the SDK's
 * isLoggedOut() tells a logged-out cookie from a session (a token never has one).
 */
export const NO_SESSION = "logged:out";

const NAME = `${SESSION_COOKIE}=`;
const EPOCH = new Date(0).toUTCString();

/** Whether position `at` starts a cookie-pair: the header's start, or after ";" and optional blanks. */
function startsPair(header: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (header.charCodeAt(i) === 32 || header.charCodeAt(i) === 9)) i--;
  return i < 0 || header.charCodeAt(i) === 59;
}

/**
 * The session token of a Cookie header: the value of the first `session_burrow` cookie, without quotes. Null
 * when there is none, or it is empty or a logged-out marker (no session): this one, any value with a ":" (the
 * SDK's own test for a logged-out cookie), or `none` (what earlier versions set); anything else is a token to look up.
 */
export function sessionToken(cookieHeader: string | null): string | null {
  if (cookieHeader === null) return null;
  let at = cookieHeader.indexOf(NAME);
  while (at > 0 && !startsPair(cookieHeader, at)) at = cookieHeader.indexOf(NAME, at + 1);
  if (at < 0) return null;
  const start = at + NAME.length;
  const end = cookieHeader.indexOf(";", start);
  let value = (end < 0 ? cookieHeader.slice(start) : cookieHeader.slice(start, end)).trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return value === "" || value === "none" || value.includes(":") ? null : value;
}

/**
 * Attributes of every session cookie: the whole site, never readable by scripts, not sent on cross-site
 * subrequests; in the order Bun's own cookie writer uses, so the header is the same however it is written.
 */
function attributes(expires: string, maxAge: number, secure: boolean): string {
  return `Path=/; Expires=${expires}; Max-Age=${maxAge}; ${secure ? "Secure; " : ""}HttpOnly; SameSite=Lax`;
}

/** A session cookie as its parts, for a writer that serializes it (Bun's request.cookies). */
export interface SessionCookie {
  name: string;
  value: string;
  expires: Date;
  maxAge: number;
  secure: boolean;
}

/** The cookie starting a session (setCookieValue is its header form). */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean, now = Date.now()): SessionCookie {
  return { name: SESSION_COOKIE, value: token, expires: new Date(now + maxAgeSeconds * 1000), maxAge: maxAgeSeconds, secure };
}

/** A session cookie's Set-Cookie value: the token, expiring with it (Max-Age, and Expires for clients without Max-Age). */
export function setCookieValue(cookie: SessionCookie): string {
  return `${cookie.name}=${cookie.value}; ${attributes(cookie.expires.toUTCString(), cookie.maxAge, cookie.secure)}`;
}

/** Set-Cookie ending a session: the logged-out marker, already expired. */
export function endSessionCookie(secure: boolean): string {
  return `${NAME}${NO_SESSION}; ${attributes(EPOCH, 0, secure)}`;
}
