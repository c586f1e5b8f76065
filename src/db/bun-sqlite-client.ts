// Embedded-mode implementation of the @libsql/client `Client` interface on top of bun:sqlite.
// A writer and a reader connection share one WAL file; all writes go through a FIFO gate, reads never wait for it.
import { Database, SQLiteError, type Statement } from "bun:sqlite";
import type { Client, InArgs, InStatement, InValue, IntMode, ResultSet, Row, Transaction, TransactionMode } from "@libsql/core/api";
import { LibsqlBatchError, LibsqlError } from "@libsql/core/api";
import { ResultSetImpl } from "@libsql/core/util";

type SqlValue = string | number | bigint | null | Uint8Array;
type BatchItem = InStatement | [string, InArgs?];
type Connections = { w: Database; r: Database };

const BEGIN: Record<TransactionMode, string> = { write: "BEGIN IMMEDIATE", deferred: "BEGIN DEFERRED", read: "BEGIN" };
const PRIMARY_CODES = ("OK ERROR INTERNAL PERM ABORT BUSY LOCKED NOMEM READONLY INTERRUPT IOERR CORRUPT NOTFOUND FULL " +
  "CANTOPEN PROTOCOL EMPTY SCHEMA TOOBIG CONSTRAINT MISMATCH MISUSE NOLFS AUTH FORMAT RANGE NOTADB NOTICE WARNING").split(" ");

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
  #gate = new Gate();
  #tx: BunSqliteTransaction | undefined;
  #routes = new Map<string, boolean>(); // SQL text → may run on R (read-only and returns rows)

  constructor(readonly path: string, readonly intMode: IntMode, readonly busyTimeoutMs: number) {
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
    return settle(() => this.#serialized((w) => {
      w.run("PRAGMA foreign_keys=off");
      try {
        return runBatch(w, stmts, "deferred", this.intMode);
      } finally {
        w.run("PRAGMA foreign_keys=on");
      }
    }));
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
      return (this.#tx = new BunSqliteTransaction(w, this.intMode, () => {
        this.#tx = undefined;
        gate.release();
      }));
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
    this.#gate = new Gate();
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
    if (!gate.busy) return work(this.#connections().w);
    return gate.acquire().then(() => {
      try {
        return work(this.#connections().w);
      } catch (e) {
        throw toLibsqlError(e);
      } finally {
        gate.release();
      }
    });
  }
}

class BunSqliteTransaction implements Transaction {
  constructor(private readonly db: Database, private readonly intMode: IntMode, private onDone?: () => void) {}

  get closed(): boolean {
    return this.onDone === undefined;
  }

  execute(stmt: InStatement): Promise<ResultSet> {
    return this.#run((db) => runStatement(db, ...toSqlAndArgs(stmt), this.intMode));
  }

  /** Runs the statements in order; on error it throws and leaves the transaction open, as libsql does. */
  batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#run((db) => stmts.map((stmt, i) => {
      try {
        return runStatement(db, ...toSqlAndArgs(stmt), this.intMode);
      } catch (e) {
        throw toLibsqlError(e, i);
      }
    }));
  }

  executeMultiple(sql: string): Promise<void> {
    return this.#run((db) => void db.run(sql));
  }

  commit(): Promise<void> {
    return this.#run((db) => void db.query("COMMIT").run());
  }

  rollback(): Promise<void> {
    return this.closed ? Promise.resolve() : this.#run((db) => void db.query("ROLLBACK").run());
  }

  close(): void {
    if (this.closed) return;
    try {
      if (this.db.inTransaction) this.db.query("ROLLBACK").run();
    } finally {
      this.#finish();
    }
  }

  #run<T>(work: (db: Database) => T): Promise<T> {
    return settle(() => {
      if (this.closed) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      try {
        return work(this.db);
      } finally {
        // COMMIT, ROLLBACK, or an error after which SQLite rolled back by itself ends the transaction.
        if (!this.db.inTransaction) this.#finish();
      }
    });
  }

  #finish(): void {
    const done = this.onDone;
    this.onDone = undefined;
    done?.();
  }
}

/** FIFO async mutex; release() hands the gate straight to the next waiter, so nobody can cut in. */
class Gate {
  busy = false;
  #queue: { resolve: () => void; reject: (e: Error) => void }[] = [];

  acquire(): Promise<void> {
    if (this.busy) return new Promise((resolve, reject) => this.#queue.push({ resolve, reject }));
    this.busy = true;
    return Promise.resolve();
  }

  release(): void {
    const next = this.#queue.shift();
    if (next) next.resolve();
    else this.busy = false;
  }

  abort(error: Error): void {
    for (const waiter of this.#queue.splice(0)) waiter.reject(error);
  }
}

function runBatch(db: Database, stmts: BatchItem[], mode: TransactionMode, intMode: IntMode): ResultSet[] {
  const results: ResultSet[] = [];
  let i = -1;
  try {
    db.query(beginSql(mode)).run();
    for (i = 0; i < stmts.length; i++) results.push(runStatement(db, ...toSqlAndArgs(stmts[i]!), intMode));
    db.query("COMMIT").run();
    return results;
  } catch (e) {
    if (db.inTransaction) db.query("ROLLBACK").run();
    throw toLibsqlError(e, i >= 0 && i < stmts.length ? i : undefined);
  }
}

/**
 * Our own prepared-statement cache per connection (bun's `db.query` cache holds only 20 and re-reads metadata).
 * Column names and declared types are kept with the statement and re-read after DDL run by this process
 * (`ddlGeneration`) or when a result's width no longer matches (a `SELECT *` after another process's ALTER).
 */
interface Prepared {
  stmt: Statement;
  reader: boolean;
  readonly: boolean;
  params: number;
  ddl: boolean;
  generation: number;
  columns: string[] | null;
  types: string[];
  shape: RowShape | null;
}
const MAX_CACHED = 1000;
const DDL_RE = /^\s*(create|alter|drop)\b/i;
const EXPLAIN_RE = /^\s*explain\b/i;
let ddlGeneration = 0;
const caches = new WeakMap<Database, Map<string, Prepared>>();

function prepared(db: Database, sql: string): Prepared {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let p = cache.get(sql);
  if (p) return p;
  const stmt = db.prepare(sql);
  p = { stmt, reader: stmt.reader, readonly: stmt.readonly, params: stmt.paramsCount, ddl: !stmt.readonly && DDL_RE.test(sql), generation: -1, columns: null, types: [], shape: null };
  if (cache.size >= MAX_CACHED) {
    for (const old of cache.values()) old.stmt.finalize();
    cache.clear();
  }
  cache.set(sql, p);
  return p;
}

/** Finalize every cached statement of a connection (before closing it). */
function dropCache(db: Database): void {
  for (const p of caches.get(db)?.values() ?? []) p.stmt.finalize();
  caches.delete(db);
}

function runStatement(db: Database, sql: string, args: InArgs | undefined, intMode: IntMode): ResultSet {
  // bun never resets an EXPLAIN after running it, and until it is reset SQLite keeps the connection's read snapshot.
  if (!caches.get(db)?.has(sql) && EXPLAIN_RE.test(sql)) {
    const stmt = db.prepare(sql);
    try {
      const values = stmt.values(...toParams(stmt.paramsCount, args)) as SqlValue[][];
      const columns = stmt.columnNames;
      return new ResultSetImpl(columns, stmt.declaredTypes.map((t) => t ?? ""), toRows(rowShape(columns), values, intMode), 0, undefined);
    } finally {
      stmt.finalize();
    }
  }
  const p = prepared(db, sql);
  const { stmt } = p;
  const params = toParams(p.params, args);
  if (!p.reader) {
    const { changes, lastInsertRowid } = stmt.run(...params);
    if (p.ddl) ddlGeneration++;
    return p.readonly ? new ResultSetImpl([], [], [], 0, undefined) : new ResultSetImpl([], [], [], changes, BigInt(lastInsertRowid));
  }
  const values = stmt.values(...params) as SqlValue[][];
  // Metadata is read after running: a schema change since the last run re-prepares the statement.
  if (p.columns === null || p.generation !== ddlGeneration || (values.length > 0 && values[0]!.length !== p.columns.length)) {
    p.columns = stmt.columnNames;
    p.types = stmt.declaredTypes.map((t) => t ?? "");
    p.shape = rowShape(p.columns);
    p.generation = ddlGeneration;
  }
  const rows = toRows(p.shape!, values, intMode);
  if (p.readonly) return new ResultSetImpl(p.columns, p.types, rows, 0, undefined);
  // A write that returns rows (RETURNING): run() would drop the rows, so read SQLite's counters right after instead.
  const [changes, rowid] = prepared(db, "SELECT changes(), last_insert_rowid()").stmt.values()[0]!;
  return new ResultSetImpl(p.columns, p.types, rows, Number(changes), BigInt(rowid as number | bigint));
}

function toSqlAndArgs(stmt: BatchItem): [string, InArgs | undefined] {
  return typeof stmt === "string" ? [stmt, undefined] : Array.isArray(stmt) ? [stmt[0], stmt[1]] : [stmt.sql, stmt.args];
}

function toParams(paramsCount: number, args: InArgs | undefined): SqlValue[] | [Record<string, SqlValue>] {
  if (args === undefined || (Array.isArray(args) && args.length === 0)) {
    // Given no values, bun:sqlite silently re-binds the previous call's values: refuse instead.
    if (paramsCount > 0) throw new TypeError(`The statement expects ${paramsCount} argument(s), none were given`);
    return [];
  }
  if (Array.isArray(args)) return args.every(isPlainSqlValue) ? (args as SqlValue[]) : args.map(toSqlValue);
  const named: Record<string, SqlValue> = {};
  for (const key in args) named[key] = toSqlValue(args[key]!); // with strict: true bun binds `a`, `:a`, `@a`, `$a` alike
  return [named];
}

const isPlainSqlValue = (v: InValue) => typeof v === "string" || typeof v === "number" || v === null;

function toSqlValue(value: InValue): SqlValue {
  if (typeof value === "string" || typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  if (value instanceof Date) return value.valueOf();
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return value;
}

type RowShape = { proto: object; names: (string | undefined)[] };
const shapes = new Map<string, RowShape>();

/**
 * Rows own only their named, enumerable properties; one prototype per column list carries the non-enumerable `length`
 * and index getters. A repeated column name (or `length`/`__proto__`) keeps its value in a non-enumerable own index
 * property instead, and the name refers to the first such column, as in libsql.
 */
function rowShape(columns: string[]): RowShape {
  const key = columns.join("\0");
  let shape = shapes.get(key);
  if (shape) return shape;
  const proto = Object.defineProperty({}, "length", { value: columns.length });
  const seen = new Set(["length", "__proto__"]);
  const names = columns.map((name, i) => {
    if (seen.has(name)) return undefined;
    seen.add(name);
    Object.defineProperty(proto, i, { get(this: Record<string, unknown>) { return this[name]; } });
    return name;
  });
  if (shapes.size >= 1000) shapes.clear();
  shapes.set(key, (shape = { proto, names }));
  return shape;
}

function toRows({ proto, names }: RowShape, values: SqlValue[][], intMode: IntMode): Row[] {
  return values.map((vals) => {
    const row = Object.create(proto);
    for (let i = 0; i < vals.length; i++) {
      let v: unknown = vals[i];
      if (typeof v === "object" && v !== null) {
        const b = v as Uint8Array; // BLOB: libsql returns an ArrayBuffer
        v = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer;
      } else if (intMode === "string" && typeof v === "bigint") {
        v = String(v);
      }
      const name = names[i];
      if (name === undefined) Object.defineProperty(row, i, { value: v });
      else row[name] = v;
    }
    return row as Row;
  });
}

/** Returns `fn()` (a value or a promise) as a promise; a synchronous throw becomes a rejected LibsqlError. */
function settle<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(toLibsqlError(e));
  }
}

function beginSql(mode: TransactionMode): string {
  if (!Object.hasOwn(BEGIN, mode)) throw new RangeError(`Unknown transaction mode ${JSON.stringify(mode)}`);
  return BEGIN[mode];
}

/** bun's SQLiteError → LibsqlError(code: primary code name, extendedCode: bun's code, rawCode: errno). */
function toLibsqlError(e: unknown, statementIndex?: number): LibsqlError {
  if (e instanceof LibsqlError) return e;
  const cause = e instanceof Error ? e : undefined;
  let code = "SQL_INPUT_ERROR"; // not from SQLite: bun or we rejected the arguments
  let extendedCode: string | undefined;
  let rawCode: number | undefined;
  if (e instanceof SQLiteError) {
    const primary = PRIMARY_CODES[e.errno & 0xff];
    code = primary ? `SQLITE_${primary}` : `SQLITE_UNKNOWN_${e.errno & 0xff}`;
    extendedCode = e.code;
    rawCode = e.errno;
  }
  const message = cause?.message ?? String(e);
  return statementIndex === undefined
    ? new LibsqlError(message, code, extendedCode, rawCode, cause)
    : new LibsqlBatchError(message, statementIndex, code, extendedCode, rawCode, cause);
}
