// Which failures of a libSQL store call mean "the store cannot be reached" (503 with Retry-After) and which stay
// what they are (src/db/store-unreachable.ts), with the errors the remote clients really raise.

import { expect, test } from "bun:test";
import * as hrana from "@libsql/hrana-client";
import { LibsqlError } from "@libsql/core/api";
import { OutageLog, storeUnreachable } from "../../src/db/store-unreachable.ts";
import { freePort } from "../helpers/loopback-process.ts";

test("a refused connection, as Bun's fetch raises it, is unreachable", async () => {
  const e = await fetch(`http://127.0.0.1:${freePort()}/v2/pipeline`, { method: "POST" }).catch((err) => err);
  expect(storeUnreachable(e)).toBe("ECONNREFUSED");
});

test("a request past its bound (AbortSignal.timeout) is unreachable", async () => {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
  try {
    const e = await fetch(`http://127.0.0.1:${server.port}/`, { signal: AbortSignal.timeout(50) }).catch((err) => err);
    expect(storeUnreachable(e)).toBe("timed out");
  } finally {
    server.stop(true);
  }
});

test("the clients' wrappings of a connection failure are followed to it", () => {
  const refused = Object.assign(new TypeError("ECONNREFUSED: Unable to connect. Is the computer able to access the url?"), {
    code: "ECONNREFUSED",
  });
  const closed = new hrana.ClosedError("Stream is closed", refused);
  expect(storeUnreachable(new LibsqlError(closed.message, "HRANA_CLOSED_ERROR", undefined, undefined, closed))).toBe("ECONNREFUSED");
  const reset = Object.assign(new Error("The socket connection was closed unexpectedly"), { code: "ECONNRESET" });
  expect(storeUnreachable(reset)).toBe("ECONNRESET");
  expect(storeUnreachable(Object.assign(new Error("x"), { code: "ConnectionClosed" }))).toBe("ConnectionClosed");
  expect(storeUnreachable(new TypeError("fetch failed"))).toBe("connection failed");
  expect(storeUnreachable(new DOMException("The operation timed out.", "TimeoutError"))).toBe("timed out");
});

test("sqld (or a proxy in front of it) answering 502, 503 or 504 is unreachable; other statuses are not", () => {
  for (const status of [502, 503, 504]) {
    const http = new hrana.HttpServerError(`Server returned HTTP status ${status}`, status);
    expect(storeUnreachable(http)).toBe(`HTTP ${status}`);
    expect(storeUnreachable(new LibsqlError(http.message, "SERVER_ERROR", undefined, undefined, http))).toBe(`HTTP ${status}`);
  }
  expect(storeUnreachable(new LibsqlError("Server returned HTTP status 503: unavailable", "SERVER_ERROR"))).toBe("HTTP 503");
  expect(storeUnreachable(new hrana.HttpServerError("Server returned HTTP status 500", 500))).toBeNull();
  expect(storeUnreachable(new hrana.HttpServerError("Server returned HTTP status 401", 401))).toBeNull();
});

test("errors of the statement itself, busy servers and bugs are not unreachable", () => {
  expect(storeUnreachable(new LibsqlError("UNIQUE constraint failed: note.id", "SQLITE_CONSTRAINT"))).toBeNull();
  expect(storeUnreachable(new LibsqlError("database is locked", "SQLITE_BUSY"))).toBeNull();
  expect(storeUnreachable(new LibsqlError("no such table: x", "SQLITE_ERROR"))).toBeNull();
  expect(storeUnreachable(new TypeError("undefined is not an object"))).toBeNull();
  expect(storeUnreachable(new Error("ECONNREFUSED somewhere in a message"))).toBeNull();
  expect(storeUnreachable(null)).toBeNull();
  expect(storeUnreachable(undefined)).toBeNull();
  expect(storeUnreachable("ECONNREFUSED")).toBeNull();
});

test("the reason never carries the message (a URL with a token in it stays out of the status page)", () => {
  const e = Object.assign(new TypeError("fetch failed: libsql://db.example?authToken=secret-token"), { code: "ECONNREFUSED" });
  expect(storeUnreachable(e)).toBe("ECONNREFUSED");
  expect(storeUnreachable(new TypeError("fetch failed: https://x?authToken=secret-token"))).toBe("connection failed");
});

test("a cause chain that loops ends", () => {
  const a = new Error("a") as Error & { cause?: unknown };
  a.cause = a;
  expect(storeUnreachable(a)).toBeNull();
});

test("OutageLog: an outage is logged once until the task succeeds; other errors always", () => {
  const refused = Object.assign(new TypeError("x"), { code: "ECONNREFUSED" });
  const log = new OutageLog();
  expect(log.shouldLog(refused)).toBe(true);
  expect(log.shouldLog(refused)).toBe(false);
  expect(log.shouldLog(refused)).toBe(false);
  expect(log.shouldLog(new Error("a bug"))).toBe(true);
  log.ok();
  expect(log.shouldLog(refused)).toBe(true);
  expect(log.shouldLog(refused)).toBe(false);
});
