// The two sides of a logical copy (logical-copy.ts): a local SQLite file (bun:sqlite) and a transaction on a libSQL
// server (@libsql/client). Values keep their SQLite type across both: integers as bigint, floats as numbers (a
// float with no fraction is written to a local file as CAST(? AS REAL), since bun:sqlite would bind it as an
// integer), blobs as bytes. Rows go to the server in multi-row INSERTs bounded in variables and bytes.

import type { Database, Statement } from "bun:sqlite";
import type { InValue, Transaction } from "@libsql/core/api";
import { quoteName, type SqlReader, type SqlWriter } from "./logical-copy.ts";

/** A local database read with integers as bigint (open it with safeIntegers: true). */
export function fileReader(db: Database): SqlReader {
  return {
    rows: async (sql, args = []) => db.query(sql).values(...(args as never[])) as unknown[][],
  };
}

function bytesOf(v: unknown): unknown {
  return v instanceof ArrayBuffer ? new Uint8Array(v) : v;
}

/** Writes into a local database inside one transaction (BEGIN now; finish() commits). */
export function fileWriter(db: Database): SqlWriter & { finish(): void } {
  const statements = new Map<string, Statement>();
  db.run("BEGIN");
  return {
    exec: async (sql) => void db.run(sql),
    insert: async (table, columns, rows) => {
      const names = columns.map(quoteName).join(", ");
      for (const row of rows) {
        // Floats without a fraction need a cast; the common row has none and shares one statement.
        let mask = "";
        for (const v of row) mask += typeof v === "number" && Number.isInteger(v) ? "r" : "-";
        const key = `${table}\0${names}\0${mask}`;
        let st = statements.get(key);
        if (!st) {
          const slots = Array.from(mask, (m) => (m === "r" ? "CAST(? AS REAL)" : "?")).join(", ");
          st = db.prepare(`INSERT INTO ${quoteName(table)} (${names}) VALUES (${slots})`);
          statements.set(key, st);
        }
        st.run(...(row.map(bytesOf) as never[]));
      }
    },
    finish: () => {
      for (const st of statements.values()) st.finalize();
      db.run("COMMIT");
    },
  };
}

function rowValues(row: ArrayLike<unknown>): unknown[] {
  const out = new Array<unknown>(row.length);
  for (let i = 0; i < row.length; i++) out[i] = bytesOf(row[i]);
  return out;
}

/** Reads through a transaction on the server (its client opened with intMode "bigint"). */
export function remoteReader(tx: Pick<Transaction, "execute">): SqlReader {
  return {
    rows: async (sql, args = []) => (await tx.execute({ sql, args: args as InValue[] })).rows.map(rowValues),
  };
}

/** SQLite's default limit of variables in one statement is 32,766; each INSERT stays well under it. */
const MAX_VARIABLES = 30_000;
const MAX_ROWS = 500;
/** Bytes of values per INSERT (a request to the server stays small). */
const MAX_BYTES = 1024 * 1024;

function sizeOf(v: unknown): number {
  return typeof v === "string" ? v.length * 3 : v instanceof Uint8Array ? v.byteLength : 8;
}

/** Writes through a write transaction on the server. */
export function remoteWriter(tx: Pick<Transaction, "execute">): SqlWriter {
  return {
    exec: async (sql) => void (await tx.execute(sql)),
    insert: async (table, columns, rows) => {
      const head = `INSERT INTO ${quoteName(table)} (${columns.map(quoteName).join(", ")}) VALUES `;
      const tuple = `(${columns.map(() => "?").join(", ")})`;
      const perStatement = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_VARIABLES / Math.max(1, columns.length))));
      let i = 0;
      while (i < rows.length) {
        const args: InValue[] = [];
        let n = 0;
        let bytes = 0;
        while (i < rows.length && n < perStatement && (n === 0 || bytes < MAX_BYTES)) {
          for (const v of rows[i]!) {
            args.push(v as InValue);
            bytes += sizeOf(v);
          }
          i++;
          n++;
        }
        await tx.execute({ sql: head + Array.from({ length: n }, () => tuple).join(", "), args });
      }
    },
  };
}
