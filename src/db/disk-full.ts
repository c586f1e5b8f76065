// A full disk: how SQLite and the file system say so (SQLITE_FULL "database or disk is full"; ENOSPC, EDQUOT), the
// one answer to a write refused for it (507, docs/decisions/operations.md#a-full-disk), and the record of it that
// the status page and /_metrics show (Operations.disk). Pure but for the record, which callers hand in.

import { ApiError } from "../errors.ts";

export const DISK_FULL_STATUS = 507;
export const DISK_FULL_MESSAGE = "the server's disk is full: writes are refused until space is freed";

/** Error codes that mean "no room": SQLite's primary code, the file system's (no space, quota exceeded). */
const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
/** The same in words, for an error that kept only its message (one from a worker thread or a guest's service call). */
const FULL_MESSAGE = /database or disk is full|\bENOSPC\b|\bEDQUOT\b|no space left on device|disk quota exceeded/i;

/**
 * Whether `e` (or an error it was caused by) says the disk is full: a SQLite/libSQL error whose code is SQLITE_FULL
 * (any extended code), a file-system error ENOSPC or EDQUOT, one of their messages, or our own 507.
 */
export function isDiskFull(e: unknown): boolean {
  let cur = e;
  for (let depth = 0; depth < 5 && cur !== null && cur !== undefined; depth++) {
    if (cur instanceof ApiError) return cur.status === DISK_FULL_STATUS;
    if (typeof cur === "string") return FULL_MESSAGE.test(cur);
    if (typeof cur !== "object") return false;
    const { code, message, cause } = cur as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && (FULL_CODES.has(code) || code.startsWith("SQLITE_FULL"))) return true;
    if (typeof message === "string" && FULL_MESSAGE.test(message)) return true;
    cur = cause;
  }
  return false;
}

/** The 507 a write refused for a full disk answers: `{"error": DISK_FULL_MESSAGE}`. */
export function diskFullError(cause?: unknown): ApiError {
  return new ApiError(DISK_FULL_STATUS, DISK_FULL_MESSAGE, cause === undefined ? {} : { cause });
}

/** `e` as the 507 when it says the disk is full, else null. */
export function asDiskFull(e: unknown): ApiError | null {
  if (e instanceof ApiError) return e.status === DISK_FULL_STATUS ? e : null;
  return isDiskFull(e) ? diskFullError(e) : null;
}

/** What the server keeps of its disk filling up (Operations.disk). */
export interface DiskState {
  /** A write failed for lack of space and none has succeeded since. */
  full: boolean;
  /** Writes refused (answered 507, or a backup that failed) for a full disk since start. */
  refusedWrites: number;
  lastFullAt: number | null;
}

/** A write failed for lack of space; `refused`: it was answered as refused (counted). */
export function noteDiskFull(disk: DiskState, refused = true): void {
  disk.full = true;
  disk.lastFullAt = Date.now();
  if (refused) disk.refusedWrites++;
}

/**
 * Runs a statement (or a batch) on an embedded database's writer and keeps `disk` up to date: a failure for lack of
 * space marks it full; one that changed rows (`wrote`, by default: a result with rowsAffected > 0) clears it, space
 * having been freed. Reads that run on the writer (a "read" batch, a DELETE that matched nothing, DDL) leave it as
 * it is. With no `disk` it is just `work()`.
 */
export function watchedWrite<T>(disk: DiskState | undefined, work: () => T, wrote: (out: T) => boolean = changedRows): T {
  if (disk === undefined) return work();
  let out: T;
  try {
    out = work();
  } catch (e) {
    if (isDiskFull(e)) noteDiskFull(disk, false);
    throw e;
  }
  if (disk.full && wrote(out)) disk.full = false;
  return out;
}

/** Whether a result (or any of a batch's results) changed rows. */
export function changedRows(out: unknown): boolean {
  if (Array.isArray(out)) return out.some(changedRows);
  return typeof out === "object" && out !== null && ((out as { rowsAffected?: number }).rowsAffected ?? 0) > 0;
}
