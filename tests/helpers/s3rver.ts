// Starts a throwaway S3-compatible server (s3rver, a devDependency) on a free loopback port for S3 file store tests.
// It gets a fresh data directory and one bucket, "burrow"; s3rver's fixed credentials are S3RVER/S3RVER.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "node_modules", "s3rver", "bin", "s3rver.js");
const BUCKET = "burrow";
const START_TIMEOUT_MS = 15_000;

export async function startS3(): Promise<{
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), "burrow-s3rver-"));
  const dataDir = join(dir, "data");
  const logPath = join(dir, "s3rver.log");
  const port = freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const logFd = openSync(logPath, "w");
  const proc = Bun.spawn(
    ["node", BIN, "-d", dataDir, "-a", "127.0.0.1", "-p", String(port), "--configure-bucket", BUCKET, "--silent"],
    { cwd: dir, stdin: "ignore", stdout: logFd, stderr: logFd },
  );
  closeSync(logFd);
  const stop = async () => {
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const server = { endpoint, bucket: BUCKET, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", stop };

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (true) {
    if (proc.exitCode !== null) {
      const log = readLog(logPath);
      await stop();
      throw new Error(`s3rver exited with code ${proc.exitCode} before it was ready:\n${log}`);
    }
    try {
      // Any HTTP answer (an unsigned request gets 403) means it is listening; the bucket is configured before listen.
      await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
      return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const log = readLog(logPath);
      await stop();
      throw new Error(`s3rver did not answer ${endpoint} within ${START_TIMEOUT_MS / 1000} s:\n${log}`);
    }
    await Bun.sleep(50);
  }
}

/** Asks the OS for a free port by binding port 0 on loopback, then releases it for s3rver. */
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
