// `burrow serve`: open the data directory, listen, print how to reach the API, stop cleanly on signals.

import type { Config } from "../config.ts";
import { createApp } from "../http/app.ts";
import { openServices, type Services } from "../services.ts";

interface RunningServer {
  url: string;
  services: Services;
  stop(): Promise<void>;
}

async function startServer(config: Config): Promise<RunningServer> {
  const services = await openServices(config);
  const app = createApp(services);
  // Elysia hands its routes to Bun's native router; what no route matches goes through app.fetch.
  app.listen({
    hostname: config.http.host,
    port: config.http.port,
    // Bun's own limit sits above ours so that oversized bodies get our JSON 413.
    maxRequestBodySize: config.bodyLimit + 1024 * 1024,
  });
  const server = app.server!;
  const stopMaintenance = services.startMaintenance();
  const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
  const url = `http://${host}:${server.port}`;
  return {
    url,
    services,
    async stop() {
      stopMaintenance();
      await server.stop(true);
      services.close();
    },
  };
}

export async function serve(config: Config): Promise<void> {
  const running = await startServer(config);
  const { services, url } = running;
  const k = services.keys.set;
  const latest = services.catalog.latestVersion();
  const lines = [
    `Burrow ${services.version} serving ${url}`,
    `  data directory   ${config.dir}`,
    `  development key  ${k.development.publicKey}   (Accept: application/vnd.service+json; version=0)`,
    `  production key   ${k.production.publicKey}   (${latest === null ? "nothing deployed yet: burrow deploy" : `version=${latest} is the newest`})`,
    `  private keys     burrow keys   (or GET ${url}/_admin/api/keys)`,
    `  admin API        ${url}/_admin/api   (POST /_admin/api/login with an admin made by`,
    `                   burrow admin create --email E --password P, or BURROW_ADMIN_EMAIL + BURROW_ADMIN_PASSWORD)`,
    `  health           ${url}/_health`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
  const shutdown = async () => {
    await running.stop();
    process.exit(0);
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}
