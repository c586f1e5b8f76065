// Single statements to a libSQL server over streams kept open between requests. sqld gives every stream a
// connection of its own, and opening one is most of the cost of a one-shot request (`Client.execute` opens a
// stream, runs the statement and closes it: 1.1 ms on loopback here, against 0.5 ms on a stream kept open; 2,100
// against 9,100 point reads a second at 50 in flight). So each database keeps a few streams of
// @libsql/hrana-client, the protocol library @libsql/client itself is built on, and passes each statement to the
// stream with the fewest in flight (a stream sends the statements queued on it together in its next request).
// sqld drops a stream idle for 10 s: one idle for IDLE_MS is replaced before use, and a statement refused because
// its stream expired or is unknown to the server (it restarted) is sent again on a new one: it did not run. Any other failure of the stream itself is passed
// on, as the one-shot client would, since a write may or may not have run.

import * as hrana from "@libsql/hrana-client";
import { LibsqlError, type InArgs, type InStatement, type ResultSet } from "@libsql/core/api";
import { ResultSetImpl } from "@libsql/core/util";

/** A stream unused this long is closed and replaced rather than risked (sqld's limit is 10 s). */
export const IDLE_MS = 5_000;

interface Held {
  stream: hrana.HttpStream;
  inFlight: number;
  lastUsed: number;
}

export class HeldStreams {
  readonly #client: hrana.HttpClient;
  readonly #held: (Held | null)[];
  #closed = false;

  readonly #idleMs: number;

  constructor(url: URL, opts: { authToken?: string; fetch: typeof fetch; size: number; intMode?: hrana.IntMode; idleMs?: number }) {
    this.#client = hrana.openHttp(url, opts.authToken, opts.fetch);
    this.#client.intMode = opts.intMode ?? "number";
    this.#held = Array.from({ length: opts.size }, () => null);
    this.#idleMs = opts.idleMs ?? IDLE_MS;
  }

  /** Runs one statement on the least busy stream. */
  async execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    if (this.#closed) throw new LibsqlError("The client is closed", "CLIENT_CLOSED");
    const h = hranaStmt(stmt, args);
    for (let attempt = 0; ; attempt++) {
      let held: Held;
      try {
        held = this.#pick();
      } catch (e) {
        throw toLibsqlError(e);
      }
      held.inFlight++;
      held.lastUsed = Date.now();
      try {
        return toResultSet(await held.stream.query(h));
      } catch (e) {
        if (attempt < 2 && staleStream(e)) {
          held.stream.close();
          continue;
        }
        throw toLibsqlError(e);
      } finally {
        held.inFlight--;
        held.lastUsed = Date.now();
      }
    }
  }

  /** The stream with the fewest statements in flight; a closed or long-idle one is replaced first. */
  #pick(): Held {
    const now = Date.now();
    let best = -1;
    for (let i = 0; i < this.#held.length; i++) {
      let h = this.#held[i];
      if (h && (h.stream.closed || (h.inFlight === 0 && now - h.lastUsed > this.#idleMs))) {
        if (!h.stream.closed) h.stream.close();
        h = this.#held[i] = null;
      }
      if (!h) {
        this.#held[i] = { stream: this.#client.openStream(), inFlight: 0, lastUsed: now };
        return this.#held[i]!;
      }
      if (best < 0 || h.inFlight < this.#held[best]!.inFlight) best = i;
    }
    return this.#held[best]!;
  }

  close(): void {
    this.#closed = true;
    for (const h of this.#held) h?.stream.close();
    this.#client.close();
  }
}

function hranaStmt(stmt: InStatement, args?: InArgs): hrana.Stmt {
  const sql = typeof stmt === "string" ? stmt : stmt.sql;
  const values = typeof stmt === "string" ? args : stmt.args;
  const h = new hrana.Stmt(sql);
  if (Array.isArray(values)) h.bindIndexes(values as hrana.InValue[]);
  else if (values) for (const [name, value] of Object.entries(values)) h.bindName(name, value as hrana.InValue);
  return h;
}

function toResultSet(rows: hrana.RowsResult): ResultSet {
  return new ResultSetImpl(
    rows.columnNames.map((c) => c ?? ""),
    rows.columnDecltypes.map((c) => c ?? ""),
    rows.rows,
    rows.affectedRowCount,
    rows.lastInsertRowid,
  );
}

/** The server refused the stream itself (expired, or a baton it does not know after a restart): the statement was not run. */
function staleStream(e: unknown): boolean {
  let err = e as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; err && depth < 3; depth++, err = err.cause as typeof err) {
    if (err.code === "STREAM_EXPIRED" || /invalid baton/i.test(String(err.message ?? ""))) return true;
  }
  return false;
}

/** The error @libsql/client would raise for it: a LibsqlError whose code is the server's (SQLITE_CONSTRAINT...). */
function toLibsqlError(e: unknown): unknown {
  if (!(e instanceof hrana.ClientError)) return e;
  let code: string | undefined;
  for (let err: unknown = e; err instanceof hrana.ClientError && !code; err = (err as Error).cause) {
    if (err instanceof hrana.ResponseError && err.code !== undefined) code = err.code;
    else if (err instanceof hrana.HttpServerError) code = "SERVER_ERROR";
    else if (err instanceof hrana.ProtoError) code = "HRANA_PROTO_ERROR";
    else if (err instanceof hrana.ClosedError && !(err.cause instanceof hrana.ClientError)) code = "HRANA_CLOSED_ERROR";
  }
  return new LibsqlError(e.message, code ?? "UNKNOWN", undefined, undefined, e);
}
