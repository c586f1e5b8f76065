// The store going away (docs/decisions/operations.md): a node on a libSQL store whose sqld stops for 10 s (SIGTERM,
// SIGKILL) and starts again on the same port and data, or freezes (SIGSTOP: connections accepted, never answered)
// and thaws. During the gap every request that needs the store, /_health included, gets 503 with Retry-After within
// a bounded time, the process stays up and /_metrics shows burrow_store_reachable 0; once sqld is back the node
// serves again by itself (no restart) with every write acknowledged before the gap, and the gauge is 1 again.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const DEV_KEY = "outage-dev-public";
const dir = tempDir("burrow-store-outage-");
/** How long sqld stays away. */
const GAP_MS = 10_000;
/** No answer during the gap may take longer than this (the store calls' own bound is 10 s). */
const ANSWER_BOUND_MS = 12_000;
/** Once sqld answers again, the node must serve within this. */
const RECOVERY_MS = 15_000;

let sqld: Sqld;
let node: ServerProcess;
/** Keys of the notes whose create was acknowledged (201), across the outages: all must be there at the end. */
const written: string[] = [];

const headers = {
  "x-service-api-key": DEV_KEY,
  accept: "application/vnd.service+json; version=0",
  "content-type": "application/json",
};

beforeAll(async () => {
  sqld = await startSqld({ namespaces: true });
  node = await startServerProcess(SOURCE, {
    BURROW_DIR: join(dir, "node"),
    BURROW_STORE: sqld.url,
    BURROW_STORE_ADMIN_URL: sqld.adminUrl!,
    BURROW_STORE_NAMESPACE: "outage",
    BURROW_DEV_PUBLIC_KEY: DEV_KEY,
    BURROW_DEV_PRIVATE_KEY: "outage-dev-private",
    BURROW_PROD_PUBLIC_KEY: "outage-prod-public",
    BURROW_PROD_PRIVATE_KEY: "outage-prod-private",
    BURROW_ADMIN_EMAIL: "ops@example.com",
    BURROW_ADMIN_PASSWORD: "store-outage-password",
    BURROW_METRICS: "true",
    BURROW_LOG_LEVEL: "warn",
  });
}, 60_000);

afterAll(async () => {
  sqld?.signal("SIGCONT"); // a failed frozen test must not leave sqld stopped (it would never end)
  await node?.stop();
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; retryAfter: string | null; body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: parsed, ms: performance.now() - started };
}

async function reachableGauge(): Promise<number> {
  // Served at once during the gap: the figures that need the store are left out while it is away.
  const text = await (await fetch(`${node.url}/_metrics`, { signal: AbortSignal.timeout(2000) })).text();
  return Number(/^burrow_store_reachable (\d+)$/m.exec(text)?.[1]);
}

/**
 * Writes some notes, stops sqld with `signal` (SIGSTOP: freezes it) for GAP_MS while reads and writes go on, starts
 * (thaws) it again, and checks the node serves again by itself.
 */
async function outage(signal: "SIGTERM" | "SIGKILL" | "SIGSTOP") {
  for (let i = 0; i < 5; i++) {
    const r = await call("POST", "/note", { title: `${signal} ${i}`, n: i });
    expect(r.status).toBe(201);
    written.push((r.body as { note_id: string }).note_id);
  }
  expect(await reachableGauge()).toBe(1);

  if (signal === "SIGSTOP") {
    sqld.signal("SIGSTOP");
    await Bun.sleep(300); // every thread of it stopped, none finishing an answer
  } else await sqld.halt(signal);
  const gapEnds = Date.now() + GAP_MS;
  const answers: { what: string; status: number; retryAfter: string | null; body: unknown; ms: number }[] = [];
  let sawDown = false;
  while (Date.now() < gapEnds) {
    const round = await Promise.all([
      call("GET", `/note/${written.at(-5)}`).then((r) => ({ what: "read", ...r })),
      call("GET", "/note?n=1").then((r) => ({ what: "query", ...r })),
      call("POST", "/note", { title: "during the gap" }).then((r) => ({ what: "write", ...r })),
      call("PUT", `/note/${written.at(-4)}`, { n: 99 }).then((r) => ({ what: "update", ...r })),
      call("POST", "/note", { title: "another write queued behind the first" }).then((r) => ({ what: "write", ...r })),
      call("GET", "/_health").then((r) => ({ what: "health", ...r })),
    ]);
    answers.push(...round);
    if ((await reachableGauge()) === 0) sawDown = true;
    expect(node.proc.exitCode).toBeNull();
    await Bun.sleep(250);
  }
  for (const a of answers) {
    expect({ what: a.what, status: a.status, retryAfter: a.retryAfter, body: a.body }).toEqual({
      what: a.what,
      status: 503,
      retryAfter: "2",
      body: { error: "the data store cannot be reached; retry shortly" },
    });
    expect(a.ms).toBeLessThan(ANSWER_BOUND_MS);
  }
  expect(answers.length).toBeGreaterThanOrEqual(signal === "SIGSTOP" ? 6 : 18);
  expect(sawDown).toBe(true);

  if (signal === "SIGSTOP") sqld.signal("SIGCONT");
  else await sqld.restart();
  const back = Date.now();
  for (;;) {
    const r = await call("GET", `/note/${written.at(-1)}`);
    if (r.status === 200) break;
    expect(r.status).toBe(503);
    if (Date.now() - back > RECOVERY_MS) throw new Error(`not serving ${RECOVERY_MS} ms after sqld came back: ${JSON.stringify(r)}`);
    await Bun.sleep(200);
  }
  expect(node.proc.exitCode).toBeNull();
  const w = await call("POST", "/note", { title: `after ${signal}` });
  expect(w.status).toBe(201);
  written.push((w.body as { note_id: string }).note_id);
  for (const id of written) expect((await call("GET", `/note/${id}`)).status).toBe(200);
  expect(await reachableGauge()).toBe(1);
}

test("sqld stopped (SIGTERM) for 10 s: 503 with Retry-After during the gap, the node recovers by itself", async () => {
  await outage("SIGTERM");
}, 60_000);

test("sqld frozen (SIGSTOP) for 10 s: requests are given up within the bound (no hangs), then served again", async () => {
  await outage("SIGSTOP");
}, 60_000);

test("sqld killed (SIGKILL) for 10 s: the same, and the writes from before the gaps are there", async () => {
  await outage("SIGKILL");
  const list = await call("GET", "/note");
  expect(list.status).toBe(200);
  const keys = new Set((list.body as { note_id: string }[]).map((o) => o.note_id));
  for (const id of written) expect(keys.has(id)).toBe(true);
  // Each outage is a few lines in the log, not one per request or per poll.
  const log = node.output().stderr;
  expect(log.split("\n").filter((l) => l.includes("the data store cannot be reached")).length).toBe(3);
  expect(log.split("\n").filter((l) => l.includes("the data store answers again")).length).toBe(3);
  expect(log.split("\n").length).toBeLessThan(80);
}, 60_000);
