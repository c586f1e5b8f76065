// Starts a throwaway S3-compatible server (s3rver, a devDependency) on a free loopback port for S3 file store tests.
// It gets a fresh data directory and one bucket, "burrow"; s3rver's fixed credentials are S3RVER/S3RVER.
import { join } from "node:path";
import { startLoopbackProcess } from "./loopback-process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "node_modules", "s3rver", "bin", "s3rver.js");
const BUCKET = "burrow";

export async function startS3(): Promise<{
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}> {
  const server = await startLoopbackProcess({
    name: "s3rver",
    argv: (port, dir) => [
      "node",
      BIN,
      "-d",
      join(dir, "data"),
      "-a",
      "127.0.0.1",
      "-p",
      String(port),
      "--configure-bucket",
      BUCKET,
      "--silent",
    ],
    // Any HTTP answer (an unsigned request gets 403) means it is listening; the bucket is configured before listen.
    ready: async (url) => (await fetch(url, { signal: AbortSignal.timeout(1000) }), true),
  });
  return { endpoint: server.url, bucket: BUCKET, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", stop: server.stop };
}
