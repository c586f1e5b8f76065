// Errors as libsql reports them: bun:sqlite's SQLiteError mapped to LibsqlError (or LibsqlBatchError with the
// failing statement's index), and settle(), which turns a synchronous throw into a rejected LibsqlError.
import { SQLiteError } from "bun:sqlite";
import { LibsqlBatchError, LibsqlError } from "@libsql/core/api";

const PRIMARY_CODES = (
  "OK ERROR INTERNAL PERM ABORT BUSY LOCKED NOMEM READONLY INTERRUPT IOERR CORRUPT NOTFOUND FULL " +
  "CANTOPEN PROTOCOL EMPTY SCHEMA TOOBIG CONSTRAINT MISMATCH MISUSE NOLFS AUTH FORMAT RANGE NOTADB NOTICE WARNING"
).split(" ");

/** Returns `fn()` (a value or a promise) as a promise; a synchronous throw becomes a rejected LibsqlError. */
export function settle<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(toLibsqlError(e));
  }
}

/** bun's SQLiteError → LibsqlError(code: primary code name, extendedCode: bun's code, rawCode: errno). */
export function toLibsqlError(e: unknown, statementIndex?: number): LibsqlError {
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
