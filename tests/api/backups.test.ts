// Online backups through the admin API: a backup taken while writes run holds every write acknowledged before it
// and is consistent (nested upserts whole, a prefix of the write sequence); list, download and delete; roles;
// retention; the schedule (with an injected clock); upload to a loopback S3; the file trash waits for a running
// backup; bad input. Under STORE=sqld the same, with the databases on the libSQL server: a backup copies them from
// the server and a restore copies them onto new namespaces; such a backup also restores into a data directory.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { S3Client } from "bun";
import { Database } from "bun:sqlite";
import { BackupScheduler } from "../../src/backup/schedule.ts";
import type { BackupSettings } from "../../src/backup/backups.ts";
import { holdDrain } from "../../src/backup/drain-hold.ts";
import { restoreBackup } from "../../src/backup/restore.ts";
import { restoreToStore } from "../../src/backup/restore-to-store.ts";
import { formatUpload } from "../../src/files/upload.ts";
import { createLogger } from "../../src/log.ts";
import { JOB_LEASES_DDL, StoreJobLeases } from "../../src/system/job-lease.ts";
import { makeTestApp, tempDir, type TestApp } from "../helpers/app.ts";
import { connect, createStream, subscribe } from "../helpers/live.ts";
import { startS3 } from "../helpers/s3rver.ts";
import { REMOTE_STORE, remoteStoreFlags } from "../helpers/sqld.ts";

let t: TestApp;
const scratch = tempDir("burrow-backups-");
beforeAll(async () => {
  t = await makeTestApp();
  await t.admin("PUT", "/schemas/item", { fields: { seq: { type: "integer" } } });
  await t.admin("PUT", "/schemas/order", {
    fields: { seq: { type: "integer" }, items: { type: "relationship", schema: "item", many: true } },
  });
  await t.admin("PUT", "/schemas/doc", { fields: { file: { type: "binary" } } });
});
afterAll(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Restores a backup file into a new directory (STORE=sqld: onto new namespaces) and opens a server on it. */
async function openRestored(file: string): Promise<TestApp> {
  const dir = join(scratch, `restored-${crypto.randomUUID().slice(0, 8)}`);
  if (REMOTE_STORE) {
    const f = await remoteStoreFlags(dir);
    await restoreToStore(join(t.dir, file), {
      dir,
      url: f["--store"]!,
      authToken: null,
      namespace: f["--store-namespace"]!,
      adminUrl: f["--store-admin"]!,
    });
  } else restoreBackup(join(t.dir, file), dir);
  return makeTestApp({ dir });
}

describe("a backup while the server takes writes", () => {
  test("holds every write acknowledged before it started, and each nested upsert whole", async () => {
    const acked: number[] = [];
    let stop = false;
    let failures = 0;
    // One writer, one order with two items per write (one transaction each), bounded in count.
    const writer = (async () => {
      for (let seq = 1; seq <= 2000 && !stop; seq++) {
        const r = await t.request("POST", "/order", {
          headers: { "x-service-relations": "items=item" },
          body: { seq, items: [{ seq }, { seq }] },
        });
        if (r.status === 201) acked.push(seq);
        else failures++;
        await new Promise((resolve) => setImmediate(resolve)); // let timers and the backup worker's messages in
      }
    })();
    while (acked.length < 30) await Bun.sleep(5);
    const before = acked.length;
    const b = await t.admin("POST", "/backups", {});
    const after = acked.length;
    stop = true;
    await writer;
    expect(failures).toBe(0);
    expect(b.status).toBe(201);
    expect(b.body.id).toMatch(/^burrow-\d{8}T\d{6}Z-[0-9a-f]{4}$/);
    expect(b.body.file).toBe(`backups/${b.body.id}.tar`);
    expect(Object.keys(b.body).sort()).toEqual(["created", "durationMs", "file", "id", "size"]);
    expect(after).toBeGreaterThan(before); // writes went on while the backup was made

    const r = await openRestored(b.body.file);
    try {
      const orders = (await r.request("GET", "/order", { headers: { range: "objects=0-4999" } })).body as {
        seq: number;
        items: string[];
      }[];
      const items = (await r.request("GET", "/item", { headers: { range: "objects=0-9999" } })).body as { item_id: string; seq: number }[];
      const seqs = orders.map((o) => o.seq).sort((a, b) => a - b);
      // Every write acknowledged before the backup started is in it; what is in it is a prefix of the writes.
      expect(seqs.length).toBeGreaterThanOrEqual(before);
      expect(seqs.length).toBeLessThanOrEqual(after);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      // Each order's items are there, and no item is without its order.
      const itemKeys = new Set(items.map((i) => i.item_id));
      for (const o of orders) for (const k of o.items) expect(itemKeys.has(k)).toBe(true);
      expect(items.length).toBe(orders.length * 2);
    } finally {
      await r.close();
    }
  }, 60_000);

  test("files are in the backup, also one deleted while the trash is held for a running backup", async () => {
    const a = await t.request("POST", "/doc", {
      body: { doc_id: "d1", file: formatUpload("text/plain", "a.txt", new TextEncoder().encode("hello backup")) },
    });
    expect(a.status).toBe(201);
    const stored = readdirSync(join(t.dir, "files"), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(stored.length).toBe(1);
    const release = holdDrain(t.dir, "test-hold");
    try {
      expect((await t.request("DELETE", "/doc/d1")).status).toBe(200);
      // The trash waits while a backup is marked as running: the file is still there.
      expect(existsSync(join(stored[0]!.parentPath, stored[0]!.name))).toBe(true);
    } finally {
      release();
    }
    await t.burrow.files.drain("development", t.burrow.envDbs.development);
    expect(existsSync(join(stored[0]!.parentPath, stored[0]!.name))).toBe(false);

    const c = await t.request("POST", "/doc", {
      body: { doc_id: "d2", file: formatUpload("text/plain", "b.txt", new TextEncoder().encode("kept in the backup")) },
    });
    const b = await t.admin("POST", "/backups", {});
    const r = await openRestored(b.body.file);
    try {
      const url = new URL(c.body.file);
      const res = await r.app.handle(new Request(`http://localhost${url.pathname}`));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("kept in the backup");
    } finally {
      await r.close();
    }
  });
});

describe("live streams after a restore", () => {
  test("a stream resuming from an id it saw before the restore gets a reset, then live events", async () => {
    const { stream, token } = await createStream(t);
    await subscribe(t, stream, "s", { schema: "doc" });
    const live = await connect(t, stream, token);
    await t.request("POST", "/doc", { body: { doc_id: "before-backup" } });
    const [seen] = await live.take(1);
    const b = await t.admin("POST", "/backups", {});
    await t.request("POST", "/doc", { body: { doc_id: "after-backup" } });
    const [lost] = await live.take(1);
    await live.close();
    const r = await openRestored(b.body.file);
    try {
      const first = await connect(r, stream, token, { lastEventId: seen!.id! });
      expect((await first.take(1))[0]!.event).toBe("reset");
      await r.request("POST", "/doc", { body: { doc_id: "restored-1" } });
      const [one] = await first.take(1);
      expect(one!.data.object.doc_id).toBe("restored-1");
      await first.close();
      // An id from the lost timeline (after the backup) also resumes with a reset, and what followed it is replayed.
      const second = await connect(r, stream, token, { lastEventId: lost!.id! });
      await r.request("POST", "/doc", { body: { doc_id: "restored-2" } });
      expect((await second.take(3)).map((e) => e.event + (e.data.object ? `:${e.data.object.doc_id}` : ""))).toEqual([
        "reset",
        "create:restored-1",
        "create:restored-2",
      ]);
      expect(one!.id!).toBeGreaterThan(lost!.id!);
      await second.close();
    } finally {
      await r.close();
    }
  });
});

describe("list, read, download, delete", () => {
  test("the list shows each backup with size and time, newest first; one backup; its file; deleting it", async () => {
    const made = await t.admin("POST", "/backups");
    expect(made.status).toBe(201);
    const list = await t.admin("GET", "/backups");
    expect(list.status).toBe(200);
    expect(list.body.running).toBeNull();
    expect(list.body.schedule).toEqual({ every: 0, keep: 7, s3: false, next: null });
    expect(list.body.backups[0]).toEqual(made.body);
    const created = list.body.backups.map((x: { created: number }) => x.created);
    expect(created).toEqual([...created].sort((a: number, b: number) => b - a));
    expect((await t.admin("GET", `/backups/${made.body.id}`)).body).toEqual(made.body);

    const dl = await t.admin("GET", `/backups/${made.body.id}/download`);
    expect(dl.status).toBe(200);
    expect(dl.headers.get("content-type")).toBe("application/x-tar");
    expect(dl.headers.get("content-disposition")).toBe(`attachment; filename="${made.body.id}.tar"`);
    expect(Number(dl.headers.get("content-length"))).toBe(made.body.size);
    const onDisk = readFileSync(join(t.dir, made.body.file));
    const res = await t.app.handle(
      new Request(`http://localhost/_admin/api/backups/${made.body.id}/download`, { headers: { authorization: await token() } }),
    );
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), onDisk)).toBe(0);

    expect((await t.admin("DELETE", `/backups/${made.body.id}`)).status).toBe(200);
    expect((await t.admin("GET", `/backups/${made.body.id}`)).status).toBe(404);
    expect(existsSync(join(t.dir, made.body.file))).toBe(false);
  });

  test("roles: viewers list, editors make, only owners download", async () => {
    await t.burrow.admins.upsert("viewer@example.com", "viewer password 1", "viewer");
    await t.burrow.admins.upsert("editor@example.com", "editor password 1", "editor");
    const as = async (email: string, password: string) => {
      const login = await t.request("POST", "/_admin/api/login", { body: { email, password }, key: null, version: null });
      const headers = { authorization: `Bearer ${login.body.token}` };
      return (method: string, path: string) =>
        t.request(method, `/_admin/api${path}`, { headers, key: null, version: null, body: method === "POST" ? {} : undefined });
    };
    const viewer = await as("viewer@example.com", "viewer password 1");
    const editor = await as("editor@example.com", "editor password 1");
    expect((await viewer("GET", "/backups")).status).toBe(200);
    expect((await viewer("POST", "/backups")).status).toBe(403);
    const made = await editor("POST", "/backups");
    expect(made.status).toBe(201);
    const dl = await editor("GET", `/backups/${made.body.id}/download`);
    expect(dl.status).toBe(403);
    expect(dl.body.error).toContain("owner");
    expect((await viewer("GET", `/backups/${made.body.id}/download`)).status).toBe(403);
    expect((await viewer("DELETE", `/backups/${made.body.id}`)).status).toBe(403);
    expect((await editor("DELETE", `/backups/${made.body.id}`)).status).toBe(200);
  });
});

/** The owner's bearer header (the harness logs in once). */
async function token(): Promise<string> {
  const r = await t.request("POST", "/_admin/api/login", {
    body: { email: "admin@example.com", password: "correct horse battery" },
    key: null,
    version: null,
  });
  return `Bearer ${r.body.token}`;
}

describe("retention and schedule", () => {
  test("after each backup only the newest backups.keep are kept", async () => {
    expect((await t.admin("PUT", "/settings/production", { backups: { keep: 2 } })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.admin("POST", "/backups")).body.id);
    const left = (await t.admin("GET", "/backups")).body.backups.map((b: { id: string }) => b.id);
    expect(left).toEqual([ids[2], ids[1]]);
    expect(existsSync(join(t.dir, "backups", `${ids[0]}.tar`))).toBe(false);
    expect(readdirSync(join(t.dir, "backups")).filter((n) => !n.startsWith("burrow-"))).toEqual([]);
  });

  test("the schedule makes a backup when the newest is `every` hours old (clock injected)", async () => {
    let now = Date.now();
    const settings = () => t.burrow.settings.get("production").backups as unknown as BackupSettings;
    const scheduler = new BackupScheduler(t.burrow.backups, settings, createLogger("error"), () => now);
    await t.admin("PUT", "/settings/production", { backups: { every: 0 } });
    expect(await scheduler.tick()).toBeNull();
    expect(scheduler.next()).toBeNull();
    await t.admin("PUT", "/settings/production", { backups: { every: 6 } });
    const newest = t.burrow.backups.list()[0]!.created;
    expect(scheduler.next()).toBe(newest + 6 * 3600_000);
    expect(await scheduler.tick()).toBeNull(); // the newest backup is minutes old
    now = newest + 6 * 3600_000 + 1;
    const made = await scheduler.tick();
    expect(made?.id).toMatch(/^burrow-/);
    expect(await scheduler.tick()).toBeNull(); // just made one
    now += 6 * 3600_000;
    expect((await scheduler.tick())?.id).not.toBe(made!.id);
    const list = (await t.admin("GET", "/backups")).body;
    expect(list.backups).toHaveLength(2); // keep is still 2
    expect(list.schedule.every).toBe(6);
    await t.admin("PUT", "/settings/production", { backups: { every: null, keep: null } });
  });
});

test("with several nodes on one store only the node holding the backup lease makes scheduled backups", async () => {
  await t.burrow.system.execute(JOB_LEASES_DDL);
  const settings = () => ({ every: 1, keep: 2, s3: false });
  const far = Date.now() + 1000 * 3600_000; // every backup there is is long overdue
  const made = { a: 0, b: 0 };
  const nodes = (["a", "b"] as const).map((name) => {
    const leases = new StoreJobLeases(t.burrow.system);
    const log = createLogger("info", (line) => void (line.includes("scheduled backup made") && made[name]!++));
    return new BackupScheduler(
      t.burrow.backups,
      settings,
      log,
      () => far,
      () => leases.claim("backup-lease-test", 60_000),
    ).start(25);
  });
  const deadline = Date.now() + 10_000;
  while (made.a + made.b < 2 && Date.now() < deadline) await Bun.sleep(25);
  for (const stop of nodes) stop();
  await Bun.sleep(100); // a look under way ends, and the backup it started
  while (t.burrow.backups.running) await Bun.sleep(20);
  // Whichever looked first holds the lease; the other never made one.
  expect(Math.max(made.a, made.b)).toBeGreaterThanOrEqual(2);
  expect(Math.min(made.a, made.b)).toBe(0);
}, 20_000);

describe("S3", () => {
  test("with backups.s3 a backup is uploaded to production's S3 file store; a failed upload keeps the local file", async () => {
    const unconfigured = await t.admin("POST", "/backups", { s3: true });
    expect(unconfigured.status).toBe(201);
    expect(unconfigured.body.s3.key).toBe(`backups/${unconfigured.body.id}.tar`);
    expect(unconfigured.body.s3.error).toContain("S3 file store is not configured");
    expect(existsSync(join(t.dir, unconfigured.body.file))).toBe(true);

    const s3 = await startS3();
    try {
      const conn = {
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: "us-east-1",
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      };
      expect(
        (await t.admin("PUT", "/settings/production", { files: { s3: { ...conn, prefix: "app1/" } }, backups: { s3: true } })).status,
      ).toBe(200);
      const b = await t.admin("POST", "/backups");
      expect(b.status).toBe(201);
      expect(b.body.s3).toEqual({ key: `app1/backups/${b.body.id}.tar` });
      const object = new S3Client(conn).file(b.body.s3.key);
      expect(Buffer.compare(Buffer.from(await object.arrayBuffer()), readFileSync(join(t.dir, b.body.file)))).toBe(0);
      expect((await t.admin("GET", `/backups/${b.body.id}`)).body.s3).toEqual(b.body.s3);
      const off = await t.admin("POST", "/backups", { s3: false });
      expect(off.body.s3).toBeUndefined();
    } finally {
      await t.admin("PUT", "/settings/production", { files: null, backups: null });
      await s3.stop();
    }
  }, 60_000);
});

describe("bad input", () => {
  test("clear 4xx answers, never a 500", async () => {
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/backups", { s3: "yes" }, 400, ""],
      ["POST", "/backups", { later: true }, 400, ""],
      ["POST", "/backups", [1], 400, ""],
      ["GET", "/backups/nope", undefined, 404, "no backup"],
      ["GET", "/backups/..%2F..%2Fsystem.db", undefined, 404, ""],
      ["GET", "/backups/burrow-20000101T000000Z-abcd/download", undefined, 404, "no backup"],
      ["DELETE", "/backups/burrow-20000101T000000Z-abcd", undefined, 404, "no backup"],
      ["PUT", "/settings/development", { backups: { every: 1 } }, 400, "server-wide: set it in production's settings"],
      ["PUT", "/settings/production", { backups: { every: -1 } }, 400, "backups.every"],
      ["PUT", "/settings/production", { backups: { keep: 0 } }, 400, "backups.keep"],
      ["PUT", "/settings/production", { backups: { s3: "on" } }, 400, "backups.s3"],
    ];
    for (const [method, path, body, status, message] of cases) {
      const r = await t.admin(method, path, body);
      expect([method, path, r.status]).toEqual([method, path, status]);
      expect(typeof r.body.error).toBe("string");
      expect(r.body.error).toContain(message);
    }
  });

  test("one backup at a time: a second request while one runs is 409", async () => {
    const [a, b] = await Promise.all([t.admin("POST", "/backups"), t.admin("POST", "/backups")]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect((a.status === 409 ? a : b).body.error).toContain("a backup is being made");
  });
});

test.if(REMOTE_STORE)(
  "a backup of the libSQL store restores into a data directory too: every table with the same rows",
  async () => {
    await t.request("POST", "/item", { body: { seq: 1 } });
    const b = await t.admin("POST", "/backups", {});
    expect(b.status).toBe(201);
    const dir = join(scratch, `embedded-${crypto.randomUUID().slice(0, 8)}`);
    restoreBackup(join(t.dir, b.body.file), dir);
    for (const [name, client] of [
      ["system", t.burrow.system],
      ["development", t.burrow.envDbs.development],
      ["production", t.burrow.envDbs.production],
    ] as const) {
      const local = new Database(join(dir, `${name}.db`), { readonly: true });
      try {
        const tables = (
          local
            .query(
              `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%\\_node' ESCAPE '\\' AND name NOT LIKE '%\\_parent' ESCAPE '\\' AND name NOT LIKE '%\\_rowid' ESCAPE '\\'`,
            )
            .all() as { name: string }[]
        ).map((r) => r.name);
        expect(tables.length).toBeGreaterThan(3);
        for (const table of tables) {
          const q = `SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`;
          const remote = Number((await client.execute(q)).rows[0]!.n);
          // A restore adds its reset marker to each environment's change log (docs/decisions/live.md).
          const added = table === "_burrow_changes" ? 1 : 0;
          expect([name, table, (local.query(q).get() as { n: number }).n]).toEqual([name, table, remote + added]);
        }
      } finally {
        local.close();
      }
    }
  },
  60_000,
);
