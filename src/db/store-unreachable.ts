// Whether a failed call to a libSQL server failed because the server could not be reached (docs/decisions/
// operations.md, "The store going away"): refused or reset connections, a fetch that failed or timed out, a
// gateway or sqld itself answering 502/503/504. Such a failure says nothing about the statement (it may or may not
// have run), only that the store is away for now: a request answers 503 with Retry-After instead of 500. Pure.

/** How long one request to a libSQL server may take before it is given up (a slow but working query gets this long). */
export const STORE_TIMEOUT_MS = 10_000;

/** Connection-level error codes (Node's and Bun's spellings) that mean the server was not there. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Statuses of a server that is down, restarting or behind a proxy that cannot reach it. */
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

const FETCH_FAILED = /fetch failed|unable to connect|socket connection was closed|connection (?:was )?(?:refused|reset|closed)/i;

/**
 * A short reason (no message text, so never a URL or token) when `e` is the store being unreachable: "ECONNREFUSED",
 * "timed out", "HTTP 503". Null for any other error (a constraint, a syntax error, a bug), which stays what it was.
 * Follows `cause` a few levels: the clients wrap the fetch error (LibsqlError → ClosedError → TypeError).
 */
export function storeUnreachable(e: unknown): string | null {
  let err = e as { name?: unknown; code?: unknown; status?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; err && typeof err === "object" && depth < 5; depth++, err = err.cause as typeof err) {
    if (typeof err.code === "string" && UNREACHABLE_CODES.has(err.code)) return err.code;
    if (err.name === "TimeoutError") return "timed out";
    if (typeof err.status === "number" && UNAVAILABLE_STATUSES.has(err.status)) return `HTTP ${err.status}`;
    const message = typeof err.message === "string" ? err.message : "";
    const status = /Server returned HTTP status (50[234])\b/.exec(message)?.[1];
    if (status) return `HTTP ${status}`;
    if (err.name === "TypeError" && FETCH_FAILED.test(message)) return "connection failed";
  }
  return null;
}

/**
 * Keeps a background task's log readable through an outage (a tick every 250 ms would write a line each):
 * `shouldLog` answers true for any other error, and for the store being unreachable only the first time since the
 * task last succeeded (`ok`). The task itself goes on retrying as before.
 */
export class OutageLog {
  #away = false;

  shouldLog(e: unknown): boolean {
    if (storeUnreachable(e) === null) return true;
    if (this.#away) return false;
    this.#away = true;
    return true;
  }

  ok(): void {
    this.#away = false;
  }
}
