// A benchmark's Burrow: the built binary on a free loopback port with a temp data directory, an admin
// session, and helpers to define schemas and seed objects through the API.

import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../tests/helpers/app.ts";
import { startServerProcess } from "../../tests/helpers/spawn.ts";

export interface BenchServer {
  url: string;
  dir: string;
  /** The server's process id (for CPU accounting). */
  pid: number;
  /** Headers of a development API call. */
  headers: Record<string, string>;
  putSchema(name: string, def: unknown): Promise<void>;
  putSettings(env: "development" | "production", patch: unknown): Promise<void>;
  /** Upload development's custom code (PUT /_admin/api/code); the answer's JSON. */
  putCode(source: string): Promise<unknown>;
  /** Any admin API call (path under /_admin/api); the answer's JSON. */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  /** Batch-create n objects (1000 per request); returns their keys in order. */
  seed(schema: string, n: number, make: (i: number) => Record<string, unknown>): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startBenchServer(
  exe: string,
  opts: { logLevel?: "warn" | "info" | "debug"; env?: Record<string, string> } = {},
): Promise<BenchServer> {
  const dir = tempDir("burrow-bench-");
  const key = "bench-dev-public-key";
  const admin = { email: "bench@example.com", password: "bench-password" };
  const server = await startServerProcess(
    [exe],
    {
      BURROW_DIR: join(dir, "data"),
      BURROW_DEV_PUBLIC_KEY: key,
      BURROW_ADMIN_EMAIL: admin.email,
      BURROW_ADMIN_PASSWORD: admin.password,
      BURROW_LOG_LEVEL: opts.logLevel ?? "warn",
      ...opts.env,
    },
    { stderrFile: join(dir, "server.log"), serverDefaults: true },
  );
  const headers = { accept: "application/vnd.service+json; version=0", "x-service-api-key": key, "content-type": "application/json" };
  const login = (await (await fetch(`${server.url}/_admin/api/login`, { method: "POST", body: JSON.stringify(admin) })).json()) as {
    token: string;
  };
  return {
    url: server.url,
    dir,
    pid: server.proc.pid,
    headers,
    async putSchema(name, def) {
      const r = await fetch(`${server.url}/_admin/api/schemas/${name}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${login.token}` },
        body: JSON.stringify(def),
      });
      if (!r.ok) throw new Error(`schema ${name}: ${await r.text()}`);
    },
    async putSettings(env, patch) {
      const r = await fetch(`${server.url}/_admin/api/settings/${env}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${login.token}` },
        body: JSON.stringify(patch),
      });
      if (!r.ok) throw new Error(`settings: ${await r.text()}`);
    },
    async putCode(source) {
      const r = await fetch(`${server.url}/_admin/api/code`, {
        method: "PUT",
        headers: { authorization: `Bearer ${login.token}`, "content-type": "application/javascript" },
        body: source,
      });
      if (!r.ok) throw new Error(`code: ${await r.text()}`);
      return r.json();
    },
    async admin(method, path, body) {
      const r = await fetch(`${server.url}/_admin/api${path}`, {
        method,
        headers: { authorization: `Bearer ${login.token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.status === 204 ? null : r.json();
    },
    async seed(schema, n, make) {
      const started = performance.now();
      const keys: string[] = [];
      for (let i = 0; i < n; i += 1000) {
        const batch = Array.from({ length: Math.min(1000, n - i) }, (_, j) => make(i + j));
        const r = (await (await fetch(`${server.url}/${schema}`, { method: "POST", headers, body: JSON.stringify(batch) })).json()) as {
          succeeded: string[];
          failed: string[];
        };
        if (r.failed.length) throw new Error(`seeding ${schema}: ${r.failed.length} failed`);
        keys.push(...r.succeeded);
      }
      console.error(`seeded ${n} ${schema} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      return keys;
    },
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
