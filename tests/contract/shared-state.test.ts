// Runs the shared-state contract against the in-memory implementations, and the store-backed ones on an
// embedded database (two nodes = two connections to one file) and on a libSQL server (two clients).

import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "bun:test";
import type { Client } from "@libsql/core/api";
import { MemoryNonceCache } from "../../src/auth/nonces.ts";
import { MemoryRateLimiter } from "../../src/auth/rate-limit.ts";
import { STORE_NONCES_DDL, StoreNonceCache } from "../../src/auth/store-nonces.ts";
import { STORE_RATE_DDL, StoreRateLimiter } from "../../src/auth/store-rate-limit.ts";
import { MemoryCodeCache } from "../../src/code/code-cache.ts";
import { STORE_CODE_CACHE_DDL, StoreCodeCache } from "../../src/code/store-code-cache.ts";
import { openClient } from "../../src/db/open-client.ts";
import { RemoteClient } from "../../src/db/remote-client.ts";
import { JOB_LEASES_DDL, MemoryJobLeases, StoreJobLeases } from "../../src/system/job-lease.ts";
import { createClient } from "@libsql/client/http";
import { tempDir } from "../helpers/app.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";
import { runSharedStateContract } from "./shared-state.contract.ts";

runSharedStateContract("in memory (one node)", async () => ({
  nonces: async () => ({ a: new MemoryNonceCache(), b: null }),
  limiter: async () => ({ a: new MemoryRateLimiter(), b: null }),
  cache: async () => ({ a: new MemoryCodeCache(), b: null }),
  jobs: async () => ({ a: new MemoryJobLeases(), b: null }),
  cleanup: async () => {},
}));

/** Store-backed implementations for two nodes, each on its own connection to the same database. */
async function storeTarget(a: Client, b: Client, cleanup: () => Promise<void>) {
  await a.batch([STORE_NONCES_DDL, STORE_RATE_DDL, STORE_CODE_CACHE_DDL, JOB_LEASES_DDL], "write");
  return {
    nonces: async () => ({ a: new StoreNonceCache(a), b: new StoreNonceCache(b) }),
    limiter: async () => ({ a: new StoreRateLimiter(a), b: new StoreRateLimiter(b) }),
    cache: async () => ({ a: new StoreCodeCache(a), b: new StoreCodeCache(b) }),
    jobs: async () => ({ a: new StoreJobLeases(a), b: new StoreJobLeases(b) }),
    cleanup,
  };
}

runSharedStateContract("in the store: embedded SQLite, two connections", async () => {
  const dir = tempDir("burrow-shared-");
  const a = openClient(join(dir, "system.db"));
  const b = openClient(join(dir, "system.db"));
  return storeTarget(a, b, async () => {
    a.close();
    b.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

let sqld: Sqld | undefined;
beforeAll(async () => {
  sqld = await startSqld();
}, 60_000);
afterAll(async () => sqld?.stop());

runSharedStateContract("in the store: libSQL server, two clients", async () => {
  const a = new RemoteClient(createClient({ url: sqld!.url }));
  const b = new RemoteClient(createClient({ url: sqld!.url }));
  return storeTarget(a, b, async () => {
    a.close();
    b.close();
  });
});
