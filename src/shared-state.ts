// The state several nodes must agree on, chosen once for the store: in memory for one node on the embedded store
// (no extra write per signed request), in the system database when nodes share a libSQL server. Also how fresh
// each node keeps its caches of the shared tables.

import type { Client } from "@libsql/core/api";
import { MemoryNonceCache, type NonceCache } from "./auth/nonces.ts";
import { MemoryRateLimiter, type RateLimiter } from "./auth/rate-limit.ts";
import { SHARED_SESSION_CACHE_MS } from "./auth/sessions.ts";
import { STORE_NONCES_DDL, StoreNonceCache } from "./auth/store-nonces.ts";
import { STORE_RATE_DDL, StoreRateLimiter } from "./auth/store-rate-limit.ts";
import { type CodeCache, MemoryCodeCache } from "./code/code-cache.ts";
import { STORE_CODE_CACHE_DDL, StoreCodeCache } from "./code/store-code-cache.ts";
import { JOB_LEASES_DDL, type JobLeases, MemoryJobLeases, StoreJobLeases } from "./system/job-lease.ts";

/** How often a process looks for configuration changes made by another process (CLI, second node). */
const REFRESH_INTERVAL_MS = 1000;
/** The same on a store shared by several nodes: a change made on one is served by all within a second. */
const SHARED_REFRESH_INTERVAL_MS = 400;

export interface SharedState {
  nonces: NonceCache;
  limiter: RateLimiter;
  codeCache: CodeCache;
  jobs: JobLeases;
  /** How long a session may be served from memory (undefined: Sessions' own default). */
  sessionCacheMs: number | undefined;
  /** How often the configuration epoch is looked at. */
  refreshIntervalMs: number;
  /** Removes expired rows of the shared tables (a maintenance round; nothing to do in memory). */
  sweep(): Promise<void>;
}

export async function openSharedState(system: Client, shared: boolean): Promise<SharedState> {
  if (!shared) {
    return {
      nonces: new MemoryNonceCache(),
      limiter: new MemoryRateLimiter(),
      codeCache: new MemoryCodeCache(),
      jobs: new MemoryJobLeases(),
      sessionCacheMs: undefined,
      refreshIntervalMs: REFRESH_INTERVAL_MS,
      sweep: async () => {},
    };
  }
  await system.batch([STORE_NONCES_DDL, STORE_RATE_DDL, STORE_CODE_CACHE_DDL, JOB_LEASES_DDL], "write");
  const nonces = new StoreNonceCache(system);
  const limiter = new StoreRateLimiter(system);
  const codeCache = new StoreCodeCache(system);
  return {
    nonces,
    limiter,
    codeCache,
    jobs: new StoreJobLeases(system),
    sessionCacheMs: SHARED_SESSION_CACHE_MS,
    refreshIntervalMs: SHARED_REFRESH_INTERVAL_MS,
    sweep: async () => void (await Promise.all([nonces.sweep(), limiter.sweep(), codeCache.sweep()])),
  };
}
