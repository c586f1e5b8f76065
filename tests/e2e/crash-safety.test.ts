// Crash safety: the server is killed with SIGKILL under concurrent writes 20 times and
// started again on the same data directory. Every write it acknowledged with a 2xx must be there after the
// restart, and every database must pass PRAGMA integrity_check at the end. Burrow runs SQLite in WAL mode with
// synchronous=NORMAL: a commit is in the WAL file (the operating system's cache) before the answer is sent, so
// a killed process loses nothing it acknowledged; only a power loss or OS crash may lose the last commits.
// Also: a kill -9 between the commit of writes and their after-hooks skips no hook (the queue is in the commit).

import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT, startServerProcess } from "../helpers/spawn.ts";

const dir = tempDir("burrow-crash-");
const KEY = "crash-dev-public";
const env = { BURROW_DIR: join(dir, "data"), BURROW_DEV_PUBLIC_KEY: KEY, BURROW_LOG_LEVEL: "warn" };
const headers = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" };
const ROUNDS = 20;
const WRITERS = 8;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function storedKeys(url: string): Promise<Set<string>> {
  const r = await fetch(`${url}/crash`, { headers: { ...headers, "x-service-select": "crash_id" } });
  if (r.status === 404) return new Set();
  const rows = (await r.json()) as { crash_id: string }[];
  return new Set(rows.map((o) => o.crash_id));
}

test(`${ROUNDS} kills under concurrent writes lose no acknowledged write and leave every database intact`, async () => {
  const acknowledged = new Set<string>();
  let attempted = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const server = await startServerProcess([process.execPath, join(ROOT, "src/main.ts")], env);
    // Everything acknowledged before the previous kill is here.
    const stored = await storedKeys(server.url);
    const lost = [...acknowledged].filter((k) => !stored.has(k));
    expect({ round, lost: lost.slice(0, 5), lostCount: lost.length }).toEqual({ round, lost: [], lostCount: 0 });

    let stop = false;
    const writer = async (w: number) => {
      for (let n = 0; !stop && n < 10_000; n++) {
        const key = `r${round}-w${w}-${n}`;
        attempted++;
        try {
          const r = await fetch(`${server.url}/crash`, {
            method: "POST",
            headers,
            body: JSON.stringify({ crash_id: key, round, writer: w, n, text: "x".repeat(200) }),
          });
          if (r.status === 201) acknowledged.add(key);
          else await r.text();
        } catch {
          return; // the connection died with the server
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    await Bun.sleep(150 + ((round * 37) % 250));
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    stop = true;
    await Promise.all(writers);
  }
  // A last start: the final round's acknowledged writes are there too.
  const server = await startServerProcess([process.execPath, join(ROOT, "src/main.ts")], env);
  const stored = await storedKeys(server.url);
  expect([...acknowledged].filter((k) => !stored.has(k))).toEqual([]);
  expect(await server.stop()).toBe(0);
  for (const name of ["system", "development", "production"]) {
    const db = new Database(join(dir, "data", `${name}.db`), { readonly: true });
    expect([name, db.query("PRAGMA integrity_check").get()]).toEqual([name, { integrity_check: "ok" }]);
    db.close();
  }
  console.log(
    `crash safety: ${ROUNDS} SIGKILLs, ${attempted} writes attempted, ${acknowledged.size} acknowledged, 0 lost, integrity_check ok`,
  );
  expect(acknowledged.size).toBeGreaterThan(ROUNDS * 10);
}, 240_000);

test("a kill -9 between the commit and the after-hooks skips none of them: they run after the restart", async () => {
  const hookDir = join(dir, "hooks");
  const admin = { BURROW_ADMIN_EMAIL: "ops@example.com", BURROW_ADMIN_PASSWORD: "crash-hooks-password" };
  const henv = { ...env, ...admin, BURROW_DIR: hookDir };
  const server = await startServerProcess([process.execPath, join(ROOT, "src/main.ts")], henv);
  const login = await fetch(`${server.url}/_admin/api/login`, {
    method: "POST",
    body: JSON.stringify({ email: admin.BURROW_ADMIN_EMAIL, password: admin.BURROW_ADMIN_PASSWORD }),
  });
  const auth = { authorization: `Bearer ${((await login.json()) as { token: string }).token}`, "content-type": "application/json" };
  const open = { create: "open", read: "open", update: "open", delete: "open" };
  for (const [name, fields] of [
    ["paid", { n: { type: "integer" } }],
    ["receipt", { ref: { type: "string" }, change: { type: "integer" } }],
  ] as const)
    expect(
      (
        await fetch(`${server.url}/_admin/api/schemas/${name}`, {
          method: "PUT",
          headers: auth,
          body: JSON.stringify({ fields, permissions: open }),
        })
      ).status,
    ).toBe(201);
  // Each after-hook reads a little before it writes its receipt, so a burst leaves most of them queued.
  const code = `export const hooks = { paid: { async afterCreate(c, s) {
    for (let i = 0; i < 5; i++) await s.data.count("receipt", { where: { ref: c.key } });
    await s.data.create("receipt", { ref: c.key, change: c.id });
  } } };`;
  expect(
    (
      await fetch(`${server.url}/_admin/api/code`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/javascript" },
        body: code,
      })
    ).status,
  ).toBe(200);
  const made = await fetch(`${server.url}/paid`, {
    method: "POST",
    headers,
    body: JSON.stringify(Array.from({ length: 500 }, (_, n) => ({ paid_id: `p${n}`, n }))),
  });
  expect(made.status).toBe(200);
  expect(((await made.json()) as { succeeded: string[] }).succeeded.length).toBe(500);
  // A moment for the runner to take some changes (their leases die with the process).
  await Bun.sleep(150);
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  // The kill came before most hooks ran: their changes wait in the queue, committed with the objects.
  const db = new Database(join(hookDir, "development.db"), { readonly: true });
  const pending = (db.query("SELECT count(*) AS n FROM _burrow_hook_queue").get() as { n: number }).n;
  db.close();
  expect(pending).toBeGreaterThan(0);
  const leased = new Database(join(hookDir, "development.db"), { readonly: true });
  const held = (leased.query("SELECT count(*) AS n FROM _burrow_hook_queue WHERE lease_until > 0").get() as { n: number }).n;
  leased.close();
  const again = await startServerProcess([process.execPath, join(ROOT, "src/main.ts")], henv);
  let receipts: { ref: string; change: number }[] = [];
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${again.url}/receipt`, { headers: { ...headers, "x-service-select": "ref,change" } });
    receipts = r.status === 200 ? ((await r.json()) as typeof receipts) : [];
    if (new Set(receipts.map((x) => x.ref)).size >= 500) break;
    await Bun.sleep(100);
  }
  // Every change got its hook (at least once; a hook cut off mid-run may run twice, with the same change id).
  expect(new Set(receipts.map((x) => x.ref)).size).toBe(500);
  const twice = receipts.length - new Set(receipts.map((x) => x.change)).size;
  expect(new Set(receipts.map((x) => x.change)).size).toBe(500);
  console.log(
    `after-hooks: ${pending} of 500 queued at the kill (${held} taken by the killed process), all 500 ran after the restart (${twice} twice, same change id)`,
  );
  expect(await again.stop()).toBe(0);
}, 120_000);
