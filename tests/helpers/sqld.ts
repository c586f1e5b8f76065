// Starts a throwaway libSQL server (sqld) on a free loopback port for remote-mode tests.
// Installs the binary first (scripts/install-sqld.mjs) when .cache/sqld/sqld is missing.
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, ".cache", "sqld", "sqld");
const START_TIMEOUT_MS = 15_000;

export async function startSqld(): Promise<{ url: string; stop(): Promise<void> }> {
  await ensureBinary();
  const dir = mkdtempSync(join(tmpdir(), "burrow-sqld-"));
  const logPath = join(dir, "sqld.log");
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  // Drop inherited SQLD_* settings (auth keys, other listen addresses) so the server is exactly what we ask for.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SQLD_")));
  const logFd = openSync(logPath, "w");
  const proc = Bun.spawn(
    [BIN, "--db-path", join(dir, "data.sqld"), "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome", "--disable-metrics"],
    { cwd: dir, env, stdin: "ignore", stdout: logFd, stderr: logFd },
  );
  closeSync(logFd);
  const stop = async () => {
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (true) {
    if (proc.exitCode !== null) {
      const log = readLog(logPath);
      await stop();
      throw new Error(`sqld exited with code ${proc.exitCode} before it was ready:\n${log}`);
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return { url, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const log = readLog(logPath);
      await stop();
      throw new Error(`sqld did not answer ${url}/health within ${START_TIMEOUT_MS / 1000} s:\n${log}`);
    }
    await Bun.sleep(50);
  }
}

async function ensureBinary(): Promise<void> {
  if (existsSync(BIN)) return;
  const install = Bun.spawn(["node", join(ROOT, "scripts", "install-sqld.mjs")], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  const code = await install.exited;
  if (code !== 0 || !existsSync(BIN)) {
    throw new Error(`sqld is not available at ${BIN} (install-sqld exited with ${code}; prebuilt binaries exist for linux-x64 only)`);
  }
}

/** Asks the OS for a free port by binding port 0 on loopback, then releases it for sqld. */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-4000);
  } catch {
    return "(no log)";
  }
}
