// The push worker of the delivery thread keeps its own copy of the settings (its own connections to the data
// directory, like a second node). Settings the API saved before a send was queued apply to that send even when
// the worker leases it before any wake-up arrives (its idle poll): it looks at the configuration epoch before
// every lease. Before, it could lease a fresh broadcast with the settings of before (no FCM credentials, the
// default concurrency), fail a whole chunk as "not configured" for good, and those devices were never reached.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { type StoreDatabases, openStore } from "../../src/db/open-store.ts";
import { createLogger } from "../../src/log.ts";
import { PushService } from "../../src/push/push-service.ts";
import { Settings } from "../../src/system/settings.ts";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { startFcmFake, type FcmFake } from "../helpers/fcm-fake.ts";

let t: TestApp;
let fcm: FcmFake;
let store: StoreDatabases | undefined;

beforeAll(async () => {
  t = await makeTestApp();
  fcm = await startFcmFake();
});
afterAll(async () => {
  fcm.stop();
  store?.close();
  await t.close();
});

/** A worker's side as the delivery thread builds it: connections, settings and push service of its own. */
async function threadSide(logs: string[]) {
  store = await openStore(t.burrow.config.store);
  const envDbs = { development: store.development, production: store.production };
  const settings = new Settings(store.system);
  expect(await settings.refresh()).toBe(true); // the first look loads
  expect(await settings.refresh()).toBe(false); // nothing changed since
  return {
    settings,
    push: new PushService(
      envDbs,
      settings,
      createLogger("warn", (l) => logs.push(l)),
    ),
  };
}

test("a send queued right after new push settings is delivered with them by a worker that was not woken", async () => {
  const logs: string[] = [];
  const thread = await threadSide(logs);
  // The worker's copy: no FCM credentials yet, the default concurrency.
  expect((thread.settings.get("development").push as { fcm: { serviceAccount: string } }).fcm.serviceAccount).toBe("");
  expect((thread.settings.get("development").push as { concurrency: number }).concurrency).toBe(500);

  // The API saves the credentials and a concurrency of 2, devices register, a broadcast is queued. Nothing wakes
  // the thread's worker (its wake-up is still on the way): it finds the rows on its own.
  const put = await t.admin("PUT", "/settings/development", {
    push: { concurrency: 2, fcm: { serviceAccount: fcm.account.json, url: fcm.url } },
  });
  expect(put.status).toBe(200);
  const N = 6;
  for (let i = 0; i < N; i++) expect((await t.request("POST", `/_push/tokens/androidgcm/follow-${i}`, { body: {} })).status).toBe(200);
  expect((await t.request("POST", "/_push/notifications", { body: { payload: { message: "fresh settings" } } })).body).toEqual({
    queued: N,
  });
  fcm.delayMs = 20;

  const stop = thread.push.start();
  try {
    const deadline = Date.now() + 10_000;
    while ((await t.burrow.push.queue("development").stats()).depth > 0 && Date.now() < deadline) await Bun.sleep(10);
  } finally {
    await stop();
  }
  const [n] = (await t.admin("GET", "/push/notifications?env=development&limit=1")).body;
  expect([n.queued, n.sent, n.failed, n.pending, n.errors]).toEqual([N, N, 0, 0, []]);
  expect(new Set(fcm.deliveries.map((d) => d.token)).size).toBe(N);
  // The saved concurrency held from the first lease on.
  expect(fcm.peak).toBeLessThanOrEqual(2);
  expect(logs).toEqual([]);
});

test("Settings.refresh reloads only when the configuration epoch moved", async () => {
  const other = new Settings(t.burrow.system);
  expect(await other.refresh()).toBe(true);
  expect(await other.refresh()).toBe(false);
  await t.burrow.settings.update("development", { app: { name: "Followed" } });
  expect(await other.refresh()).toBe(true);
  expect((other.get("development").app as { name: string }).name).toBe("Followed");
  expect(await other.refresh()).toBe(false);
});
