// The two failures the client library throws: BurrowError when the server answered outside 2xx (its status, the
// message and the parsed body), NetworkError when no answer came at all (offline, DNS, refused, aborted).

/** A parsed JSON answer: its shape is the server's (typed for callers in burrow.d.ts). */
// biome-ignore lint/suspicious/noExplicitAny: answers are whatever JSON the server sent
export type Json = any;

export class BurrowError extends Error {
  status: number;
  body: Json;
  constructor(status: number, body: Json) {
    const b = body && typeof body === "object" ? body : {};
    super(String(b.error_description ?? b.error ?? (typeof body === "string" && body ? body : `HTTP ${status}`)));
    this.name = "BurrowError";
    this.status = status;
    this.body = body;
  }
}

export class NetworkError extends Error {
  override cause: unknown;
  constructor(message: string, cause?: unknown) {
    super(message);
    this.name = "NetworkError";
    this.cause = cause;
  }
}
