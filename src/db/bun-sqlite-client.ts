// Embedded-mode implementation of the @libsql/client `Client` interface on top of bun:sqlite.
// A writer and a reader connection share one WAL file; all writes go through a FIFO gate, reads never wait for it.
import { Database } from "bun:sqlite";
import type { Client, InArgs, InStatement, IntMode, ResultSet, Transaction, TransactionMode } from "@libsql/core/api";
import { LibsqlError } from "@libsql/core/api";
import { BunSqliteTransaction } from "./bun-sqlite-transaction.ts";
import { type DiskState, watchedWrite } from "./disk-full.ts";
import { settle, toLibsqlError } from "./libsql-errors.ts";
import { type BatchItem, beginSql, dropCache, runBatch, runStatement } from "./sqlite-statements.ts";
import { WriteGate } from "./write-gate.ts";

type Connections = { w: Database; r: Database };

/** Opens `path` (":memory:" allowed) as a libsql-compatible client. */
export function openBunSqliteClient(path: string, opts: { intMode?: IntMode; busyTimeoutMs?: number } = {}): BunSqliteClient {
  return new BunSqliteClient(path, opts.intMode ?? "number", opts.busyTimeoutMs ?? 5000);
}

/**
 * `execute()` of a read-only, row-returning statement runs on the reader connection R as a WAL snapshot read and never
 * waits. Everything else (writes, `batch`, `migrate`, `executeMultiple`, interactive transactions) runs on the writer
 * connection W behind a FIFO gate, so a synchronous busy_timeout wait never blocks the JS thread while one of our own
 * transactions holds the lock. A `:memory:` database cannot be shared between connections, so there R and W are one
 * connection: reads still skip the gate (inside a transaction they would deadlock otherwise), which means they can see
 * the uncommitted writes of an open interactive transaction.
 */
export class BunSqliteClient implements Client {
  readonly protocol = "file";
  #conns: Connections | undefined;
  #gate = new WriteGate();
  #tx: BunSqliteTransaction | undefined;
  #routes = new Map<string, boolean>(); // SQL text → may run on R (read-only and returns rows)
  /** Where a write failing for a full disk is noted, and cleared by the next write that succeeds (Operations.disk). */
  disk: DiskState | undefined;

  constructor(
    readonly path: string,
    readonly intMode: IntMode,
    readonly busyTimeoutMs: number,
  ) {
    this.#conns = this.#open();
  }

  get closed(): boolean {
    return this.#conns === undefined;
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  execute(stmt: InStatement, args?: InArgs): Promise<ResultSet> {
    return settle(() => {
      const [sql, params] = typeof stmt === "string" ? [stmt, args] : [stmt.sql, stmt.args];
      const { r } = this.#connections();
      if (this.#isRead(r, sql)) return runStatement(r, sql, params, this.intMode);
      return this.#serialized((w) => runStatement(w, sql, params, this.intMode));
    });
  }

  batch(stmts: BatchItem[], mode: TransactionMode = "deferred"): Promise<ResultSet[]> {
    return settle(() => this.#serialized((w) => runBatch(w, stmts, mode, this.intMode)));
  }

  migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    return settle(() =>
      this.#serialized((w) => {
        w.run("PRAGMA foreign_keys=off");
        try {
          return runBatch(w, stmts, "deferred", this.intMode);
        } finally {
          w.run("PRAGMA foreign_keys=on");
        }
      }),
    );
  }

  executeMultiple(sql: string): Promise<void> {
    return settle(() => this.#serialized((w) => void w.run(sql)));
  }

  /** Holds the write gate from BEGIN until commit, rollback or close. "read" sends a plain BEGIN (no libsql READONLY). */
  async transaction(mode: TransactionMode = "write"): Promise<Transaction> {
    const begin = beginSql(mode);
    const gate = this.#gate;
    await gate.acquire();
    try {
      const { w } = this.#connections();
      w.query(begin).run();
      const done = () => {
        this.#tx = undefined;
        gate.release();
      };
      return (this.#tx = new BunSqliteTransaction(w, this.intMode, done, this.disk));
    } catch (e) {
      gate.release();
      throw toLibsqlError(e);
    }
  }

  async sync(): Promise<undefined> {
    return undefined;
  }

  close(): void {
    if (!this.#conns) return;
    this.#gate.abort(new LibsqlError("The client is closed", "CLIENT_CLOSED"));
    this.#gate = new WriteGate();
    this.#tx?.close();
    const { w, r } = this.#conns;
    this.#conns = undefined;
    dropCache(r);
    dropCache(w);
    if (r !== w) r.close();
    w.close();
  }

  reconnect(): void {
    this.close();
    this.#conns = this.#open();
  }

  #open(): Connections {
    const connect = () => {
      const db = new Database(this.path, { create: true, strict: true, safeIntegers: this.intMode !== "number" });
      // busy_timeout first: switching to WAL needs a lock another process may hold while it opens the file too.
      db.run(`PRAGMA busy_timeout=${Math.trunc(this.busyTimeoutMs)}`);
      db.run("PRAGMA journal_mode=WAL");
      db.run("PRAGMA synchronous=NORMAL");
      db.run("PRAGMA foreign_keys=ON");
      return db;
    };
    const w = connect();
    return { w, r: this.path === ":memory:" || this.path === "" ? w : connect() };
  }

  #connections(): Connections {
    if (!this.#conns) throw new LibsqlError("The client is closed", "CLIENT_CLOSED");
    return this.#conns;
  }

  #isRead(r: Database, sql: string): boolean {
    let read = this.#routes.get(sql);
    if (read === undefined) {
      try {
        const stmt = r.prepare(sql);
        read = stmt.readonly && stmt.reader;
        stmt.finalize();
      } catch {
        return false; // not preparable on R (e.g. a table created by a still-open transaction): let W decide
      }
      if (this.#routes.size >= 1000) this.#routes.clear();
      this.#routes.set(sql, read);
    }
    return read;
  }

  /** Runs `work` on W right away if the gate is free (no microtask hop), otherwise after everything queued before it. */
  #serialized<T>(work: (w: Database) => T): T | Promise<T> {
    const gate = this.#gate;
    if (!gate.busy) return watchedWrite(this.disk, () => work(this.#connections().w));
    return gate.acquire().then(() => {
      try {
        return watchedWrite(this.disk, () => work(this.#connections().w));
      } catch (e) {
        throw toLibsqlError(e);
      } finally {
        gate.release();
      }
    });
  }
}
