// Runs the Client contract against the bun:sqlite adapter (file and :memory:), plus adapter-only behaviour:
// reader/writer routing, the FIFO write gate, pragmas, intMode, error details, close/reconnect.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IntMode } from "@libsql/core/api";
import { LibsqlBatchError, LibsqlError } from "@libsql/core/api";
import { openBunSqliteClient, type BunSqliteClient } from "../../src/db/bun-sqlite-client";
import { openClient } from "../../src/db/open-client";
import { runClientContract } from "./client.contract";

function tempDbPath(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "burrow-db-"));
  return { path: join(dir, "test.db"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

runClientContract("BunSqliteClient (file)", async (opts) => {
  const tmp = tempDbPath();
  const client = openBunSqliteClient(tmp.path, { intMode: opts?.intMode });
  return {
    client,
    cleanup: async () => {
      client.close();
      tmp.remove();
    },
  };
});

runClientContract(
  "BunSqliteClient (:memory:)",
  async (opts) => {
    const client = openBunSqliteClient(":memory:", { intMode: opts?.intMode });
    return { client, cleanup: async () => client.close() };
  },
  { snapshotReads: false },
);

describe("BunSqliteClient specifics", () => {
  const cleanups: (() => void)[] = [];
  const open = (opts: { intMode?: IntMode } = {}): BunSqliteClient => {
    const tmp = tempDbPath();
    const client = openBunSqliteClient(tmp.path, opts);
    cleanups.push(() => {
      client.close();
      tmp.remove();
    });
    return client;
  };
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  test("both connections use WAL, synchronous=NORMAL, busy_timeout and foreign_keys", async () => {
    const db = open();
    // A plain execute of a read-only PRAGMA runs on the reader; inside a transaction it runs on the writer.
    const read = async (run: (sql: string) => Promise<{ rows: any[] }>) =>
      Promise.all(
        ["journal_mode", "synchronous", "busy_timeout", "foreign_keys"].map(
          async (p) => Object.values((await run(`PRAGMA ${p}`)).rows[0])[0],
        ),
      );
    expect(await read((sql) => db.execute(sql))).toEqual(["wal", 1, 5000, 1]);
    const tx = await db.transaction("write");
    try {
      expect(await read((sql) => tx.execute(sql))).toEqual(["wal", 1, 5000, 1]);
    } finally {
      tx.close();
    }
  });

  test("reads go to the reader connection and do not wait for an open transaction", async () => {
    const db = open();
    await db.execute("CREATE TABLE t (v INTEGER)");
    await db.execute("INSERT INTO t VALUES (1)");
    const tx = await db.transaction("write");
    try {
      await tx.execute("INSERT INTO t VALUES (2)");
      let settled = false;
      const read = db.execute("SELECT count(*) AS n FROM t").finally(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(true); // resolved within a microtask or two, while the transaction is still open
      expect((await read).rows[0]!.n).toBe(1);
      expect(tx.closed).toBe(false);
      await tx.commit();
    } finally {
      tx.close();
    }
    expect((await db.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(2);
  });

  test("a read of a table created by an open transaction waits for it instead of failing", async () => {
    const db = open();
    const tx = await db.transaction("write");
    await tx.execute("CREATE TABLE fresh (v INTEGER)");
    await tx.execute("INSERT INTO fresh VALUES (7)");
    const read = db.execute("SELECT v FROM fresh");
    await Bun.sleep(20);
    await tx.commit();
    expect((await read).rows[0]!.v).toBe(7);
  });

  test("queued writes, batches and transactions run in FIFO order", async () => {
    const db = open();
    await db.execute("CREATE TABLE log (v TEXT)");
    const tx = await db.transaction("write");
    const order: string[] = [];
    const queued = [
      db.execute("INSERT INTO log VALUES ('a')").then(() => order.push("a")),
      db.batch(["INSERT INTO log VALUES ('b1')", "INSERT INTO log VALUES ('b2')"], "write").then(() => order.push("b")),
      db.transaction("write").then(async (t2) => {
        await t2.execute("INSERT INTO log VALUES ('c')");
        await t2.commit();
        order.push("c");
      }),
      db.executeMultiple("INSERT INTO log VALUES ('d')").then(() => order.push("d")),
      db.execute("INSERT INTO log VALUES ('e')").then(() => order.push("e")),
    ];
    await tx.execute("INSERT INTO log VALUES ('tx')");
    await Bun.sleep(10);
    expect(order).toEqual([]);
    await tx.commit();
    await Promise.all(queued);
    expect(order).toEqual(["a", "b", "c", "d", "e"]);
    const rows = (await db.execute("SELECT v FROM log ORDER BY rowid")).rows.map((r) => r.v);
    expect(rows).toEqual(["tx", "a", "b1", "b2", "c", "d", "e"]);
  });

  test("a write with the gate free completes without waiting for queued work", async () => {
    const db = open();
    await db.execute("CREATE TABLE t (v INTEGER)");
    let settled = false;
    const p = db.execute("INSERT INTO t VALUES (1)").finally(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(true);
    expect((await p).rowsAffected).toBe(1);
  });

  test('intMode "bigint" and "string"', async () => {
    const big = open({ intMode: "bigint" });
    await big.execute("CREATE TABLE t (v INTEGER, f REAL)");
    const ins = await big.execute({ sql: "INSERT INTO t VALUES (?, ?) RETURNING v", args: [9007199254740993n, 0.5] });
    expect(ins.rows[0]!.v).toBe(9007199254740993n);
    expect(ins.rowsAffected).toBe(1);
    const row = (await big.execute("SELECT v, f, 3 AS three FROM t")).rows[0]!;
    expect([row.v, row.f, row.three]).toEqual([9007199254740993n, 0.5, 3n]);

    const str = open({ intMode: "string" });
    await str.execute("CREATE TABLE t (v INTEGER, f REAL)");
    await str.execute({ sql: "INSERT INTO t VALUES (?, ?)", args: [9007199254740993n, 0.5] });
    const srow = (await str.execute("SELECT v, f FROM t")).rows[0]!;
    expect([srow.v, srow.f]).toEqual(["9007199254740993", 0.5]);
  });

  test("SQLite errors carry extendedCode and rawCode; argument errors are LibsqlErrors", async () => {
    const db = open();
    await db.execute("CREATE TABLE u (k TEXT UNIQUE)");
    await db.execute("INSERT INTO u VALUES ('x')");
    const err = await db.execute("INSERT INTO u VALUES ('x')").catch((e) => e);
    expect([err.code, err.extendedCode, err.rawCode]).toEqual(["SQLITE_CONSTRAINT", "SQLITE_CONSTRAINT_UNIQUE", 2067]);
    expect(err.message).toBe("SQLITE_CONSTRAINT: UNIQUE constraint failed: u.k");
    expect(err.cause?.name).toBe("SQLiteError");

    const batchErr = await db.batch(["SELECT 1", "INSERT INTO u VALUES ('x')"]).catch((e) => e);
    expect(batchErr).toBeInstanceOf(LibsqlBatchError);
    expect([batchErr.statementIndex, batchErr.extendedCode]).toEqual([1, "SQLITE_CONSTRAINT_UNIQUE"]);

    for (const args of [[undefined], [1, 2]] as any[]) {
      const e = await db.execute({ sql: "SELECT ? AS x", args }).catch((x) => x);
      expect(e).toBeInstanceOf(LibsqlError);
      expect(e.code).toBe("SQL_INPUT_ERROR");
    }
    const syntax = await db.execute("SELEC 1").catch((e) => e);
    expect([syntax.code, syntax.message]).toEqual(["SQLITE_ERROR", 'SQLITE_ERROR: near "SELEC": syntax error']);
  });

  test("close() rejects queued work with CLIENT_CLOSED, rolls back the open transaction; reconnect() reopens", async () => {
    const db = open();
    await db.execute("CREATE TABLE t (v INTEGER)");
    await db.execute("INSERT INTO t VALUES (1)");
    const tx = await db.transaction("write");
    await tx.execute("INSERT INTO t VALUES (2)");
    const queued = db.execute("INSERT INTO t VALUES (3)").catch((e) => e);
    db.close();
    expect(tx.closed).toBe(true);
    const err = await queued;
    expect(err).toBeInstanceOf(LibsqlError);
    expect(err.code).toBe("CLIENT_CLOSED");
    await expect(db.transaction("write")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });

    db.reconnect();
    expect(db.closed).toBe(false);
    expect((await db.execute("SELECT v FROM t")).rows.map((r) => r.v)).toEqual([1]);
    await db.execute("INSERT INTO t VALUES (4)");
    expect((await db.execute("SELECT count(*) AS n FROM t")).rows[0]!.n).toBe(2);
  });

  test("sync() resolves undefined and protocol is file", async () => {
    const db = open();
    expect(await db.sync()).toBeUndefined();
    expect(db.protocol).toBe("file");
  });

  test("openClient: paths and file: URLs open the adapter, http/libsql URLs the remote client", async () => {
    const tmp = tempDbPath();
    try {
      for (const location of [tmp.path, `file://${tmp.path}`, `file:${tmp.path}`]) {
        const c = openClient(location);
        expect(c.protocol).toBe("file");
        await c.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER)");
        c.close();
      }
      const remote = openClient("http://127.0.0.1:1");
      expect(remote.protocol).toBe("http");
      remote.close();
      const turso = openClient("libsql://example.invalid");
      expect(turso.protocol).toBe("http");
      turso.close();
      expect(() => openClient("ws://127.0.0.1:1")).toThrow(/Unsupported database URL scheme/);
    } finally {
      tmp.remove();
    }
  });
});
