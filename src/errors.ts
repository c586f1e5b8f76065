// The one error type of the API: an HTTP status and a message that is safe to show.
// It renders as {"error": message} (token endpoints add error_description); the cause is never sent.

export class ApiError extends Error {
  readonly status: number;
  readonly description?: string;
  readonly headers?: Record<string, string>;
  /** Detail for the server's debug log only (never sent): e.g. the string a signature was expected over. */
  readonly debug?: string;
  /** More members of the answer (a token endpoint's `mfa_token`). */
  readonly extra?: Record<string, string>;

  constructor(
    status: number,
    message: string,
    opts: { description?: string; headers?: Record<string, string>; cause?: unknown; debug?: string; extra?: Record<string, string> } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "ApiError";
    this.status = status;
    this.description = opts.description;
    this.headers = opts.headers;
    this.debug = opts.debug;
    this.extra = opts.extra;
  }

  toJSON(): Record<string, string> {
    const base: Record<string, string> =
      this.description === undefined ? { error: this.message } : { error: this.message, error_description: this.description };
    return this.extra ? { ...base, ...this.extra } : base;
  }
}

/** An OAuth 2.0 token-endpoint error: the RFC 6749 code as `error`, the details as `error_description`. */
export const oauthError = (status: 400 | 401, code: string, description: string, extra?: Record<string, string>) =>
  new ApiError(status, code, extra ? { description, extra } : { description });
export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message = "Insufficient authorization") => new ApiError(401, message);
export const notFound = (message = "object instance does not exist") => new ApiError(404, message);
export const methodNotAllowed = (message = "Invalid HTTP method", allowed?: readonly string[]) =>
  new ApiError(405, message, allowed ? { headers: { allow: allowed.join(", ") } } : {});
export const conflict = (message: string) => new ApiError(409, message);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, "too many requests; try again later", { headers: { "retry-after": String(retryAfterSeconds) } });
/** 503: the data store (a libSQL server) cannot be reached for now; retrying shortly may succeed. */
export const storeUnavailable = (cause?: unknown) =>
  new ApiError(503, "the data store cannot be reached; retry shortly", { headers: { "retry-after": "2" }, cause });
/** 413; `Connection: close` ends the connection after it, so the rest of the oversized body is never read. */
export const payloadTooLarge = (limit: number) =>
  new ApiError(413, `request body is larger than the limit of ${limit} bytes`, { headers: { connection: "close" } });
