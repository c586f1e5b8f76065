// The newest request log entries of this process, kept in memory for GET /_admin/api/logs?source=requests: a
// ring of fixed size (older entries fall off), filtered by area, status, environment and method. The same
// fields as the request log line; never keys, tokens, passwords, query values or bodies.

import type { Area } from "./request-stats.ts";

export interface RequestEntry {
  id: number;
  /** ms since the epoch */
  time: number;
  method: string;
  area: Area;
  /** The path, with the query's parameter names but not their values. */
  path: string;
  status: number;
  ms: number;
  env: string;
  /** Why a 4xx was refused (at --log-level debug). */
  reason?: string;
}

export interface RequestFilter {
  area?: string;
  /** "4xx", "5xx", or one status ("404"). */
  status?: string;
  env?: string;
  method?: string;
  /** Only entries with a smaller id (the next page). */
  before?: number;
  limit: number;
}

export const REQUEST_RING_SIZE = 10_000;

export class RequestLogRing {
  private readonly entries: (RequestEntry | undefined)[];
  private next = 1;

  constructor(private readonly size = REQUEST_RING_SIZE) {
    this.entries = new Array(size);
  }

  add(e: Omit<RequestEntry, "id">): void {
    const id = this.next++;
    (e as RequestEntry).id = id;
    this.entries[id % this.size] = e as RequestEntry;
  }

  /** Newest first. */
  list(f: RequestFilter): RequestEntry[] {
    const out: RequestEntry[] = [];
    const statusClass = f.status && /^[1-5]xx$/.test(f.status) ? Number(f.status[0]) : null;
    const exact = f.status && /^\d{3}$/.test(f.status) ? Number(f.status) : null;
    const top = Math.min(this.next - 1, f.before === undefined ? Infinity : f.before - 1);
    for (let id = top; id > 0 && id > this.next - 1 - this.size && out.length < f.limit; id--) {
      const e = this.entries[id % this.size];
      if (!e || e.id !== id) continue;
      if (f.area && e.area !== f.area) continue;
      if (f.env && e.env !== f.env) continue;
      if (f.method && e.method !== f.method) continue;
      if (statusClass !== null && Math.floor(e.status / 100) !== statusClass) continue;
      if (exact !== null && e.status !== exact) continue;
      out.push(e);
    }
    return out;
  }
}
