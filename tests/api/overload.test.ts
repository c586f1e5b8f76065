// Load shedding through the real edge (src/http/admission.ts): while the event loop runs late - here blocked on
// purpose for 40 ms every 50 ms, as a saturated server's loop would be - ordinary requests get 503 with Retry-After
// and a JSON error, sign-in and the admin API are still answered, the status figures and /_metrics count the refusals;
// once the loop is quiet again every request is admitted within a few hundred ms. Off (target 0), nothing is shed.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp({ env: { BURROW_SHED_TARGET_MS: "20", BURROW_METRICS: "true" } });
  const open = { create: "open", read: "open", update: "open", delete: "open" };
  expect((await t.admin("PUT", "/schemas/note", { fields: { title: { type: "string" } }, permissions: open })).status).toBe(201);
  expect((await t.request("POST", "/user", { body: { username: "ann", password: "ann's password" } })).status).toBe(201);
});
afterAll(() => t.close());

/** Block the event loop for `busyMs` out of every 50 ms, for `forMs`. */
async function saturate(busyMs: number, forMs: number, during: () => Promise<void>) {
  const end = performance.now() + forMs;
  const timer = setInterval(() => {
    const until = performance.now() + busyMs;
    while (performance.now() < until) {}
  }, 50);
  try {
    await during();
    while (performance.now() < end) await Bun.sleep(10);
  } finally {
    clearInterval(timer);
  }
}

test("a late event loop sheds ordinary requests with 503 and Retry-After; sign-in and the admin API go on", async () => {
  const statuses: number[] = [];
  let refusal = null as { status: number; body: unknown; retryAfter: string | null } | null;
  let login = 0;
  let admin = 0;
  await saturate(40, 1500, async () => {
    await Bun.sleep(400); // the lag that counts (a median of looks) rises after a few
    for (let i = 0; i < 40; i++) {
      const r = await t.request("GET", "/note");
      statuses.push(r.status);
      if (r.status === 503 && !refusal) refusal = { status: r.status, body: r.body, retryAfter: r.headers.get("retry-after") };
      await Bun.sleep(10);
    }
    login = (
      await t.request("POST", "/user/accessToken", {
        raw: new URLSearchParams({ username: "ann", password: "ann's password", token_type: "mac" }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      })
    ).status;
    admin = (await t.admin("GET", "/status")).status;
  });
  expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(5);
  expect(statuses.every((s) => s === 503 || s === 200)).toBe(true);
  expect(refusal).toEqual({ status: 503, body: { error: "the server is overloaded; retry after a second" }, retryAfter: "1" });
  expect([login, admin]).toEqual([200, 200]);
  const ops = (await t.admin("GET", "/status")).body as { operations: { shedding: { enabled: boolean; shed: number } } };
  expect(ops.operations.shedding.enabled).toBe(true);
  expect(ops.operations.shedding.shed).toBeGreaterThan(5);
  const metrics = await t.app.handle(new Request("http://localhost/_metrics"));
  expect(await metrics.text()).toMatch(/^burrow_shed_requests_total ([6-9]|\d\d+)$/m);
  // Quiet again: every request admitted (10 in a row) well within a second.
  const quiet = performance.now();
  let inARow = 0;
  for (let i = 0; i < 200 && inARow < 10; i++) {
    inARow = (await t.request("GET", "/note")).status === 200 ? inARow + 1 : 0;
    await Bun.sleep(5);
  }
  expect(inARow).toBe(10);
  expect(performance.now() - quiet).toBeLessThan(1000);
});

test("with --shed-target-ms 0 nothing is shed however late the loop runs", async () => {
  const off = await makeTestApp({ env: { BURROW_SHED_TARGET_MS: "0" } });
  try {
    const statuses: number[] = [];
    await saturate(40, 800, async () => {
      await Bun.sleep(300);
      for (let i = 0; i < 20; i++)
        statuses.push((await off.request("GET", "/_admin/api/status")).status, (await off.request("GET", "/nothing")).status);
    });
    expect(statuses.includes(503)).toBe(false);
  } finally {
    await off.close();
  }
});
