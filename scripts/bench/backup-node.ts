// The Burrow node both backup benchmarks run (backup.ts on a data directory, backup-remote.ts on sqld): its
// environment, the two schemas they use (o_big, filled directly; o_tick, the measured writes), data API posts,
// an admin sign-in, and the statement that fills o_big 20,000 rows at a time.

import { join } from "node:path";
import { ROOT } from "./env.ts";

/** The node runs from source, as `bun src/main.ts`. */
export const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const ADMIN = { email: "bench@example.com", password: "bench password 1" };
const KEY = "bench-dev-public-key";

/** The node's environment: data directory, fixed keys, an admin; `extra` adds (e.g. the store's settings). */
export function nodeEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    BURROW_DIR: dataDir,
    BURROW_DEV_PUBLIC_KEY: KEY,
    BURROW_DEV_PRIVATE_KEY: "bench-dev-private-key",
    BURROW_PROD_PUBLIC_KEY: "bench-prod-public-key",
    BURROW_PROD_PRIVATE_KEY: "bench-prod-private-key",
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_LOG_LEVEL: "warn",
    ...extra,
  };
}

/** POST a JSON body to the development data API. */
export function apiPost(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Creates `big` (from its first object) and `tick` by inference. */
export async function createSchemas(url: string, bigSeed: Record<string, unknown>): Promise<void> {
  for (const [schema, body] of [
    ["big", bigSeed],
    ["tick", { seq: 0, due: 0 }],
  ] as const) {
    const r = await apiPost(url, `/${schema}`, body);
    if (r.status !== 201) throw new Error(`creating ${schema}: ${r.status} ${await r.text()}`);
  }
}

/** Admin API headers for the node's admin. */
export async function adminHeaders(url: string): Promise<Record<string, string>> {
  const r = await fetch(`${url}/_admin/api/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  const { token } = (await r.json()) as { token: string };
  return { authorization: `Bearer ${token}`, "content-type": "application/json" };
}

/** n rows into o_big in one statement, each with `bodyBytes` random bytes as hex (and n = i * 0.5 when asked). */
export function fillBigSql(n: number, bodyBytes: number, withN: boolean): string {
  return `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
       INSERT INTO o_big (big_id, title, body, ${withN ? "n, " : ""}createddate, lastmoddate) SELECT lower(hex(randomblob(16))), 'row ' || i, hex(randomblob(${bodyBytes})), ${withN ? "i * 0.5, " : ""}1, 1 FROM k`;
}
