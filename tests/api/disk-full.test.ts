// Every write path answers the one 507 when the database cannot grow (SQLITE_FULL, here made real with
// `PRAGMA max_page_count` on the writer connection): object writes, sign-ups, logins (sessions), push sends, custom
// code that writes (the guest is told in the 507's words). Reads and logged-in reads go on; burrow.ops.disk records
// it; once the database may grow again the next write succeeds and clears it. (tests/e2e/disk-full.test.ts fills a
// real tmpfs; this covers the paths one by one, in process.)

import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Client } from "@libsql/core/api";
import { makeTestApp, type TestApp } from "../helpers/app.ts";
import { upload } from "../helpers/code.ts";
import { REMOTE_STORE } from "../helpers/sqld.ts";

const DISK_FULL = { error: "the server's disk is full: writes are refused until space is freed" };
const CODE = `
export const methods = [
  { name: "note_add", async execute(r, s) { return { status: 201, body: await s.data.create("note", { text: "m".repeat(262144) }) }; } },
  { name: "note_try", async execute(r, s) { try { await s.data.create("note", { text: "t".repeat(262144) }); return { body: "stored" }; } catch (e) { return { status: 418, body: { seen: e.message } }; } } },
];`;

let t: TestApp;
let dev: Client;
beforeAll(async () => {
  t = await makeTestApp();
  dev = t.burrow.envDbs.development;
  expect((await upload(t, CODE)).status).toBe(200);
  expect((await t.request("POST", "/user", { body: { username: "ann", password: "ann-password" } })).status).toBe(201);
  expect((await t.request("POST", "/note", { body: { text: "before" } })).status).toBe(201);
  // Enough devices that a broadcast's fan-out needs new pages.
  for (let i = 0; i < 200; i++)
    expect((await t.request("POST", `/_push/tokens/androidgcm/device-${i}-${"d".repeat(100)}`, { body: {} })).status).toBe(200);
});
afterAll(() => t.close());

/** Caps (or uncaps) the development database at its current size: a write that needs a new page fails. */
async function cap(on: boolean): Promise<void> {
  const pages = on ? Number((await dev.execute("PRAGMA page_count")).rows[0]![0]) : 1_000_000_000;
  // Through a write batch: the writer connection (the one that writes) gets the cap.
  await dev.batch([`PRAGMA max_page_count = ${pages}`], "write");
}

const big = () => "x".repeat(256 * 1024);

// On a libSQL server (STORE=sqld) there is no local database to cap.
test.skipIf(REMOTE_STORE)(
  "every write path answers 507 while the database cannot grow; reads go on; then writes succeed again",
  async () => {
    const disk = t.burrow.ops.disk;
    expect(disk.full).toBe(false);
    const refusedBefore = disk.refusedWrites;
    await cap(true);
    try {
      const create = await t.request("POST", "/note", { body: { text: big() } });
      expect([create.status, create.body]).toEqual([507, DISK_FULL]);
      expect(disk.full).toBe(true);
      const many = await t.request("POST", "/note", { body: [{ text: big() }, { text: big() }] });
      expect(many.status).toBe(507);
      const signup = await t.request("POST", "/user", { body: { username: "bob", password: "bob-password", bio: big() } });
      expect([signup.status, signup.body]).toEqual([507, DISK_FULL]);
      const sent = await t.request("POST", "/_push/notifications", { body: { payload: { message: "full" } } });
      expect([sent.status, sent.body]).toEqual([507, DISK_FULL]);
      const method = await t.request("POST", "/note_add", { body: {} });
      expect([method.status, method.body]).toEqual([507, DISK_FULL]);
      // A method that catches the failure answers for itself: it was told in the 507's words.
      const caught = await t.request("POST", "/note_try", { body: {} });
      expect([caught.status, caught.body]).toEqual([418, { seen: DISK_FULL.error }]);

      // Reads answer (nothing on the read path writes).
      expect((await t.request("GET", "/note")).status).toBe(200);
      expect(disk.refusedWrites - refusedBefore).toBeGreaterThanOrEqual(5);
      expect(disk.lastFullAt).toBeNumber();
      expect(t.burrow.ops.figures().disk.full).toBe(true);
    } finally {
      await cap(false);
    }
    // Room again: the next write succeeds and clears the mark; nothing of the refused writes was stored.
    const after = await t.request("POST", "/note", { body: { text: "after" } });
    expect(after.status).toBe(201);
    expect(disk.full).toBe(false);
    const texts = ((await t.request("GET", "/note")).body as { text: string }[]).map((n) => n.text).sort();
    expect(texts.filter((x) => x.length < 100)).toEqual(texts);
    const queued = await dev.execute("SELECT count(*) AS n FROM _burrow_push_notifications");
    expect(Number(queued.rows[0]!.n)).toBe(0);
    expect((await t.request("POST", "/_push/notifications", { body: { payload: { message: "room" } } })).body).toEqual({ queued: 200 });
    expect((await dev.execute("PRAGMA integrity_check")).rows[0]![0]).toBe("ok");
  },
);
