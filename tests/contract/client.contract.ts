// Contract for the @libsql/client `Client` interface as Burrow uses it. The same suite runs against our bun:sqlite
// adapter and against @libsql/client/http talking to a real sqld, so both embedded and remote mode behave alike.
import { afterEach, describe, expect, test } from "bun:test";
import type { Client, IntMode, ResultSet } from "@libsql/core/api";
import { LibsqlBatchError, LibsqlError } from "@libsql/core/api";

export type ContractTarget = { client: Client; cleanup(): Promise<void> };
export type ContractOptions = {
  /** false when reads outside an interactive transaction can see its uncommitted writes (single-connection :memory:). */
  snapshotReads?: boolean;
};

const TIMEOUT_MS = 10_000;

export function runClientContract(
  name: string,
  make: (opts?: { intMode?: IntMode }) => Promise<ContractTarget>,
  options: ContractOptions = {},
): void {
  describe(name, () => {
    const open: ContractTarget[] = [];
    let seq = 0;
    /** The remote target shares one database between tests, so every test uses fresh table names. */
    const table = (base: string) => `${base}_${Date.now().toString(36)}_${++seq}`;
    const connect = async (opts?: { intMode?: IntMode }) => {
      const target = await make(opts);
      open.push(target);
      return target.client;
    };
    afterEach(async () => {
      for (const target of open.splice(0)) await target.cleanup();
    });

    test("result set shapes: columns, types, rows, rowsAffected, lastInsertRowid, toJSON", async () => {
      const db = await connect();
      const t = table("shapes");
      await db.execute(`CREATE TABLE ${t} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL)`);

      const ins = await db.execute({ sql: `INSERT INTO ${t} (name, score) VALUES (?, ?)`, args: ["ann", 1.5] });
      expect(ins.rowsAffected).toBe(1);
      expect(ins.lastInsertRowid).toBe(1n);
      expect(ins.columns).toEqual([]);
      expect(ins.rows).toEqual([]);
      await db.execute({ sql: `INSERT INTO ${t} (name, score) VALUES (?, ?)`, args: ["bob", null] });

      const rs = await db.execute(`SELECT id, name, score, upper(name) AS loud FROM ${t} ORDER BY id`);
      expect(rs.columns).toEqual(["id", "name", "score", "loud"]);
      expect(rs.columnTypes).toEqual(["INTEGER", "TEXT", "REAL", ""]);
      expect(rs.rowsAffected).toBe(0);
      expect(rs.lastInsertRowid).toBeUndefined();
      expect(rs.rows.length).toBe(2);

      const row = rs.rows[0]!;
      expect(row.id).toBe(1);
      expect(row.name).toBe("ann");
      expect(row.score).toBe(1.5);
      expect([row[0], row[1], row[2], row[3], row.length]).toEqual([1, "ann", 1.5, "ANN", 4]);
      expect(Object.keys(row)).toEqual(["id", "name", "score", "loud"]);
      const forIn: string[] = [];
      for (const key in row) forIn.push(key);
      expect(forIn).toEqual(["id", "name", "score", "loud"]);
      expect(Object.getOwnPropertyDescriptor(row, "name")?.enumerable).toBe(true);
      expect(Object.prototype.propertyIsEnumerable.call(row, 0)).toBe(false);
      expect(Object.prototype.propertyIsEnumerable.call(row, "length")).toBe(false);
      expect(JSON.stringify(row)).toBe('{"id":1,"name":"ann","score":1.5,"loud":"ANN"}');
      expect(Array.from(row as ArrayLike<unknown>)).toEqual([1, "ann", 1.5, "ANN"]);
      expect(row as unknown).toEqual({ id: 1, name: "ann", score: 1.5, loud: "ANN" });
      expect(rs.rows[1]!.score).toBeNull();

      expect(rs.toJSON()).toEqual({
        columns: ["id", "name", "score", "loud"],
        columnTypes: ["INTEGER", "TEXT", "REAL", ""],
        rows: [
          [1, "ann", 1.5, "ANN"],
          [2, "bob", null, "BOB"],
        ],
        rowsAffected: 0,
        lastInsertRowid: null,
      });
      expect(JSON.parse(JSON.stringify(ins))).toEqual({
        columns: [],
        columnTypes: [],
        rows: [],
        rowsAffected: 1,
        lastInsertRowid: "1",
      });
    });

    test("duplicate column names: the name is the first column, indexes keep every value", async () => {
      const db = await connect();
      const row = (await db.execute("SELECT 1 AS a, 2 AS a, 3 AS b")).rows[0]!;
      expect(row.a).toBe(1);
      expect([row[0], row[1], row[2], row.length]).toEqual([1, 2, 3, 3]);
      expect(Object.keys(row)).toEqual(["a", "b"]);
    });

    test("positional and named arguments", async () => {
      const db = await connect();
      const one = async (sql: string, args: any) => (await db.execute({ sql, args })).rows[0]!;
      expect(Object.values(await one("SELECT ? AS x, ? AS y", [1, "two"]))).toEqual([1, "two"]);
      expect(Object.values(await one("SELECT ?2 AS x, ?1 AS y", ["a", "b"]))).toEqual(["b", "a"]);
      expect((await db.execute("SELECT ? AS x", [7])).rows[0]!.x).toBe(7);
      for (const p of [":", "@", "$"]) {
        const sql = `SELECT ${p}a AS a, ${p}b AS b, ${p}a + 1 AS c`;
        expect(Object.values(await one(sql, { [`${p}a`]: 10, [`${p}b`]: "x" }))).toEqual([10, "x", 11]);
        expect(Object.values(await one(sql, { a: 20, b: "y" }))).toEqual([20, "y", 21]);
      }
    });

    test("a statement with parameters but no arguments is rejected, not bound to stale values", async () => {
      const db = await connect();
      expect((await db.execute({ sql: "SELECT ? AS x", args: [5] })).rows[0]!.x).toBe(5);
      await expect(db.execute("SELECT ? AS x")).rejects.toBeInstanceOf(LibsqlError);
      await expect(db.execute({ sql: "SELECT :a AS x", args: {} })).rejects.toBeInstanceOf(LibsqlError);
    });

    test("value round trip: boolean, null, bigint, number, text, Uint8Array/ArrayBuffer (BLOB → ArrayBuffer), Date", async () => {
      const db = await connect();
      const t = table("vals");
      await db.execute(`CREATE TABLE ${t} (b INTEGER, n TEXT, i INTEGER, f REAL, s TEXT, blob BLOB, blob2 BLOB, d INTEGER)`);
      const when = new Date("2024-05-06T07:08:09.010Z");
      await db.execute({
        sql: `INSERT INTO ${t} VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [true, null, 42n, -0.25, "héllo ✓", new Uint8Array([0, 1, 254, 255]), new Uint8Array([9, 8]).buffer, when],
      });
      await db.execute({ sql: `INSERT INTO ${t} (b) VALUES (?)`, args: [false] });
      const rs = await db.execute(`SELECT * FROM ${t} ORDER BY rowid`);
      const r = rs.rows[0]!;
      expect(r.b).toBe(1);
      expect(rs.rows[1]!.b).toBe(0);
      expect(r.n).toBeNull();
      expect(r.i).toBe(42);
      expect(r.f).toBe(-0.25);
      expect(r.s).toBe("héllo ✓");
      expect(r.blob).toBeInstanceOf(ArrayBuffer);
      expect([...new Uint8Array(r.blob as ArrayBuffer)]).toEqual([0, 1, 254, 255]);
      expect([...new Uint8Array(r.blob2 as ArrayBuffer)]).toEqual([9, 8]);
      expect(r.d).toBe(when.getTime());
      expect((rs.toJSON().rows[0] as unknown[])[5]).toBe("AAH+/w==");
    });

    test('intMode "bigint" returns every integer as bigint, beyond 2^53 too', async () => {
      const db = await connect({ intMode: "bigint" });
      const t = table("big");
      await db.execute(`CREATE TABLE ${t} (id INTEGER PRIMARY KEY, v INTEGER, f REAL)`);
      const big = 2n ** 62n + 3n;
      const ins = await db.execute({ sql: `INSERT INTO ${t} (v, f) VALUES (?, ?)`, args: [big, 2.5] });
      expect(ins.lastInsertRowid).toBe(1n);
      const row = (await db.execute(`SELECT id, v, f, count(*) AS n FROM ${t}`)).rows[0]!;
      expect([row.id, row.v, row.f, row.n]).toEqual([1n, big, 2.5, 1n]);
    });

    test("INSERT/UPDATE/DELETE ... RETURNING report rowsAffected and return rows", async () => {
      const db = await connect();
      const t = table("ret");
      await db.execute(`CREATE TABLE ${t} (id INTEGER PRIMARY KEY, v TEXT)`);
      const ins = await db.execute(`INSERT INTO ${t} (v) VALUES ('a'), ('b') RETURNING id, v`);
      expect(ins.columns).toEqual(["id", "v"]);
      expect(ins.rows.map((r) => [r.id, r.v])).toEqual([
        [1, "a"],
        [2, "b"],
      ]);
      expect(ins.rowsAffected).toBe(2);
      expect(ins.lastInsertRowid).toBe(2n);

      await db.execute(`INSERT INTO ${t} (v) VALUES ('c')`);
      const upd = await db.execute(`UPDATE ${t} SET v = v || '!' WHERE id <= 2 RETURNING v`);
      expect(upd.rows.map((r) => r.v)).toEqual(["a!", "b!"]);
      expect(upd.rowsAffected).toBe(2);

      const none = await db.execute(`UPDATE ${t} SET v = 'z' WHERE id > 100 RETURNING id`);
      expect(none.rows).toEqual([]);
      expect(none.rowsAffected).toBe(0);

      const del = await db.execute(`DELETE FROM ${t} WHERE id = 3 RETURNING id`);
      expect(del.rows.map((r) => r.id)).toEqual([3]);
      expect(del.rowsAffected).toBe(1);
    });

    test("reads see schema changes: SELECT * and pragma_table_info after ALTER TABLE in a transaction", async () => {
      const db = await connect();
      const t = table("schema");
      await db.execute(`CREATE TABLE ${t} (a INTEGER, b TEXT, c TEXT)`);
      await db.execute(`INSERT INTO ${t} VALUES (1, 'x', 'y')`);
      const info = { sql: "SELECT name FROM pragma_table_info(?)", args: [t] };
      expect((await db.execute(info)).rows.map((r) => r.name)).toEqual(["a", "b", "c"]);
      expect((await db.execute(`SELECT * FROM ${t}`)).columns).toEqual(["a", "b", "c"]);

      const tx = await db.transaction("write");
      try {
        await tx.execute(`ALTER TABLE ${t} ADD COLUMN d INTEGER DEFAULT 7`);
        await tx.execute(`ALTER TABLE ${t} DROP COLUMN b`);
        await tx.commit();
      } finally {
        tx.close();
      }
      expect((await db.execute(info)).rows.map((r) => r.name)).toEqual(["a", "c", "d"]);
      const rs = await db.execute(`SELECT * FROM ${t}`);
      expect(rs.columns).toEqual(["a", "c", "d"]);
      expect(rs.rows[0]).toMatchObject({ a: 1, c: "y", d: 7 });
      expect(rs.rows[0]!.length).toBe(3);
    });

    test("EXPLAIN and EXPLAIN QUERY PLAN leave later reads current", async () => {
      const db = await connect();
      const t = table("explain");
      await db.execute(`CREATE TABLE ${t} (a INTEGER)`);
      const count = async () => (await db.execute(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n;
      for (const explain of [`EXPLAIN QUERY PLAN SELECT * FROM ${t} WHERE a = ?`, `EXPLAIN SELECT * FROM ${t} WHERE a = ?`]) {
        const before = Number(await count());
        expect((await db.execute({ sql: explain, args: [1] })).rows.length).toBeGreaterThan(0);
        for (let i = 1; i <= 3; i++) {
          await db.execute(`INSERT INTO ${t} VALUES (${i})`);
          expect(await count()).toBe(before + i);
        }
      }
    });

    test("errors map to LibsqlError with the primary SQLite code and the SQLite message", async () => {
      const db = await connect();
      const t = table("uniq");
      await db.execute(`CREATE TABLE ${t} (k TEXT UNIQUE)`);
      await db.execute(`INSERT INTO ${t} VALUES ('x')`);
      const err = await db.execute(`INSERT INTO ${t} VALUES ('x')`).catch((e) => e);
      expect(err).toBeInstanceOf(LibsqlError);
      expect(err.code).toBe("SQLITE_CONSTRAINT");
      expect(err.message).toMatch(new RegExp(`UNIQUE constraint failed: ${t}\\.k`));
      const missing = await db.execute("SELECT * FROM no_such_table_here").catch((e) => e);
      expect(missing).toBeInstanceOf(LibsqlError);
      expect(missing.message).toMatch(/no such table/);
    });

    test('batch("write") is atomic: a failing statement rolls back the earlier ones', async () => {
      const db = await connect();
      const t = table("batch");
      await db.execute(`CREATE TABLE ${t} (k TEXT UNIQUE)`);
      const ok = await db.batch(
        [`INSERT INTO ${t} VALUES ('a')`, { sql: `INSERT INTO ${t} VALUES (?)`, args: ["b"] }, [`SELECT count(*) AS n FROM ${t}`]],
        "write",
      );
      expect(ok.length).toBe(3);
      expect(ok[1]!.rowsAffected).toBe(1);
      expect(ok[2]!.rows[0]!.n).toBe(2);

      const err = await db
        .batch([`INSERT INTO ${t} VALUES ('c')`, [`INSERT INTO ${t} VALUES (?)`, ["d"]], `INSERT INTO ${t} VALUES ('a')`], "write")
        .catch((e) => e);
      expect(err).toBeInstanceOf(LibsqlBatchError);
      expect(err.statementIndex).toBe(2);
      expect(err.code).toBe("SQLITE_CONSTRAINT");
      expect(err.message).toMatch(/UNIQUE constraint failed/);
      const rows = (await db.execute(`SELECT k FROM ${t} ORDER BY k`)).rows.map((r) => r.k);
      expect(rows).toEqual(["a", "b"]);

      // The client stays usable after a failed batch (no transaction left open).
      await db.batch([`INSERT INTO ${t} VALUES ('e')`], "deferred");
      expect((await db.execute(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n).toBe(3);
    });

    test.skipIf(options.snapshotReads === false)(
      'transaction("write"): uncommitted writes are invisible outside, commit publishes them',
      async () => {
        const db = await connect();
        const t = table("txvis");
        await db.execute(`CREATE TABLE ${t} (v INTEGER)`);
        await db.execute(`INSERT INTO ${t} VALUES (1)`);
        const tx = await db.transaction("write");
        try {
          await tx.execute(`INSERT INTO ${t} VALUES (2)`);
          expect((await tx.execute(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n).toBe(2);
          expect((await withTimeout(db.execute(`SELECT count(*) AS n FROM ${t}`), 3000)).rows[0]!.n).toBe(1);
          await tx.commit();
        } finally {
          tx.close();
        }
        expect((await db.execute(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n).toBe(2);
      },
      TIMEOUT_MS,
    );

    test(
      "a write issued while a write transaction is open completes only after commit, without deadlock",
      async () => {
        const db = await connect();
        const t = table("txwait");
        await db.execute(`CREATE TABLE ${t} (v INTEGER)`);
        const tx = await db.transaction("write");
        let outside: Promise<ResultSet>;
        let outsideDone = false;
        try {
          await tx.execute(`INSERT INTO ${t} VALUES (1)`);
          outside = db.execute(`INSERT INTO ${t} VALUES (2)`);
          void outside.then(
            () => (outsideDone = true),
            () => {},
          );
          await Bun.sleep(250);
          expect(outsideDone).toBe(false);
          await tx.execute(`INSERT INTO ${t} VALUES (3)`);
          await tx.commit();
        } finally {
          tx.close();
        }
        expect((await withTimeout(outside!, 5000)).rowsAffected).toBe(1);
        const rows = (await db.execute(`SELECT v FROM ${t} ORDER BY rowid`)).rows.map((r) => r.v);
        expect(rows).toEqual([1, 3, 2]);
      },
      TIMEOUT_MS,
    );

    test("transaction rollback and close discard writes; a finished transaction is closed", async () => {
      const db = await connect();
      const t = table("txrb");
      await db.execute(`CREATE TABLE ${t} (v INTEGER)`);

      const tx = await db.transaction("write");
      await tx.execute(`INSERT INTO ${t} VALUES (1)`);
      const [a, b] = await tx.batch([`INSERT INTO ${t} VALUES (2)`, `SELECT count(*) AS n FROM ${t}`]);
      expect(a!.rowsAffected).toBe(1);
      expect(b!.rows[0]!.n).toBe(2);
      await tx.executeMultiple(`INSERT INTO ${t} VALUES (3); INSERT INTO ${t} VALUES (4);`);
      expect(tx.closed).toBe(false);
      await tx.rollback();
      expect(tx.closed).toBe(true);
      const closedErr = await tx.execute("SELECT 1").catch((e) => e);
      expect(closedErr).toBeInstanceOf(LibsqlError);
      expect(closedErr.code).toBe("TRANSACTION_CLOSED");
      tx.close(); // no-op once closed

      const tx2 = await db.transaction("deferred");
      await tx2.execute(`INSERT INTO ${t} VALUES (5)`);
      tx2.close();
      expect(tx2.closed).toBe(true);
      expect((await db.execute(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n).toBe(0);

      // A failing statement inside a transaction throws but leaves the transaction usable.
      const tx3 = await db.transaction("write");
      try {
        await tx3.execute(`INSERT INTO ${t} VALUES (6)`);
        await expect(tx3.execute("INSERT INTO no_such_table VALUES (1)")).rejects.toBeInstanceOf(LibsqlError);
        expect(tx3.closed).toBe(false);
        await tx3.commit();
        expect(tx3.closed).toBe(true);
      } finally {
        tx3.close();
      }
      expect((await db.execute(`SELECT v FROM ${t}`)).rows.map((r) => r.v)).toEqual([6]);
    });

    test('transaction("read") reads', async () => {
      const db = await connect();
      const tx = await db.transaction("read");
      try {
        expect((await tx.execute("SELECT 40 + 2 AS x")).rows[0]!.x).toBe(42);
      } finally {
        tx.close();
      }
    });

    test("executeMultiple runs every statement; a failure stops the rest", async () => {
      const db = await connect();
      const t = table("multi");
      await db.executeMultiple(`
        CREATE TABLE ${t} (v INTEGER);
        INSERT INTO ${t} VALUES (1);
        INSERT INTO ${t} VALUES (2);
      `);
      expect((await db.execute(`SELECT sum(v) AS s FROM ${t}`)).rows[0]!.s).toBe(3);
      await expect(
        db.executeMultiple(`INSERT INTO ${t} VALUES (10); INSERT INTO nope VALUES (1); INSERT INTO ${t} VALUES (20);`),
      ).rejects.toBeInstanceOf(LibsqlError);
      expect((await db.execute(`SELECT sum(v) AS s FROM ${t}`)).rows[0]!.s).toBe(13);
    });

    test("migrate runs with foreign keys off and turns them back on", async () => {
      const db = await connect();
      const parent = table("parent");
      const child = table("child");
      await db.execute(`CREATE TABLE ${parent} (id INTEGER PRIMARY KEY)`);
      await db.execute(`CREATE TABLE ${child} (pid INTEGER REFERENCES ${parent}(id))`);
      const orphan = `INSERT INTO ${child} VALUES (99)`;
      const fk = await db.execute(orphan).catch((e) => e);
      expect(fk).toBeInstanceOf(LibsqlError);
      expect(fk.code).toBe("SQLITE_CONSTRAINT");
      const rs = await db.migrate([orphan]);
      expect(rs[0]!.rowsAffected).toBe(1);
      await expect(db.execute(orphan)).rejects.toBeInstanceOf(LibsqlError);
    });

    test("R*Tree: insert and bounding-box query", async () => {
      const db = await connect();
      const t = table("rt");
      await db.execute(`CREATE VIRTUAL TABLE ${t} USING rtree(id, minX, maxX, minY, maxY)`);
      await db.batch(
        [
          { sql: `INSERT INTO ${t} VALUES (?, ?, ?, ?, ?)`, args: [1, 0, 1, 0, 1] },
          { sql: `INSERT INTO ${t} VALUES (?, ?, ?, ?, ?)`, args: [2, 5, 6, 5, 6] },
          { sql: `INSERT INTO ${t} VALUES (?, ?, ?, ?, ?)`, args: [3, 0.5, 2, 0.5, 2] },
        ],
        "write",
      );
      const rs = await db.execute({
        sql: `SELECT id FROM ${t} WHERE maxX >= :x0 AND minX <= :x1 AND maxY >= :y0 AND minY <= :y1 ORDER BY id`,
        args: { x0: 0.9, x1: 1.5, y0: 0.9, y1: 1.5 },
      });
      expect(rs.rows.map((r) => r.id)).toEqual([1, 3]);
    });

    test("STRICT tables reject a value of the wrong type with SQLITE_CONSTRAINT", async () => {
      const db = await connect();
      const t = table("strict");
      await db.execute(`CREATE TABLE ${t} (n INTEGER NOT NULL) STRICT`);
      await db.execute({ sql: `INSERT INTO ${t} VALUES (?)`, args: [1] });
      const err = await db.execute({ sql: `INSERT INTO ${t} VALUES (?)`, args: ["not a number"] }).catch((e) => e);
      expect(err).toBeInstanceOf(LibsqlError);
      expect(err.code).toBe("SQLITE_CONSTRAINT");
      expect(err.message).toMatch(/cannot store TEXT value in INTEGER column/);
    });

    test("close() marks the client closed and later calls reject", async () => {
      const db = await connect();
      expect(db.closed).toBe(false);
      await db.execute("SELECT 1");
      db.close();
      expect(db.closed).toBe(true);
      await expect(db.execute("SELECT 1")).rejects.toBeInstanceOf(LibsqlError);
      db.close(); // idempotent
      expect(db.closed).toBe(true);
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms (deadlock?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
