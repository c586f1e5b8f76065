// Running statements on one bun:sqlite connection with libsql results: our prepared-statement cache, argument
// binding, BEGIN per transaction mode, and all-or-nothing batches.
import type { Database, Statement } from "bun:sqlite";
import type { InArgs, InStatement, InValue, IntMode, ResultSet, TransactionMode } from "@libsql/core/api";
import { ResultSetImpl } from "@libsql/core/util";
import { toLibsqlError } from "./libsql-errors.ts";
import { type RowShape, type SqlValue, rowShape, toRows } from "./result-rows.ts";

export type BatchItem = InStatement | [string, InArgs?];

const BEGIN: Record<TransactionMode, string> = { write: "BEGIN IMMEDIATE", deferred: "BEGIN DEFERRED", read: "BEGIN" };

export function beginSql(mode: TransactionMode): string {
  if (!Object.hasOwn(BEGIN, mode)) throw new RangeError(`Unknown transaction mode ${JSON.stringify(mode)}`);
  return BEGIN[mode];
}

export function runBatch(db: Database, stmts: BatchItem[], mode: TransactionMode, intMode: IntMode): ResultSet[] {
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
  p = {
    stmt,
    reader: stmt.reader,
    readonly: stmt.readonly,
    params: stmt.paramsCount,
    ddl: !stmt.readonly && DDL_RE.test(sql),
    generation: -1,
    columns: null,
    types: [],
    shape: null,
  };
  if (cache.size >= MAX_CACHED) {
    for (const old of cache.values()) old.stmt.finalize();
    cache.clear();
  }
  cache.set(sql, p);
  return p;
}

/** Finalize every cached statement of a connection (before closing it). */
export function dropCache(db: Database): void {
  for (const p of caches.get(db)?.values() ?? []) p.stmt.finalize();
  caches.delete(db);
}

export function runStatement(db: Database, sql: string, args: InArgs | undefined, intMode: IntMode): ResultSet {
  // bun never resets an EXPLAIN after running it, and until it is reset SQLite keeps the connection's read snapshot.
  if (!caches.get(db)?.has(sql) && EXPLAIN_RE.test(sql)) {
    const stmt = db.prepare(sql);
    try {
      const values = stmt.values(...toParams(stmt.paramsCount, args)) as SqlValue[][];
      const columns = stmt.columnNames;
      return new ResultSetImpl(
        columns,
        stmt.declaredTypes.map((t) => t ?? ""),
        toRows(rowShape(columns), values, intMode),
        0,
        undefined,
      );
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

export function toSqlAndArgs(stmt: BatchItem): [string, InArgs | undefined] {
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
