// Starts a throwaway libSQL server (sqld) on a free loopback port for remote-mode tests.
// Installs the binary first (scripts/install-sqld.mjs) when .cache/sqld/sqld is missing.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startLoopbackProcess } from "./loopback-process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, ".cache", "sqld", "sqld");

export async function startSqld(): Promise<{ url: string; stop(): Promise<void> }> {
  await ensureBinary();
  // Drop inherited SQLD_* settings (auth keys, other listen addresses) so the server is exactly what we ask for.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SQLD_")));
  const server = await startLoopbackProcess({
    name: "sqld",
    argv: (port, dir) => [BIN, "--db-path", join(dir, "data.sqld"), "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome", "--disable-metrics"],
    env,
    ready: async (url) => (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok,
  });
  return { url: server.url, stop: server.stop };
}

async function ensureBinary(): Promise<void> {
  if (existsSync(BIN)) return;
  const install = Bun.spawn(["node", join(ROOT, "scripts", "install-sqld.mjs")], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  const code = await install.exited;
  if (code !== 0 || !existsSync(BIN)) {
    throw new Error(`sqld is not available at ${BIN} (install-sqld exited with ${code}; prebuilt binaries exist for linux-x64 only)`);
  }
}
