// `burrow serve`: lock the data directory, open it, listen, print how to reach the API (with commands that work
// where the user is), warn about unsafe production permissions, and on SIGINT/SIGTERM stop taking requests,
// let the ones in flight finish, and close. Start-up failures become one line and exit code 2.

import { ConfigError, type Config } from "../config.ts";
import { DirectoryInUse, lockDataDir } from "../db/dir-lock.ts";
import { storeRequestsSettled } from "../db/open-store.ts";
import { createApp } from "../http/app.ts";
import { serveOptions } from "../http/serve-options.ts";
import { keepCodePagesReleased } from "../os/code-pages.ts";
import { startHttpClientThread } from "../os/http-client-thread.ts";
import { startDeliveryThread } from "../push/delivery-host.ts";
import { openBurrow, type Burrow } from "../open-burrow.ts";
import { mkdirSync } from "node:fs";

interface RunningServer {
  url: string;
  /** The --push-http listener's URL, or null. */
  pushUrl: string | null;
  burrow: Burrow;
  /** Requests the server is still answering. */
  pending(): number;
  stop(): Promise<void>;
}

/** A start-up failure in one line: what went wrong and what to check. */
function startupError(e: unknown, config: Config, listen: { host: string; port: number } = config.http, flag = "--http"): ConfigError {
  if (e instanceof ConfigError) return e;
  if (e instanceof DirectoryInUse) return new ConfigError(e.message);
  const err = e as { code?: string; message?: string };
  const code = err?.code ?? "";
  const msg = err?.message ?? String(e);
  if (code === "EADDRINUSE" || /address already in use|EADDRINUSE/i.test(msg))
    return new ConfigError(
      `cannot listen on ${listen.host}:${listen.port}: the address is in use (another server there? choose another with ${flag} host:port)`,
    );
  if (code === "EADDRNOTAVAIL" || /EADDRNOTAVAIL|cannot assign requested address/i.test(msg))
    return new ConfigError(`cannot listen on ${listen.host}:${listen.port}: this machine has no such address`);
  if (code === "EACCES" && /listen|bind|port/i.test(msg))
    return new ConfigError(`cannot listen on ${listen.host}:${listen.port}: permission denied (ports below 1024 need privileges)`);
  if (
    ["EACCES", "EPERM", "EROFS", "ENOTDIR", "EEXIST", "ENOSPC"].includes(code) ||
    /unable to open database|readonly database|disk I\/O|SQLITE_CANTOPEN/i.test(msg)
  )
    return new ConfigError(`cannot use the data directory ${config.dir}: ${msg.split("\n")[0]} (it must be a writable directory)`);
  return new ConfigError(`cannot start: ${msg.split("\n")[0]}`);
}

async function startServer(config: Config): Promise<RunningServer> {
  // Bun's shared HTTP client thread is born here, at normal priority, before any thread that lowers its own
  // priority (push delivery, custom code, password hashing) could be the first to fetch and pass that on to it.
  await startHttpClientThread();
  mkdirSync(config.dir, { recursive: true });
  const lock = lockDataDir(config.dir);
  let burrow: Burrow | undefined;
  try {
    burrow = await openBurrow(config);
    const app = createApp(burrow);
    // Elysia hands its routes to Bun's native router; what no route matches goes through app.fetch.
    app.listen(serveOptions(config));
    const server = app.server!;
    let pushServer: ReturnType<typeof Bun.serve> | null = null;
    if (config.pushHttp) {
      const handle = app.mount("/_push");
      try {
        pushServer = Bun.serve({
          ...serveOptions({ http: config.pushHttp }),
          fetch: (req, srv) => handle(req, srv.requestIP(req)?.address ?? null),
        });
      } catch (e) {
        await server.stop(true);
        throw startupError(e, config, config.pushHttp, "--push-http");
      }
    }
    const stopMaintenance = burrow.startMaintenance();
    const stopPush = await startDeliveryThread(burrow.push, {
      store: config.store,
      logLevel: config.logLevel,
      logFormat: config.logFormat,
    });
    // Load custom code into its threads before the first call needs it.
    burrow.code.prewarm();
    // The runtime's code pages that only start-up (or a burst of requests) touched go back to the page cache.
    const answered = burrow.requestStats.answered;
    const stopReleasing = keepCodePagesReleased(() => Atomics.load(answered, 0));
    const hostOf = (h: string) => (h.includes(":") ? `[${h}]` : h);
    const opened = burrow;
    return {
      url: `http://${hostOf(config.http.host)}:${server.port}`,
      pushUrl: pushServer && config.pushHttp ? `http://${hostOf(config.pushHttp.host)}:${pushServer.port}` : null,
      burrow: opened,
      pending: () => server.pendingRequests + (pushServer?.pendingRequests ?? 0),
      async stop() {
        stopMaintenance();
        stopReleasing();
        // Not forced: stop accepting, let requests in flight finish, then close the stores and the lock.
        await Promise.all([server.stop(false), pushServer?.stop(false)]);
        await stopPush();
        await opened.code.close();
        opened.close();
        lock.release();
      },
    };
  } catch (e) {
    burrow?.close();
    lock.release();
    throw e;
  }
}

/** How the user invokes this program: `burrow` from the built binary, `npm run burrow --` from a checkout. */
export function invocation(): string {
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(Bun.main);
  return compiled ? "burrow" : "npm run burrow --";
}

export async function serve(config: Config): Promise<void> {
  let running: RunningServer;
  try {
    running = await startServer(config);
  } catch (e) {
    throw startupError(e, config);
  }
  const { burrow, url, pushUrl } = running;
  const k = burrow.keys.set;
  const latest = burrow.catalog.latestVersion();
  const cmd = invocation();
  const lines = [
    `Burrow ${burrow.version} serving ${url}`,
    `  data directory   ${config.dir}`,
    `  development key  ${k.development.publicKey}   (Accept: application/vnd.service+json; version=0)`,
    `  production key   ${k.production.publicKey}   (${latest === null ? `nothing deployed yet: ${cmd} deploy` : `version=${latest} is the newest`})`,
    `  private keys     ${cmd} keys   (or GET ${url}/_admin/api/keys)`,
    `  admin console    ${url}/_admin/   (sign in with an admin made by`,
    `                   ${cmd} admin create --email E --password P, or BURROW_ADMIN_EMAIL + BURROW_ADMIN_PASSWORD)`,
    `  admin API        ${url}/_admin/api   (POST /_admin/api/login, then Authorization: Bearer <token>)`,
    `  API reference    ${url}/_admin/docs`,
    `  health           ${url}/_health`,
    ...(pushUrl ? [`  push API         ${pushUrl}/   (also ${url}/_push/)`] : []),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  for (const w of burrow.catalog.productionWarnings()) burrow.log.warn(w);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      process.stdout.write(`Burrow: second ${signal}, exiting without waiting\n`);
      process.exit(1);
    }
    stopping = true;
    const inFlight = running.pending();
    process.stdout.write(`Burrow stopping (${signal}): no new requests${inFlight ? `, finishing ${inFlight} in flight` : ""}\n`);
    await running.stop();
    await storeRequestsSettled();
    process.stdout.write("Burrow stopped\n");
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}
