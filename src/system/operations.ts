// What the server knows of its own operating conditions, for the status page and /_metrics: load shedding at the
// edge (admitted and shed requests, the admitted share, how late the event loop runs, requests in flight), the data
// directory's disk (free space, whether writes are refused because it is full) and the store's reachability (a
// libSQL server that went away). Each part is kept by the code that sees it; this holds and reports them.

import { statfsSync } from "node:fs";

export interface SheddingFigures {
  enabled: boolean;
  admitted: number;
  shed: number;
  /** Share of ordinary requests admitted now (1 when not overloaded). */
  admitFraction: number;
  /** How late the event loop runs now (ms): the time a request waits before its turn. */
  queueMs: number;
  inFlight: number;
}

export interface DiskFigures {
  /** Free bytes for the data directory's file system (null on a libSQL store or when it cannot be read). */
  freeBytes: number | null;
  totalBytes: number | null;
  /** A write failed for lack of space and none has succeeded since. */
  full: boolean;
  /** Writes refused for a full disk since start. */
  refusedWrites: number;
  lastFullAt: string | null;
}

export interface StoreFigures {
  remote: boolean;
  /** The last call to the store got through (a libSQL server: answered). */
  reachable: boolean;
  /** Requests refused (503) because the store could not be reached, since start. */
  failures: number;
  lastFailureAt: string | null;
  lastError: string | null;
}

export interface OperationsFigures {
  shedding: SheddingFigures;
  disk: DiskFigures;
  store: StoreFigures;
}

/** Disk free space is read at most this often (statfs is cheap, but the status page and metrics may poll). */
const DISK_TTL_MS = 1000;

export class Operations {
  readonly shedding: SheddingFigures = { enabled: false, admitted: 0, shed: 0, admitFraction: 1, queueMs: 0, inFlight: 0 };
  readonly disk = { full: false, refusedWrites: 0, lastFullAt: null as number | null };
  readonly store: { reachable: boolean; failures: number; lastFailureAt: number | null; lastError: string | null } = {
    reachable: true,
    failures: 0,
    lastFailureAt: null,
    lastError: null,
  };
  private diskRead: { at: number; free: number | null; total: number | null } = { at: 0, free: null, total: null };

  /** `dir` is the data directory; `remote` whether the databases live on a libSQL server. */
  constructor(
    private readonly dir: string,
    private readonly remote: boolean,
  ) {}

  /** Free and total bytes of the data directory's file system (files and, on the embedded store, the databases). */
  diskSpace(): { free: number | null; total: number | null } {
    const now = Date.now();
    if (now - this.diskRead.at >= DISK_TTL_MS) {
      try {
        const s = statfsSync(this.dir);
        this.diskRead = { at: now, free: s.bavail * s.bsize, total: s.blocks * s.bsize };
      } catch {
        this.diskRead = { at: now, free: null, total: null };
      }
    }
    return { free: this.diskRead.free, total: this.diskRead.total };
  }

  figures(): OperationsFigures {
    const space = this.diskSpace();
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      shedding: { ...this.shedding },
      disk: {
        freeBytes: space.free,
        totalBytes: space.total,
        full: this.disk.full,
        refusedWrites: this.disk.refusedWrites,
        lastFullAt: iso(this.disk.lastFullAt),
      },
      store: {
        remote: this.remote,
        reachable: this.store.reachable,
        failures: this.store.failures,
        lastFailureAt: iso(this.store.lastFailureAt),
        lastError: this.store.lastError,
      },
    };
  }
}
