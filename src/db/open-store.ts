// Opens Burrow's three databases (system, development, production): embedded SQLite files in the data directory by
// default, or three namespaces of one libSQL server (sqld started with --enable-namespaces) with --store. Each
// namespace is named `<namespace>-system`, `<namespace>-development`, `<namespace>-production` and selected per
// request with sqld's `x-namespace-bin` header, so one sqld can hold several apps. With --store-admin, missing
// namespaces are created through sqld's admin API; a server that ignores namespaces is detected and refused.

import { join } from "node:path";
import { createClient } from "@libsql/client/http";
import type { Client } from "@libsql/core/api";
import { expandConfig } from "@libsql/core/config";
import { encodeBaseUrl } from "@libsql/core/uri";
import { openClient } from "./open-client.ts";
import { HeldStreams } from "./held-streams.ts";
import { RemoteClient } from "./remote-client.ts";
import { STORE_TIMEOUT_MS } from "./store-unreachable.ts";

export const DATABASE_NAMES = ["system", "development", "production"] as const;
export type DatabaseName = (typeof DATABASE_NAMES)[number];

/** Where the databases live; plain data, so a worker thread can open the same store. */
export interface StoreLocation {
  dir: string;
  /** A libSQL server URL (http://, https://, libsql://), or null for the files in `dir`. */
  url: string | null;
  authToken: string | null;
  /** Prefix of the namespaces on the server. */
  namespace: string;
  /** sqld's admin API (creates missing namespaces), or null. */
  adminUrl: string | null;
}

export type StoreDatabases = Record<DatabaseName, Client> & {
  remote: boolean;
  close(): void;
  /** Tells `reach` how each request to the libSQL server ends (nothing on the embedded store). */
  observe(reach: StoreReach): void;
};

/** What a node learns from each request to a libSQL server: it answered (with this status), or it failed. */
export interface StoreReach {
  answered(status: number): void;
  failed(error: unknown): void;
}

export class StoreError extends Error {}

/** Namespace names sqld accepts: letters, digits, `-` and `_`. */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

export function namespaceOf(location: Pick<StoreLocation, "namespace">, name: DatabaseName): string {
  return `${location.namespace}-${name}`;
}

/** Requests to libSQL servers still under way in this process (closing a stream is one). */
const inFlight = new Set<Promise<unknown>>();

/**
 * Adds a namespace's header to each request (sqld reads the name as unpadded base64) and bounds it to `timeoutMs`
 * (neither @libsql/client nor fetch has a bound of its own: a server that stopped answering would hold a request
 * for ever); `reach.current` hears how each ends.
 */
function namespaceFetch(
  location: StoreLocation,
  name: DatabaseName,
  timeoutMs = STORE_TIMEOUT_MS,
  reach?: { current: StoreReach | null },
): (request: Request) => Promise<Response> {
  const header = Buffer.from(namespaceOf(location, name)).toString("base64").replace(/=+$/, "");
  // The client builds a fresh Request per call: the header is added to it in place, no copy.
  return (request: Request) => {
    request.headers.set("x-namespace-bin", header);
    const p = fetch(request, { signal: AbortSignal.timeout(timeoutMs) });
    const settled: Promise<unknown> = p.then(
      (res): void => {
        inFlight.delete(settled);
        reach?.current?.answered(res.status);
      },
      (e): void => {
        inFlight.delete(settled);
        reach?.current?.failed(e);
      },
    );
    inFlight.add(settled);
    return p;
  };
}

/**
 * Waits (at most `ms`) for the requests under way, such as the ones closing streams after close(): sqld holds a
 * connection for each open stream (128 across all namespaces by default) until it is closed or idle for 10 s, so a
 * command must not exit before its streams are closed on the server.
 */
export async function storeRequestsSettled(ms = 2_000): Promise<void> {
  await Bun.sleep(0); // close() queues its requests
  if (inFlight.size === 0) return;
  await Promise.race([Promise.allSettled([...inFlight]), Bun.sleep(ms)]);
}

/** One remote database: the client sends its namespace on every request. */
export function openRemote(location: StoreLocation, name: DatabaseName, reach?: { current: StoreReach | null }): Client {
  const fetchIn = namespaceFetch(location, name, STORE_TIMEOUT_MS, reach);
  const authToken = location.authToken ?? undefined;
  const url = location.url!;
  return new RemoteClient(
    createClient({ url, authToken, intMode: "number", fetch: fetchIn }),
    new HeldStreams(httpUrl(url), { authToken, fetch: fetchIn as typeof fetch, size: STREAMS_PER_DATABASE }),
  );
}

/** A plain client of one remote database that reads integers as bigint (copies, which must keep every value exact). */
export function openRemoteExact(location: StoreLocation, name: DatabaseName): Client {
  return createClient({
    url: location.url!,
    authToken: location.authToken ?? undefined,
    intMode: "bigint",
    // A backup's pages are larger than a request's reads: each request gets longer, still bounded.
    fetch: namespaceFetch(location, name, BACKUP_TIMEOUT_MS),
  });
}

const BACKUP_TIMEOUT_MS = 120_000;

/** Streams each remote database keeps open (4 gave the most point reads a second at 50 in flight: 9,100 vs 8,000 with 8). */
const STREAMS_PER_DATABASE = 4;

/** The base URL @libsql/client itself would use (libsql:// read as https://, ?tls=0 as http://). */
function httpUrl(url: string): URL {
  const c = expandConfig({ url }, true);
  return encodeBaseUrl(c.scheme, c.authority, c.path);
}

export async function openStore(location: StoreLocation): Promise<StoreDatabases> {
  if (!location.url) {
    const dbs = Object.fromEntries(DATABASE_NAMES.map((n) => [n, openClient(join(location.dir, `${n}.db`))])) as Record<
      DatabaseName,
      Client
    >;
    return {
      ...dbs,
      remote: false,
      close: () => {
        for (const n of DATABASE_NAMES) dbs[n].close();
      },
      observe: () => {},
    };
  }
  const reach: { current: StoreReach | null } = { current: null };
  const dbs = Object.fromEntries(DATABASE_NAMES.map((n) => [n, openRemote(location, n, reach)])) as Record<DatabaseName, Client>;
  const close = () => {
    for (const n of DATABASE_NAMES) dbs[n].close();
  };
  try {
    for (const name of DATABASE_NAMES) await claimNamespace(location, name, dbs[name]);
  } catch (e) {
    close();
    throw e;
  }
  return {
    ...dbs,
    remote: true,
    close,
    observe: (r) => {
      reach.current = r;
    },
  };
}

const NAMESPACE_READY_MS = 5000;

/** The table naming the namespace it is in: it belongs to the server, so backups leave it out and restores keep it. */
export const NAMESPACE_TABLE = "_burrow_namespace";
const MARKER_DDL = `CREATE TABLE IF NOT EXISTS ${NAMESPACE_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL)`;

/**
 * Makes sure `name` has a namespace of its own: creates it when missing (with an admin URL), then writes a marker
 * naming it. A marker naming another database means the server ignored the namespace header (namespaces off).
 */
async function claimNamespace(location: StoreLocation, name: DatabaseName, db: Client): Promise<void> {
  const ns = namespaceOf(location, name);
  let createdAt = 0;
  for (;;) {
    try {
      await db.batch([MARKER_DDL, { sql: `INSERT OR IGNORE INTO ${NAMESPACE_TABLE} (id, name) VALUES (1, ?)`, args: [ns] }], "write");
      break;
    } catch (e) {
      const message = String((e as Error)?.message ?? e);
      const missing = /doesn't exist|does not exist|not found|status 404/i.test(message);
      // A namespace just created can take a moment to answer.
      if (missing && createdAt && Date.now() - createdAt < NAMESPACE_READY_MS) {
        await Bun.sleep(50);
        continue;
      }
      if (!missing || createdAt) throw new StoreError(`libSQL server ${location.url}: ${message}`);
      if (!location.adminUrl) {
        throw new StoreError(
          `namespace "${ns}" does not exist on ${location.url}; create it (curl -X POST <sqld admin address>/v1/namespaces/${ns}/create -H 'content-type: application/json' -d '{}') or pass --store-admin <sqld admin URL>`,
        );
      }
      await createNamespace(location.adminUrl, ns);
      createdAt = Date.now();
    }
  }
  const rs = await db.execute(`SELECT name FROM ${NAMESPACE_TABLE} WHERE id = 1`);
  const found = rs.rows[0]?.name;
  if (found !== ns) {
    throw new StoreError(
      `the libSQL server ${location.url} does not keep namespaces apart ("${ns}" answered as "${String(found)}"); start sqld with --enable-namespaces`,
    );
  }
}

async function createNamespace(adminUrl: string, ns: string): Promise<void> {
  const res = await fetch(`${adminUrl.replace(/\/+$/, "")}/v1/namespaces/${encodeURIComponent(ns)}/create`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
    signal: AbortSignal.timeout(10_000),
  });
  // 409 or "already exists": another node created it first.
  if (!res.ok && !/exist/i.test(await res.text().catch(() => "")))
    throw new StoreError(`creating namespace "${ns}" through ${adminUrl} failed: HTTP ${res.status}`);
}
