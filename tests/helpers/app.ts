// Test harness: a real Burrow (real SQLite files in a temp dir) driven in-process through app.handle.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { createApp, type App } from "../../src/http/app.ts";
import { type Level, createLogger } from "../../src/log.ts";
import { openBurrow, type Burrow } from "../../src/open-burrow.ts";
import type { ApiContext, Principal } from "../../src/request-context.ts";
import { REMOTE_STORE, remoteStoreFlags } from "./sqld.ts";

export const KEYS = {
  devPublic: "dev-public-key-0001",
  devPrivate: "dev-private-key-0001",
  prodPublic: "prod-public-key-0001",
  prodPrivate: "prod-private-key-0001",
};

export const ADMIN = { email: "admin@example.com", password: "correct horse battery" };

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  body?: unknown;
  /** Send this exact text as the body. */
  raw?: string;
  /** API version in Accept (default 0); null sends no Accept header. */
  version?: number | null;
  /** API key (default: the development public key); null sends none. */
  key?: string | null;
}

export interface TestApp {
  dir: string;
  burrow: Burrow;
  app: App;
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
  /** Admin API call with a bearer token obtained once. */
  admin(method: string, path: string, body?: unknown): Promise<TestResponse>;
  /** Lines the server logged (at the level given to makeTestApp, "warn" by default). */
  logs: string[];
  close(): Promise<void>;
}

export function tempDir(prefix = "burrow-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The configuration and opened Burrow (its parts) of a test app in `dir` (STORE=sqld: on the shared libSQL server). */
async function openTestBurrow(
  dir: string,
  opts: {
    flags?: Record<string, string | boolean>;
    env?: Record<string, string>;
    logLevel?: Level;
    open?: Omit<Parameters<typeof openBurrow>[1], "log">;
  },
  logs: string[],
) {
  // STORE=sqld: every test app keeps its databases on one libSQL server, under namespaces of its own.
  const store = REMOTE_STORE && !opts.flags?.["--store"] ? await remoteStoreFlags(dir) : {};
  const config = loadConfig(
    { "--dir": dir, ...store, ...opts.flags },
    {
      BURROW_DEV_PUBLIC_KEY: KEYS.devPublic,
      BURROW_DEV_PRIVATE_KEY: KEYS.devPrivate,
      BURROW_PROD_PUBLIC_KEY: KEYS.prodPublic,
      BURROW_PROD_PRIVATE_KEY: KEYS.prodPrivate,
      BURROW_ADMIN_EMAIL: ADMIN.email,
      BURROW_ADMIN_PASSWORD: ADMIN.password,
      // Load shedding answers 503 while the event loop runs late; a test process on a busy CI machine is not an
      // overloaded server, so tests turn it on only where they test it.
      BURROW_SHED_TARGET_MS: "0",
      ...opts.env,
    },
  );
  return openBurrow(config, { ...opts.open, log: createLogger(opts.logLevel ?? "warn", (l) => logs.push(l)) });
}

export async function makeTestApp(
  opts: {
    flags?: Record<string, string | boolean>;
    env?: Record<string, string>;
    dir?: string;
    peer?: (req: Request) => string | null;
    logLevel?: Level;
    open?: Omit<Parameters<typeof openBurrow>[1], "log">;
  } = {},
): Promise<TestApp> {
  const dir = opts.dir ?? tempDir();
  let burrow: Burrow;
  const logs: string[] = [];
  try {
    burrow = await openTestBurrow(dir, opts, logs);
  } catch (e) {
    // A configuration a test expects to be refused still made a directory: it goes with the failure.
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const app = createApp(burrow, { peer: opts.peer });
  let token: string | null = null;

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = {};
    const version = o.version === undefined ? 0 : o.version;
    if (version !== null) headers.accept = `application/vnd.service+json; version=${version}`;
    const key = o.key === undefined ? (version !== null && version > 0 ? KEYS.prodPublic : KEYS.devPublic) : o.key;
    if (key !== null) headers["x-service-api-key"] = key;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] = "application/json";
    }
    Object.assign(headers, o.headers);
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  async function admin(method: string, path: string, body?: unknown): Promise<TestResponse> {
    if (!token) {
      const r = await request("POST", "/_admin/api/login", { body: ADMIN, key: null, version: null });
      if (r.status !== 200) throw new Error(`admin login failed: ${r.text}`);
      token = r.body.token;
    }
    return request(method, `/_admin/api${path}`, { body, key: null, version: null, headers: { authorization: `Bearer ${token}` } });
  }

  return {
    dir,
    burrow,
    app,
    request,
    admin,
    logs,
    async close() {
      await burrow.code.close();
      burrow.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
      const errors = logs.filter((l) => l.includes(" ERROR "));
      if (errors.length) throw new Error(`server logged errors:\n${errors.join("\n")}`);
    },
  };
}

/** A development ApiContext of a test app for calling the datastore directly (the server itself by default). */
export function devContext(t: TestApp, principal: Principal = { kind: "system" }): ApiContext {
  return {
    env: "development",
    version: 0,
    db: t.burrow.envDbs.development,
    schemas: t.burrow.catalog.development(),
    infer: false,
    principal,
    fileBase: () => "http://localhost",
  };
}
