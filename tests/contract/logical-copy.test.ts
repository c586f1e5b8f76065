// The logical copy behind backups and restores on a libSQL server, run against a real sqld: a local database with
// every kind of object Burrow creates (rowid tables, WITHOUT ROWID tables with composite keys, an R*Tree, indexes,
// a view, a trigger, AUTOINCREMENT) and awkward values (integers past 2^53, floats without a fraction in untyped
// columns, blobs, NULLs, quotes in names, a column named rowid) goes to the server and back, and comes back the
// same: same schema text, same rows, same SQLite type of every value, same rowids, the trigger not fired by the copy.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createClient } from "@libsql/client/http";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileReader, fileWriter, remoteReader, remoteWriter } from "../../src/backup/copy-sides.ts";
import { copyDatabase, dropStatements, readSchema } from "../../src/backup/logical-copy.ts";
import { tempDir } from "../helpers/app.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

let sqld: Sqld;
const dir = tempDir("burrow-logical-copy-");
beforeAll(async () => {
  sqld = await startSqld();
}, 60_000);
afterAll(async () => {
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ROWS = 4321; // more than two pages

function source(path: string): Database {
  const db = new Database(path, { create: true, safeIntegers: true });
  db.run(`CREATE TABLE plain (id INTEGER PRIMARY KEY, name TEXT, score REAL, raw, data BLOB)`);
  db.run(`CREATE TABLE "we""ird" (rowid TEXT, v ANY) STRICT`);
  db.run(`CREATE TABLE pairs (a TEXT NOT NULL, b INTEGER NOT NULL, v TEXT, PRIMARY KEY (a, b)) STRICT, WITHOUT ROWID`);
  db.run(`CREATE TABLE seq (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)`);
  db.run(`CREATE TABLE audit (n INTEGER)`);
  db.run(`CREATE VIRTUAL TABLE geo USING rtree(id, min_lat, max_lat, min_lon, max_lon)`);
  db.run(`CREATE INDEX plain_name ON plain (name)`);
  db.run(`CREATE VIEW plain_view AS SELECT id, name FROM plain WHERE score > 1`);
  db.run(`CREATE TRIGGER plain_audit AFTER INSERT ON plain BEGIN INSERT INTO audit (n) VALUES (new.id); END`);
  const insert = db.prepare(`INSERT INTO plain (id, name, score, raw, data) VALUES (?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (let i = 1; i <= ROWS; i++) {
      const raw =
        i % 5 === 0
          ? null
          : i % 5 === 1
            ? 9007199254740993n + BigInt(i)
            : i % 5 === 2
              ? `text ${i} ünï 'q'`
              : i % 5 === 3
                ? 0.1 * i
                : new Uint8Array([i & 255, 0, 255]);
      insert.run(BigInt(i * 7), i % 3 ? `name ${i}` : null, i / 3, raw as never, i % 4 ? new Uint8Array([1, 2, i & 255]) : null);
    }
  })();
  // A float with no fraction in an untyped column must stay REAL.
  db.run(
    `INSERT INTO "we""ird" (rowid, v) VALUES ('the rowid column', CAST(2 AS REAL)), ('int', 2), ('big', 9223372036854775807), ('neg', -9223372036854775808)`,
  );
  const pair = db.prepare(`INSERT INTO pairs (a, b, v) VALUES (?, ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < 2500; i++) pair.run(`k${i % 7}`, BigInt(i), `v${i}`);
  })();
  db.run(`INSERT INTO seq (v) VALUES ('a'), ('b'), ('c')`);
  db.run(`DELETE FROM seq WHERE v = 'c'`); // the AUTOINCREMENT counter stays at 3
  const g = db.prepare(`INSERT INTO geo VALUES (?, ?, ?, ?, ?)`);
  for (let i = 1; i <= 300; i++) g.run(BigInt(i * 3), 40 + i / 100, 40 + i / 100, -3.7 + i / 1000, -3.7 + i / 1000);
  return db;
}

/** Every object's SQL and every row of every table, with each value's SQLite type. */
function dump(db: Database): unknown {
  const objects = db.query(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name`).all();
  const tables: Record<string, unknown> = {};
  for (const { name } of db.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'geo_%'`).all() as {
    name: string;
  }[]) {
    const q = `"${name.replace(/"/g, '""')}"`;
    const cols = (db.query(`SELECT name FROM pragma_table_info(?)`).all(name) as { name: string }[]).map((c) => `"${c.name}"`);
    const typed = cols.map((c) => `typeof(${c}), quote(${c})`).join(", ");
    const rowid = name === "pairs" || name === `we"ird` ? "" : "_rowid_, ";
    tables[name] = db.query(`SELECT ${rowid}${typed} FROM ${q} ORDER BY 1, 2, 3`).values();
  }
  return { objects, tables };
}

test("a database goes to the server and back unchanged: schema, rows, types, rowids, R*Tree, AUTOINCREMENT", async () => {
  const original = source(join(dir, "original.db"));
  const client = createClient({ url: sqld.url, intMode: "bigint" });
  try {
    const audited = original.query(`SELECT count(*) AS n FROM audit`).get() as { n: bigint };
    expect(audited.n).toBe(BigInt(ROWS));

    const up = await client.transaction("write");
    const up1 = await copyDatabase(fileReader(original), remoteWriter(up));
    await up.commit();
    expect(up1.tables).toBe(6);
    expect(up1.rows).toBe(ROWS + 4 + 2500 + 2 + ROWS + 300);

    const back = new Database(join(dir, "back.db"), { create: true, safeIntegers: true });
    const read = await client.transaction("read");
    const w = fileWriter(back);
    await copyDatabase(remoteReader(read), w);
    w.finish();
    read.close();

    expect(dump(back)).toEqual(dump(original));
    // The trigger came after the rows: the copy did not fire it (audit has the original's rows, no more).
    expect((back.query(`SELECT count(*) AS n FROM audit`).get() as { n: bigint }).n).toBe(BigInt(ROWS));
    expect(back.query(`PRAGMA integrity_check`).get()).toEqual({ integrity_check: "ok" });
    // The R*Tree answers a box query the same on both.
    const box = `SELECT id FROM geo WHERE min_lat >= 40.5 AND max_lat <= 41 AND min_lon >= -3.66 ORDER BY id`;
    expect(back.query(box).values()).toEqual(original.query(box).values());
    expect((back.query(box).values() as unknown[]).length).toBeGreaterThan(10);
    // AUTOINCREMENT goes on after 3, not after 2.
    back.run(`INSERT INTO seq (v) VALUES ('d')`);
    expect(back.query(`SELECT id FROM seq WHERE v = 'd'`).get()).toEqual({ id: 4n });
    back.close();
  } finally {
    original.close();
    client.close();
  }
}, 60_000);

test("dropping what is there, then copying, replaces a database in one transaction; a failure leaves it as it was", async () => {
  const client = createClient({ url: sqld.url, intMode: "bigint" });
  const other = new Database(join(dir, "other.db"), { create: true, safeIntegers: true });
  other.run(`CREATE TABLE only_here (x TEXT)`);
  other.run(`INSERT INTO only_here VALUES ('replaced')`);
  try {
    const before = await readSchema(remoteReader(client));
    expect(before.map((o) => o.name)).toContain("plain");

    // A copy that fails half-way (a table the server already has) rolls back with its drops.
    const bad = await client.transaction("write");
    await expect(
      (async () => {
        const w = remoteWriter(bad);
        for (const sql of dropStatements(before.filter((o) => o.name !== "plain"))) await w.exec(sql);
        await copyDatabase(fileReader(source(join(dir, "again.db"))), w);
      })(),
    ).rejects.toThrow(/already exists/);
    bad.close();
    expect((await client.execute(`SELECT count(*) FROM pairs`)).rows[0]![0]).toBe(2500n);

    const tx = await client.transaction("write");
    const w = remoteWriter(tx);
    for (const sql of dropStatements(before)) await w.exec(sql);
    await copyDatabase(fileReader(other), w);
    await tx.commit();
    const after = await readSchema(remoteReader(client));
    expect(after.map((o) => o.name)).toEqual(["only_here"]);
    expect((await client.execute(`SELECT x FROM only_here`)).rows[0]![0]).toBe("replaced");
  } finally {
    other.close();
    client.close();
  }
}, 60_000);
