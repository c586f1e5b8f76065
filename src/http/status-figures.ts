// The figures of the status page and GET /_admin/api/status: version and uptime, objects per environment,
// requests per area over the last hour (rate, latency percentiles, errors) with a per-minute series, the stores'
// file sizes (database and WAL), the push queues and what they delivered in the last hour, custom code's calls,
// process memory, and the last backup when there is one.

import { statSync } from "node:fs";
import { join } from "node:path";
import { systemContext } from "../request-context.ts";
import { AREAS } from "../system/request-stats.ts";
import { ENVIRONMENTS } from "../system/environments.ts";
import type { Burrow } from "./burrow.ts";
import { storeUnreachable } from "../db/store-unreachable.ts";

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Database and WAL sizes of system.db and each environment's database; on a libSQL server, the database's pages as
 * SQLite counts them (its WAL is the server's business: 0).
 */
export async function storeSizes(
  burrow: Pick<Burrow, "config" | "system" | "envDbs">,
): Promise<Record<string, { db: number; wal: number }>> {
  const out: Record<string, { db: number; wal: number }> = {};
  const dbs = { system: burrow.system, ...burrow.envDbs };
  for (const name of ["system", ...ENVIRONMENTS] as const) {
    if (burrow.config.store.url) {
      const rs = await dbs[name].execute(`SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()`);
      out[name] = { db: Number(rs.rows[0]?.n ?? 0), wal: 0 };
    } else {
      const dir = burrow.config.dir;
      out[name] = { db: fileSize(join(dir, `${name}.db`)), wal: fileSize(join(dir, `${name}.db-wal`)) };
    }
  }
  return out;
}

/** The newest backup in <dir>/backups/ (made by the server, its schedule or `burrow backup`), or null. */
function lastBackup(burrow: Burrow): { id: string; created: string; size: number } | null {
  const newest = burrow.backups.list()[0];
  return newest ? { id: newest.id, created: new Date(newest.created).toISOString(), size: newest.size } : null;
}

/**
 * Object counts are a count(*) per schema: on big tables that is tens of milliseconds each, and the status page is
 * public and polls every 5 s. So they are computed at most once per COUNTS_TTL_MS per process, however many ask.
 */
const COUNTS_TTL_MS = 30_000;
const countsCache = new WeakMap<Burrow, { at: number; value: Promise<Record<string, unknown>> }>();

function objectCounts(burrow: Burrow, origin: string): Promise<Record<string, unknown>> {
  const cached = countsCache.get(burrow);
  if (cached && Date.now() - cached.at < COUNTS_TTL_MS) return cached.value;
  const value = countObjects(burrow, origin);
  countsCache.set(burrow, { at: Date.now(), value });
  value.catch(() => countsCache.delete(burrow));
  return value;
}

async function countObjects(burrow: Burrow, origin: string): Promise<Record<string, unknown>> {
  const { catalog } = burrow;
  const fileBase = () => burrow.config.filesUrl ?? burrow.config.publicUrl ?? origin;
  const environments: Record<string, unknown> = {};
  for (const env of ENVIRONMENTS) {
    const db = burrow.envDbs[env];
    if (env === "development") {
      const counts = await burrow.data.counts(systemContext(env, db, catalog.development(), fileBase));
      environments[env] = { schemas: Object.keys(counts).length, objects: counts, total: sum(counts) };
    } else {
      const latest = catalog.latestVersion();
      const counts = latest === null ? {} : await burrow.data.counts(systemContext(env, db, catalog.production(latest)!, fileBase));
      environments[env] = {
        versions: catalog.versions(),
        latestVersion: latest,
        schemas: Object.keys(counts).length,
        objects: counts,
        total: sum(counts),
      };
    }
  }
  return environments;
}

/**
 * `fresh` recounts objects now (the admin API's status); the status page takes counts up to 30 s old. The object
 * counts per environment and schema (`environments`) are for admins only: `forAdmin` false leaves them out, and
 * the rest (version, uptime, requests, stores, queues, memory) is what anyone may see of the server's health.
 */
export async function statusFigures(burrow: Burrow, origin: string, fresh = false, forAdmin = true): Promise<Record<string, unknown>> {
  if (fresh) countsCache.delete(burrow);
  let environments: Record<string, unknown> | undefined;
  const hourAgo = Date.now() - 3600_000;
  const push: Record<string, unknown> = {};
  let stores: Record<string, { db: number; wal: number }> = {};
  // While the store is away the figures kept in memory are served at once (operations.store says it is away).
  if (burrow.ops.store.reachable) {
    try {
      environments = forAdmin ? await objectCounts(burrow, origin) : undefined;
      for (const env of ENVIRONMENTS) {
        const queue = burrow.push.queue(env);
        const [stats, lastHour] = await Promise.all([queue.stats(), queue.since(hourAgo)]);
        push[env] = { ...stats, lastHour, deliveredPerMinute: Math.round((lastHour.sent / 60) * 10) / 10 };
      }
      stores = await storeSizes(burrow);
    } catch (e) {
      if (storeUnreachable(e) === null) throw e;
    }
  }
  const mem = process.memoryUsage();
  const out: Record<string, unknown> = {
    version: burrow.version,
    startedAt: new Date(burrow.startedAt).toISOString(),
    uptimeSeconds: Math.floor((Date.now() - burrow.startedAt) / 1000),
    ...(environments ? { environments } : {}),
    areas: AREAS,
    requests: burrow.requestStats.summary(60),
    series: burrow.requestStats.series(),
    stores,
    push,
    code: burrow.code.stats(),
    live: burrow.live.figures(),
    process: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
    operations: burrow.ops.figures(),
    lastBackup: lastBackup(burrow),
  };
  return out;
}
