// The one mapping of a full disk (src/db/disk-full.ts): which errors say the disk is full (SQLite's SQLITE_FULL as
// bun and libsql report it, ENOSPC and EDQUOT from the file system, their messages from a worker thread), the 507
// they become, and the record an embedded database keeps (a failed write marks the disk full, the next write that
// succeeds clears it). SQLITE_FULL is real here: a database capped with max_page_count.

import { afterEach, describe, expect, test } from "bun:test";
import { LibsqlBatchError, LibsqlError } from "@libsql/core/api";
import { type BunSqliteClient, openBunSqliteClient } from "../../src/db/bun-sqlite-client.ts";
import {
  DISK_FULL_MESSAGE,
  type DiskState,
  asDiskFull,
  diskFullError,
  isDiskFull,
  noteDiskFull,
  watchedWrite,
} from "../../src/db/disk-full.ts";
import { ApiError } from "../../src/errors.ts";

const fsError = (code: string, message: string) => Object.assign(new Error(message), { code, errno: -28, syscall: "write" });
const freshDisk = (): DiskState => ({ full: false, refusedWrites: 0, lastFullAt: null });

describe("isDiskFull", () => {
  test("SQLITE_FULL as libsql reports it (a statement or a batch), and as bun:sqlite throws it", () => {
    expect(isDiskFull(new LibsqlError("database or disk is full", "SQLITE_FULL", "SQLITE_FULL", 13))).toBe(true);
    expect(isDiskFull(new LibsqlBatchError("database or disk is full", 1, "SQLITE_FULL", "SQLITE_FULL", 13))).toBe(true);
    expect(isDiskFull(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL", errno: 13 }))).toBe(true);
  });

  test("ENOSPC and EDQUOT from the file system, also as a bare message or as the cause of another error", () => {
    expect(isDiskFull(fsError("ENOSPC", "ENOSPC: no space left on device, write"))).toBe(true);
    expect(isDiskFull(fsError("EDQUOT", "EDQUOT: disk quota exceeded, write"))).toBe(true);
    // A worker thread's error arrives as its message only.
    expect(isDiskFull(new Error("ENOSPC: no space left on device, write"))).toBe(true);
    expect(isDiskFull("the backup worker failed: No space left on device")).toBe(true);
    expect(isDiskFull(new Error("wrapped", { cause: fsError("ENOSPC", "x") }))).toBe(true);
  });

  test("our own 507 is one; every other error is not", () => {
    expect(isDiskFull(diskFullError())).toBe(true);
    expect(isDiskFull(new ApiError(500, "the backup failed: ENOSPC"))).toBe(false);
    expect(isDiskFull(new LibsqlError("UNIQUE constraint failed: t.id", "SQLITE_CONSTRAINT", "SQLITE_CONSTRAINT_PRIMARYKEY", 1555))).toBe(
      false,
    );
    expect(isDiskFull(new LibsqlError("disk I/O error", "SQLITE_IOERR", "SQLITE_IOERR_WRITE", 778))).toBe(false);
    expect(isDiskFull(fsError("ENOENT", "ENOENT: no such file or directory, open 'x'"))).toBe(false);
    expect(isDiskFull(fsError("EACCES", "EACCES: permission denied"))).toBe(false);
    expect(isDiskFull(new Error("the disk is fully encrypted"))).toBe(false);
    expect(isDiskFull(null)).toBe(false);
    expect(isDiskFull(undefined)).toBe(false);
    expect(isDiskFull(42)).toBe(false);
  });
});

describe("the 507", () => {
  test("renders the one message, with the cause kept for the log only", () => {
    const cause = fsError("ENOSPC", "ENOSPC: no space left on device, write");
    const e = asDiskFull(cause)!;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(507);
    expect(e.toJSON()).toEqual({ error: DISK_FULL_MESSAGE });
    expect(DISK_FULL_MESSAGE).toBe("the server's disk is full: writes are refused until space is freed");
    expect(e.cause).toBe(cause);
    expect(asDiskFull(e)).toBe(e);
    expect(asDiskFull(new ApiError(400, "bad"))).toBeNull();
    expect(asDiskFull(new Error("boom"))).toBeNull();
  });

  test("noteDiskFull marks the disk full and counts a refusal (or only marks it)", () => {
    const disk = freshDisk();
    noteDiskFull(disk, false);
    expect(disk).toMatchObject({ full: true, refusedWrites: 0 });
    expect(disk.lastFullAt).toBeNumber();
    noteDiskFull(disk);
    expect(disk.refusedWrites).toBe(1);
  });

  test("watchedWrite: a failure for a full disk marks it, another failure does not, a success clears it", () => {
    const disk = freshDisk();
    expect(() =>
      watchedWrite(disk, () => {
        throw new Error("UNIQUE constraint failed");
      }),
    ).toThrow("UNIQUE");
    expect(disk.full).toBe(false);
    expect(() =>
      watchedWrite(disk, () => {
        throw fsError("ENOSPC", "no space left on device");
      }),
    ).toThrow("no space");
    expect(disk.full).toBe(true);
    // A read on the writer, or a write that changed nothing, says nothing about space.
    expect(watchedWrite(disk, () => ({ rowsAffected: 0 }))).toEqual({ rowsAffected: 0 });
    expect(watchedWrite(disk, () => [{ rowsAffected: 0 }])).toEqual([{ rowsAffected: 0 }]);
    expect(watchedWrite(disk, () => undefined)).toBeUndefined();
    expect(disk.full).toBe(true);
    expect(watchedWrite(disk, () => [{ rowsAffected: 0 }, { rowsAffected: 2 }])).toHaveLength(2);
    expect(disk.full).toBe(false);
    expect(watchedWrite(undefined, () => 8)).toBe(8);
  });
});

describe("an embedded database that fills up", () => {
  let db: BunSqliteClient | undefined;
  afterEach(() => db?.close());

  test("a write fails with SQLITE_FULL, the disk is marked full, reads go on; once there is room writes succeed and clear it", async () => {
    db = openBunSqliteClient(":memory:");
    const disk = freshDisk();
    db.disk = disk;
    await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const pages = Number((await db.execute("PRAGMA page_count")).rows[0]![0]);
    await db.execute(`PRAGMA max_page_count = ${pages + 4}`);
    let stored = 0;
    let failure: unknown = null;
    for (let i = 0; i < 100 && failure === null; i++) {
      try {
        await db.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["x".repeat(3000)] });
        stored++;
      } catch (e) {
        failure = e;
      }
    }
    expect(failure).toBeInstanceOf(LibsqlError);
    expect((failure as LibsqlError).code).toBe("SQLITE_FULL");
    expect(isDiskFull(failure)).toBe(true);
    expect(asDiskFull(failure)?.status).toBe(507);
    expect(disk.full).toBe(true);
    // A batch (one transaction) fails whole, and the interactive transaction's failure marks it too.
    await expect(
      db.batch(
        [
          { sql: "INSERT INTO t (v) VALUES (?)", args: ["small"] },
          { sql: "INSERT INTO t (v) VALUES (?)", args: ["y".repeat(20_000)] },
        ],
        "write",
      ),
    ).rejects.toMatchObject({ code: "SQLITE_FULL" });
    expect(Number((await db.execute("SELECT count(*) FROM t")).rows[0]![0])).toBe(stored);
    // Reads (on the writer too: a "read" batch) leave the mark.
    expect(Number((await db.batch(["SELECT count(*) FROM t"], "read"))[0]!.rows[0]![0])).toBe(stored);
    expect(disk.full).toBe(true);
    // Room again: the next write succeeds and the disk is no longer full (an interactive transaction: at COMMIT).
    await db.execute(`PRAGMA max_page_count = ${pages + 100}`);
    expect(disk.full).toBe(true);
    const tx = await db.transaction("write");
    await tx.execute({ sql: "INSERT INTO t (v) VALUES (?)", args: ["after"] });
    expect(disk.full).toBe(true);
    await tx.commit();
    expect(disk.full).toBe(false);
    expect(Number((await db.execute("SELECT count(*) FROM t")).rows[0]![0])).toBe(stored + 1);
    expect((await db.execute("PRAGMA integrity_check")).rows[0]![0]).toBe("ok");
  });
});
