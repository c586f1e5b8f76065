// Push survives kill -9: a broadcast is acknowledged once its fan-out is stored; the server is killed while the
// worker is delivering; after a restart on the same data directory every device gets the notification, and a
// delivery resent because its outcome was not yet recorded carries the same collapse key (the device shows one).
// Also: the delivery thread starts with the first send, not with the server.

import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { collapseKeysByToken, startFcmFake } from "../helpers/fcm-fake.ts";
import { ROOT, startServerProcess } from "../helpers/spawn.ts";

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const dir = tempDir("burrow-push-kill-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("kill -9 mid-delivery: after a restart nothing is lost, and resends keep their collapse key", async () => {
  const fcm = await startFcmFake();
  fcm.delayMs = 40;
  const env = {
    BURROW_DIR: join(dir, "data"),
    BURROW_DEV_PUBLIC_KEY: "push-kill-dev",
    BURROW_ADMIN_EMAIL: "ops@example.com",
    BURROW_ADMIN_PASSWORD: "push-kill-password",
    BURROW_LOG_LEVEL: "warn",
  };
  const api = {
    "x-service-api-key": "push-kill-dev",
    accept: "application/vnd.service+json; version=0",
    "content-type": "application/json",
  };
  let server = await startServerProcess(SOURCE, env);
  try {
    const login = (await (
      await fetch(`${server.url}/_admin/api/login`, {
        method: "POST",
        body: JSON.stringify({ email: env.BURROW_ADMIN_EMAIL, password: env.BURROW_ADMIN_PASSWORD }),
      })
    ).json()) as { token: string };
    const admin = { authorization: `Bearer ${login.token}` };
    const put = await fetch(`${server.url}/_admin/api/settings/development`, {
      method: "PUT",
      headers: admin,
      body: JSON.stringify({ push: { concurrency: 20, fcm: { serviceAccount: fcm.account.json, url: fcm.url } } }),
    });
    expect(put.status).toBe(200);
    const N = 300;
    for (let i = 0; i < N; i++) {
      const r = await fetch(`${server.url}/_push/tokens/androidgcm/device-${i}`, { method: "POST", headers: api, body: "{}" });
      expect(r.status).toBe(200);
    }
    const sent = await fetch(`${server.url}/_push/notifications`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ payload: { message: "survive" } }),
    });
    expect(await sent.json()).toEqual({ queued: N });
    // Kill while deliveries are in flight (bounded wait).
    const deadline = Date.now() + 15_000;
    while (fcm.deliveries.length < 60 && Date.now() < deadline) await Bun.sleep(5);
    expect(fcm.deliveries.length).toBeGreaterThanOrEqual(60);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const beforeRestart = fcm.deliveries.length;
    expect(beforeRestart).toBeLessThan(N);

    server = await startServerProcess(SOURCE, env);
    const done = Date.now() + 30_000;
    while (new Set(fcm.deliveries.map((d) => d.token)).size < N && Date.now() < done) await Bun.sleep(20);
    const byToken = collapseKeysByToken(fcm.deliveries);
    // Nothing lost.
    expect(byToken.size).toBe(N);
    // Resends are only those whose outcome the killed process had not recorded: at most the deliveries in flight
    // (push.concurrency, 20) plus the outcomes waiting to be recorded (a chunk of at most 20 here), and each
    // carries the collapse key of its first copy.
    const resent = [...byToken.values()].filter((keys) => keys.length > 1);
    expect(resent.length).toBeLessThanOrEqual(40);
    for (const keys of resent) expect(new Set(keys).size).toBe(1);
    // The queue is empty and the notification counted every device once.
    await Bun.sleep(200);
    const login2 = (await (
      await fetch(`${server.url}/_admin/api/login`, {
        method: "POST",
        body: JSON.stringify({ email: env.BURROW_ADMIN_EMAIL, password: env.BURROW_ADMIN_PASSWORD }),
      })
    ).json()) as { token: string };
    const [n] = (await (
      await fetch(`${server.url}/_admin/api/push/notifications?env=development&limit=1`, {
        headers: { authorization: `Bearer ${login2.token}` },
      })
    ).json()) as { queued: number; sent: number; pending: number }[];
    expect([n!.queued, n!.sent, n!.pending]).toEqual([N, N, 0]);
    // The delivery thread reported where FCM's in-flight limit ended, within push.concurrency (20).
    const q = (await (
      await fetch(`${server.url}/_admin/api/push/queue?env=development`, { headers: { authorization: `Bearer ${login2.token}` } })
    ).json()) as { inFlight: Record<string, { limit: number; shortestRoundTripMs: number }> };
    expect(q.inFlight.android!.limit).toBeGreaterThanOrEqual(8);
    expect(q.inFlight.android!.limit).toBeLessThanOrEqual(20);
    expect(q.inFlight.android!.shortestRoundTripMs).toBeGreaterThan(0);
    console.error(
      `push kill -9: ${beforeRestart} delivered before the kill, ${resent.length} resent after the restart (same collapse key), ${N} devices reached`,
    );
  } finally {
    fcm.stop();
    await server.stop();
  }
}, 90_000);

test("the delivery thread starts with the first send, not with the server", async () => {
  const fcm = await startFcmFake();
  const env = {
    BURROW_DIR: join(dir, "lazy"),
    BURROW_DEV_PUBLIC_KEY: "push-lazy-dev",
    BURROW_ADMIN_EMAIL: "ops@example.com",
    BURROW_ADMIN_PASSWORD: "push-lazy-password",
    BURROW_LOG_LEVEL: "info",
  };
  const api = {
    "x-service-api-key": "push-lazy-dev",
    accept: "application/vnd.service+json; version=0",
    "content-type": "application/json",
  };
  const server = await startServerProcess(SOURCE, env);
  const started = () => server.output().stderr.includes("push delivery thread started");
  try {
    const login = (await (
      await fetch(`${server.url}/_admin/api/login`, {
        method: "POST",
        body: JSON.stringify({ email: env.BURROW_ADMIN_EMAIL, password: env.BURROW_ADMIN_PASSWORD }),
      })
    ).json()) as { token: string };
    const put = await fetch(`${server.url}/_admin/api/settings/development`, {
      method: "PUT",
      headers: { authorization: `Bearer ${login.token}` },
      body: JSON.stringify({ push: { fcm: { serviceAccount: fcm.account.json, url: fcm.url } } }),
    });
    expect(put.status).toBe(200);
    expect((await fetch(`${server.url}/_push/tokens/androidgcm/lazy-device`, { method: "POST", headers: api, body: "{}" })).status).toBe(
      200,
    );
    await Bun.sleep(300);
    expect(started()).toBe(false);
    const sent = await fetch(`${server.url}/_push/notifications`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ payload: { message: "first" } }),
    });
    expect(await sent.json()).toEqual({ queued: 1 });
    const deadline = Date.now() + 10_000;
    while (fcm.deliveries.length < 1 && Date.now() < deadline) await Bun.sleep(10);
    expect(fcm.deliveries.map((d) => d.token)).toEqual(["lazy-device"]);
    expect(started()).toBe(true);
  } finally {
    await server.stop();
    fcm.stop();
  }
}, 30_000);
