// The benchmarks' side of the push provider fakes (push-fakes.ts, run in a process of its own at nice 10, so that
// standing in for Apple's and Google's servers takes no CPU from the load generator measuring the server): start
// them, read their addresses and keys, and the development push settings that point Burrow at them.

import { join } from "node:path";
import { readFirstLine } from "./env.ts";

export interface PushFakes {
  control: string;
  apns: { url: string; ca: string; keyP8: string; keyId: string; teamId: string; topic: string };
  fcm: { url: string; serviceAccount: string };
  web: { url: string; vapidPublicKey: string; vapidPrivateKey: string; p256dh: string; auth: string };
}

/** Start the fakes' process; `env` adds to this process's environment (e.g. BENCH_PROVIDER_DELAY_MS). */
export async function startPushFakes(
  env: Record<string, string> = {},
): Promise<{ fakes: PushFakes; proc: Bun.Subprocess<"pipe", "pipe", "inherit"> }> {
  const proc = Bun.spawn([...(Bun.which("nice") ? ["nice", "-n", "10"] : []), process.execPath, join(import.meta.dir, "push-fakes.ts")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, ...env },
  });
  const fakes = JSON.parse(await readFirstLine(proc.stdout as ReadableStream<Uint8Array>)) as PushFakes;
  return { fakes, proc };
}

/** The `push` settings that send every platform to the fakes. */
export function pushSettingsFor(fakes: PushFakes) {
  return {
    apns: {
      url: fakes.apns.url,
      topic: fakes.apns.topic,
      keyP8: fakes.apns.keyP8,
      keyId: fakes.apns.keyId,
      teamId: fakes.apns.teamId,
      ca: fakes.apns.ca,
    },
    fcm: { url: fakes.fcm.url, serviceAccount: fakes.fcm.serviceAccount },
    web: {
      vapidPublicKey: fakes.web.vapidPublicKey,
      vapidPrivateKey: fakes.web.vapidPrivateKey,
      subject: "mailto:bench@example.com",
      allowPrivateEndpoints: true,
    },
  };
}
