// The console's only way to the server: the admin JSON API under /_admin/api with the signed-in admin's bearer
// token (kept in sessionStorage, so it ends with the tab). An error answer becomes an ApiFailure carrying the
// server's own message, shown as it is; a 401 ends the session.

export type Env = "development" | "production";
export type Role = "owner" | "editor" | "viewer";

export interface Me {
  id: string;
  email: string;
  role: Role;
  expiresAt?: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

const TOKEN_KEY = "burrow.console.token";
let token: string | null = sessionStorage.getItem(TOKEN_KEY);
const signedOut = new Set<() => void>();

export function hasToken(): boolean {
  return token !== null;
}

export function setToken(t: string | null): void {
  token = t;
  if (t === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, t);
}

/** Called when the server no longer knows the token (expired, revoked): the app shows the sign-in form. */
export function onSignedOut(fn: () => void): () => void {
  signedOut.add(fn);
  return () => signedOut.delete(fn);
}

export interface Answer<T> {
  status: number;
  data: T;
  headers: Headers;
}

interface CallOptions {
  body?: unknown;
  /** A body sent as it is (custom code source), with this content type. */
  text?: { body: string; type: string };
  headers?: Record<string, string>;
  /** Resolve instead of throwing for these statuses. */
  accept?: number[];
}

export async function call<T = unknown>(method: string, path: string, opts: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.text) {
    body = opts.text.body;
    headers["content-type"] = opts.text.type;
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] = "application/json";
  }
  let res: Response;
  try {
    res = await fetch(`/_admin/api${path}`, { method, headers, body });
  } catch (e) {
    throw new ApiFailure(0, `the server did not answer (${(e as Error).message})`, null);
  }
  const text = await res.text();
  let data: unknown = text;
  try {
    data = text === "" ? null : JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  if (res.ok || opts.accept?.includes(res.status)) return { status: res.status, data: data as T, headers: res.headers };
  if (res.status === 401 && !path.startsWith("/login")) {
    setToken(null);
    for (const fn of signedOut) fn();
  }
  const message =
    typeof data === "object" && data !== null && "error" in data ? String((data as { error: unknown }).error) : text || res.statusText;
  throw new ApiFailure(res.status, message, data);
}

export const get = <T = unknown>(path: string, headers?: Record<string, string>) => call<T>("GET", path, { headers }).then((a) => a.data);
export const put = <T = unknown>(path: string, body: unknown) => call<T>("PUT", path, { body }).then((a) => a.data);
export const post = <T = unknown>(path: string, body: unknown) => call<T>("POST", path, { body }).then((a) => a.data);
export const del = <T = unknown>(path: string) => call<T>("DELETE", path).then((a) => a.data);

export const enc = encodeURIComponent;

/** An error as the console shows it: the server's words, with the status. */
export function describeError(e: unknown): string {
  if (e instanceof ApiFailure) return e.status ? `${e.status}: ${e.message}` : e.message;
  return e instanceof Error ? e.message : String(e);
}

export function canWrite(me: Me | null): boolean {
  return me !== null && me.role !== "viewer";
}

export function isOwner(me: Me | null): boolean {
  return me?.role === "owner";
}
