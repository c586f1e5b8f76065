// The figures of the status page and GET /_admin/api/status: version and uptime, objects per environment,
// requests per area over the last hour (rate, latency percentiles, errors) with a per-minute series, the stores'
// file sizes (database and WAL), the push queues and what they delivered in the last hour, custom code's calls,
// process memory, and the last backup when there is one.

import { statSync } from "node:fs";
import { join } from "node:path";
import { systemContext } from "../request-context.ts";
import { AREAS } from "../system/request-stats.ts";
import { ENVIRONMENTS } from "../system/environments.ts";
import type { Services } from "./services.ts";

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
export async function storeSizes(services: Pick<Services, "config" | "system" | "envDbs">): Promise<Record<string, { db: number; wal: number }>> {
  const out: Record<string, { db: number; wal: number }> = {};
  const dbs = { system: services.system, ...services.envDbs };
  for (const name of ["system", ...ENVIRONMENTS] as const) {
    if (services.config.store.url) {
      const rs = await dbs[name].execute(`SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()`);
      out[name] = { db: Number(rs.rows[0]?.n ?? 0), wal: 0 };
    } else {
      const dir = services.config.dir;
      out[name] = { db: fileSize(join(dir, `${name}.db`)), wal: fileSize(join(dir, `${name}.db-wal`)) };
    }
  }
  return out;
}

/** The newest backup in <dir>/backups/ (made by the server, its schedule or `burrow backup`), or null. */
function lastBackup(services: Services): { id: string; created: string; size: number } | null {
  const newest = services.backups.list()[0];
  return newest ? { id: newest.id, created: new Date(newest.created).toISOString(), size: newest.size } : null;
}

/**
 * Object counts are a count(*) per schema: on big tables that is tens of milliseconds each, and the status page is
 * public and polls every 5 s. So they are computed at most once per COUNTS_TTL_MS per process, however many ask.
 */
const COUNTS_TTL_MS = 30_000;
const countsCache = new WeakMap<Services, { at: number; value: Promise<Record<string, unknown>> }>();

function objectCounts(services: Services, origin: string): Promise<Record<string, unknown>> {
  const cached = countsCache.get(services);
  if (cached && Date.now() - cached.at < COUNTS_TTL_MS) return cached.value;
  const value = countObjects(services, origin);
  countsCache.set(services, { at: Date.now(), value });
  value.catch(() => countsCache.delete(services));
  return value;
}

async function countObjects(services: Services, origin: string): Promise<Record<string, unknown>> {
  const { catalog } = services;
  const fileBase = () => services.config.filesUrl ?? services.config.publicUrl ?? origin;
  const environments: Record<string, unknown> = {};
  for (const env of ENVIRONMENTS) {
    const db = services.envDbs[env];
    if (env === "development") {
      const counts = await services.data.counts(systemContext(env, db, catalog.development(), fileBase));
      environments[env] = { schemas: Object.keys(counts).length, objects: counts, total: sum(counts) };
    } else {
      const latest = catalog.latestVersion();
      const counts = latest === null ? {} : await services.data.counts(systemContext(env, db, catalog.production(latest)!, fileBase));
      environments[env] = { versions: catalog.versions(), latestVersion: latest, schemas: Object.keys(counts).length, objects: counts, total: sum(counts) };
    }
  }
  return environments;
}

/**
 * `fresh` recounts objects now (the admin API's status); the status page takes counts up to 30 s old. The object
 * counts per environment and schema (`environments`) are for admins only: `forAdmin` false leaves them out, and
 * the rest (version, uptime, requests, stores, queues, memory) is what anyone may see of the server's health.
 */
export async function statusFigures(services: Services, origin: string, fresh = false, forAdmin = true): Promise<Record<string, unknown>> {
  if (fresh) countsCache.delete(services);
  const environments = forAdmin ? await objectCounts(services, origin) : undefined;
  const hourAgo = Date.now() - 3600_000;
  const push: Record<string, unknown> = {};
  for (const env of ENVIRONMENTS) {
    const queue = services.push.queue(env);
    const [stats, lastHour] = await Promise.all([queue.stats(), queue.since(hourAgo)]);
    push[env] = { ...stats, lastHour, deliveredPerMinute: Math.round((lastHour.sent / 60) * 10) / 10 };
  }
  const mem = process.memoryUsage();
  const out: Record<string, unknown> = {
    version: services.version,
    startedAt: new Date(services.startedAt).toISOString(),
    uptimeSeconds: Math.floor((Date.now() - services.startedAt) / 1000),
    ...(environments ? { environments } : {}),
    areas: AREAS,
    requests: services.requestStats.summary(60),
    series: services.requestStats.series(),
    stores: await storeSizes(services),
    push,
    code: services.code.stats(),
    process: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
    lastBackup: lastBackup(services),
  };
  return out;
}
