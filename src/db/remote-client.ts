// A libSQL server connection that queues writes as the embedded store does: sqld runs one write at a time
// whatever the concurrency (about 700 single-statement writes a second on loopback here, the same with 1 or 50
// in flight) and answers SQLITE_BUSY to writers that meet a held lock. So this node's writes (statements that
// are not plain SELECTs, write batches, write transactions until they end) pass one at a time through a FIFO
// gate, and a statement, batch or BEGIN still refused as busy (another node holds the lock) changed nothing
// and is retried with jittered backoff until RETRY_MS have passed. Reads never wait. Single statements go over
// streams held open (held-streams.ts); batches, migrations and transactions through @libsql/client.

import type { Client, InArgs, InStatement, ResultSet, Transaction, TransactionMode } from "@libsql/core/api";
import type { HeldStreams } from "./held-streams.ts";
import { storeUnreachable } from "./store-unreachable.ts";
import { WriteGate } from "./write-gate.ts";

/** How long a write keeps retrying a busy server before the error is passed on. */
const RETRY_MS = 15_000;

export function isBusy(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  return err?.code === "SQLITE_BUSY" || /SQLITE_BUSY|database is locked/.test(String(err?.message ?? ""));
}

/** Runs `op` again while it fails busy, waiting a little longer (with jitter) each time, up to `RETRY_MS`. */
export async function retryBusy<T>(op: () => Promise<T>, retryMs = RETRY_MS): Promise<T> {
  const deadline = Date.now() + retryMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (!isBusy(e) || Date.now() >= deadline) throw e;
      await Bun.sleep(Math.min(100, 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));
    }
  }
}

/** A statement that cannot write: a SELECT (a WITH may end in a write, so it counts as one). */
const READ_SQL = /^\s*select\b/i;

export class RemoteClient implements Client {
  readonly #gate = new WriteGate();

  constructor(
    private readonly inner: Client,
    private readonly streams?: HeldStreams,
  ) {}

  /**
   * Runs `op` holding the write gate. When it fails because the server cannot be reached (each request is bounded,
   * open-store.ts), the writes queued behind it fail with it rather than each waiting out its own bound in turn: a
   * server that stopped answering would otherwise hold the last of N queued writes for N bounds.
   */
  async #write<T>(op: () => Promise<T>): Promise<T> {
    await this.#gate.acquire();
    try {
      return await retryBusy(op);
    } catch (e) {
      this.#unreachable(e);
      throw e;
    } finally {
      this.#gate.release();
    }
  }

  #unreachable(e: unknown): void {
    if (storeUnreachable(e) !== null) this.#gate.abort(e as Error);
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  get protocol(): string {
    return this.inner.protocol;
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    const streams = this.streams;
    const run = streams
      ? () => streams.execute(stmt, args)
      : () => (typeof stmt === "string" ? this.inner.execute(stmt, args) : this.inner.execute(stmt));
    return READ_SQL.test(typeof stmt === "string" ? stmt : stmt.sql) ? retryBusy(run) : this.#write(run);
  }

  batch(stmts: Parameters<Client["batch"]>[0], mode?: TransactionMode): Promise<ResultSet[]> {
    return mode === "read" ? retryBusy(() => this.inner.batch(stmts, mode)) : this.#write(() => this.inner.batch(stmts, mode));
  }

  migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#write(() => this.inner.migrate(stmts));
  }

  executeMultiple(sql: string): Promise<void> {
    return this.#write(() => this.inner.executeMultiple(sql));
  }

  /**
   * A write transaction holds the gate until it ends, and starts (BEGIN IMMEDIATE takes the lock) before it is
   * handed out, retried while another node holds the lock.
   */
  async transaction(mode: TransactionMode = "write"): Promise<Transaction> {
    if (mode === "read" || mode === "deferred") return this.inner.transaction(mode);
    await this.#gate.acquire();
    try {
      const tx = await retryBusy(async () => {
        const tx = await this.inner.transaction(mode);
        try {
          await tx.execute("SELECT 1");
        } catch (e) {
          tx.close();
          throw e;
        }
        return tx;
      });
      return gated(tx, () => this.#gate.release());
    } catch (e) {
      this.#unreachable(e);
      this.#gate.release();
      throw e;
    }
  }

  sync(): ReturnType<Client["sync"]> {
    return this.inner.sync();
  }

  reconnect(): ReturnType<Client["reconnect"]> {
    return this.inner.reconnect();
  }

  close(): void {
    this.streams?.close();
    this.inner.close();
  }
}

/** `tx` calling `release` once, when it commits, rolls back or closes. */
function gated(tx: Transaction, release: () => void): Transaction {
  let open = true;
  const end = () => {
    if (open) {
      open = false;
      release();
    }
  };
  return {
    execute: (stmt: InStatement) => tx.execute(stmt),
    batch: (stmts: InStatement[]) => tx.batch(stmts),
    executeMultiple: (sql: string) => tx.executeMultiple(sql),
    async commit() {
      try {
        await tx.commit();
      } finally {
        end();
      }
    },
    async rollback() {
      try {
        await tx.rollback();
      } finally {
        end();
      }
    },
    close() {
      tx.close();
      end();
    },
    get closed() {
      return tx.closed;
    },
  } as Transaction;
}
