// The interactive transaction of BunSqliteClient: runs on the writer connection while the client holds the write
// gate for it, and hands the gate back (onDone) once COMMIT, ROLLBACK, close or an error ends the transaction.
import type { Database } from "bun:sqlite";
import type { InStatement, IntMode, ResultSet, Transaction } from "@libsql/core/api";
import { LibsqlError } from "@libsql/core/api";
import { type DiskState, changedRows, watchedWrite } from "./disk-full.ts";
import { settle, toLibsqlError } from "./libsql-errors.ts";
import { runStatement, toSqlAndArgs } from "./sqlite-statements.ts";

export class BunSqliteTransaction implements Transaction {
  constructor(
    private readonly db: Database,
    private readonly intMode: IntMode,
    private onDone?: () => void,
    /** Noted when a statement fails for a full disk, cleared when COMMIT succeeds (disk-full.ts). */
    private readonly disk?: DiskState,
  ) {}

  /** A statement of this transaction changed rows: its COMMIT clears a full disk (disk-full.ts). */
  #wrote = false;

  get closed(): boolean {
    return this.onDone === undefined;
  }

  execute(stmt: InStatement): Promise<ResultSet> {
    return this.#run((db) => runStatement(db, ...toSqlAndArgs(stmt), this.intMode));
  }

  /** Runs the statements in order; on error it throws and leaves the transaction open, as libsql does. */
  batch(stmts: InStatement[]): Promise<ResultSet[]> {
    return this.#run((db) =>
      stmts.map((stmt, i) => {
        try {
          return runStatement(db, ...toSqlAndArgs(stmt), this.intMode);
        } catch (e) {
          throw toLibsqlError(e, i);
        }
      }),
    );
  }

  executeMultiple(sql: string): Promise<void> {
    return this.#run((db) => void db.run(sql));
  }

  commit(): Promise<void> {
    return this.#run(
      (db) => void db.query("COMMIT").run(),
      () => this.#wrote,
    );
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

  #run<T>(work: (db: Database) => T, clears?: () => boolean): Promise<T> {
    return settle(() => {
      if (this.closed) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
      try {
        return watchedWrite(
          this.disk,
          () => work(this.db),
          (out) => {
            if (clears) return clears();
            if (changedRows(out)) this.#wrote = true;
            return false;
          },
        );
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
