// Bun's shared "HTTP Client" thread (it carries every fetch and S3 request of the process) is born at normal
// priority in the built binary even when push delivery - a SCHED_IDLE thread - is the first to fetch
// (src/os/http-client-thread.ts). Read from /proc/<server pid>/task/*/stat: after an FCM push (FCM uses fetch; Web
// Push and APNs go through node:http and node:http2, which in Bun 1.4 run on the calling thread and make no HTTP
// Client thread) delivered before any other outbound call, the HTTP Client thread is SCHED_OTHER while the delivery
// thread is SCHED_IDLE; with the warm-up switched off (BURROW_NO_HTTP_THREAD_WARMUP=1, the benchmark switch) the same
// run leaves the HTTP Client thread SCHED_IDLE, which shows the run makes delivery fetch first.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { SCHED_IDLE, SCHED_OTHER, readThreads } from "../../src/os/thread-stat.ts";
import { tempDir } from "../helpers/app.ts";
import { buildBinary, startServerProcess } from "../helpers/spawn.ts";
import { startFcmFake } from "../helpers/fcm-fake.ts";

const dir = tempDir("burrow-e2e-http-thread-");
const exe = join(dir, "burrow");
const KEY = "http-thread-dev";
const ADMIN = { email: "ops@example.com", password: "http-thread-password" };
const api = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" };

beforeAll(() => buildBinary(exe), 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Seen {
  /** The HTTP Client thread's policy right after start-up (null: no such thread yet). */
  atStart: number | null;
  /** Its policy once a push was delivered. */
  http: number | null;
  /** The policies of the Worker threads that appeared with the send (the delivery thread). */
  newWorkers: number[];
}

/** Start the binary, deliver one FCM push before any other outbound call, and read the server's threads. */
async function deliverFirst(name: string, env: Record<string, string> = {}): Promise<Seen> {
  const fcm = await startFcmFake();
  const server = await startServerProcess([exe], {
    BURROW_DIR: join(dir, name),
    BURROW_DEV_PUBLIC_KEY: KEY,
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_LOG_LEVEL: "warn",
    ...env,
  });
  try {
    const pid = server.proc.pid;
    const httpPolicy = () => readThreads(pid).find((t) => t.name === "HTTP Client")?.policy ?? null;
    const atStart = httpPolicy();
    const login = (await (await fetch(`${server.url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) })).json()) as {
      token: string;
    };
    const put = await fetch(`${server.url}/_admin/api/settings/development`, {
      method: "PUT",
      headers: { authorization: `Bearer ${login.token}` },
      body: JSON.stringify({ push: { fcm: { serviceAccount: fcm.account.json, url: fcm.url } } }),
    });
    expect(put.status).toBe(200);
    const reg = await fetch(`${server.url}/_push/tokens/androidgcm/device-1`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ user: "ann" }),
    });
    expect(reg.status).toBe(200);
    // The delivery thread starts with the first send: the Worker threads that appear from here on are its.
    const before = new Set(readThreads(pid).map((t) => t.tid));
    const sent = await fetch(`${server.url}/_push/notifications`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ payload: { message: "first" }, users: ["ann"] }),
    });
    expect(await sent.json()).toEqual({ queued: 1 });
    const deadline = Date.now() + 15_000;
    while (fcm.deliveries.length < 1 && Date.now() < deadline) await Bun.sleep(20);
    expect(fcm.deliveries.map((d) => d.token)).toEqual(["device-1"]);
    const threads = readThreads(pid);
    return {
      atStart,
      http: httpPolicy(),
      newWorkers: threads.filter((t) => t.name === "Worker" && !before.has(t.tid)).map((t) => t.policy),
    };
  } finally {
    expect(await server.stop()).toBe(0);
    fcm.stop();
  }
}

describe.skipIf(process.platform !== "linux")("the HTTP Client thread's priority", () => {
  test("push delivering first: the delivery thread is SCHED_IDLE, the HTTP Client thread SCHED_OTHER", async () => {
    const seen = await deliverFirst("fixed");
    expect(seen.atStart).toBe(SCHED_OTHER);
    expect(seen.newWorkers).toEqual([SCHED_IDLE]);
    expect(seen.http).toBe(SCHED_OTHER);
  }, 60_000);

  test("with the warm-up switched off the same run leaves it SCHED_IDLE (the run does make delivery fetch first)", async () => {
    const seen = await deliverFirst("switched-off", { BURROW_NO_HTTP_THREAD_WARMUP: "1" });
    expect(seen.atStart).toBeNull();
    expect(seen.newWorkers).toEqual([SCHED_IDLE]);
    expect(seen.http).toBe(SCHED_IDLE);
  }, 60_000);
});
