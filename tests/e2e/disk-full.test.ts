// A full disk loses nothing: the server runs with its data directory on a 24 MB tmpfs (in a mount namespace of
// its own, `unshare --user --map-root-user --mount`, so the same code path works as root and not). A filler file
// takes most of it; objects are created until writes answer 507; then reads still answer, an upload, a push send
// and a backup are refused cleanly (507, nothing partial left), /_metrics and the admin status say the disk is full.
// The wrapper shell removes the filler on SIGUSR1: writes succeed again without a restart. After the server stops
// the wrapper copies the databases out of the tmpfs: integrity_check is ok on each, every acknowledged object is there.

import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/app.ts";
import { ROOT, type ServerProcess, startServerProcess } from "../helpers/spawn.ts";

const DISK_FULL = { error: "the server's disk is full: writes are refused until space is freed" };
const dir = tempDir("burrow-disk-full-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs "$@" with $1 (a directory) on a fresh 24 MB tmpfs holding a filler of $3 MB; SIGUSR1 removes the filler,
 * SIGTERM stops the server. Once the server has exited, its databases and a list of every file left in the data
 * directory are copied to $2 (outside the tmpfs, which goes away with the namespace).
 */
const WRAPPER = `
mnt="$1"; out="$2"; filler_mb="$3"; shift 3
mount -t tmpfs -o size=24m tmpfs "$mnt" || exit 97
dd if=/dev/zero of="$mnt/filler" bs=1M count="$filler_mb" 2>/dev/null || exit 98
trap 'rm -f "$mnt/filler"' USR1
"$@" &
child=$!
trap 'kill -TERM "$child"' TERM INT
code=0
while kill -0 "$child" 2>/dev/null; do wait "$child"; code=$?; done
mkdir -p "$out"
cp "$mnt"/burrow/*.db* "$out"/ 2>/dev/null
(cd "$mnt/burrow" && find . -type f | sort) > "$out/files.txt"
exit "$code"
`;

const UNSHARE = ["unshare", "--user", "--map-root-user", "--mount"];

/** Whether a tmpfs can be mounted in a namespace of our own here (as root, or with unprivileged user namespaces). */
function canMountTmpfs(): boolean {
  const probe = join(dir, "probe");
  mkdirSync(probe, { recursive: true });
  try {
    const r = Bun.spawnSync([...UNSHARE, "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$1"', "sh", probe], {
      stdout: "pipe",
      stderr: "pipe",
    });
    return r.exitCode === 0;
  } catch {
    return false;
  }
}

const mountable = canMountTmpfs();
if (!mountable) console.warn("disk-full.test.ts skipped: cannot mount a tmpfs in a user and mount namespace here (unshare -rm)");

const api = {
  "x-service-api-key": "disk-full-dev",
  accept: "application/vnd.service+json; version=0",
  "content-type": "application/json",
};

const upload = (bytes: number) =>
  `Content-Type: application/octet-stream\nContent-Disposition: attachment; filename=blob.bin\nContent-Transfer-Encoding: base64\n\n${Buffer.alloc(bytes, 7).toString("base64")}`;

async function metric(server: ServerProcess, name: string): Promise<number | null> {
  const text = await (await fetch(`${server.url}/_metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : null;
}

test.skipIf(!mountable)(
  "a full disk: writes answer 507, reads go on, nothing partial is left; freeing space lets writes succeed again",
  async () => {
    const mnt = join(dir, "mnt");
    const out = join(dir, "after");
    mkdirSync(mnt, { recursive: true });
    const env = {
      BURROW_DIR: join(mnt, "burrow"),
      BURROW_DEV_PUBLIC_KEY: api["x-service-api-key"],
      BURROW_ADMIN_EMAIL: "ops@example.com",
      BURROW_ADMIN_PASSWORD: "disk-full-password",
      BURROW_LOG_LEVEL: "error",
      BURROW_METRICS: "true",
    };
    const cmd = [...UNSHARE, "sh", "-c", WRAPPER, "sh", mnt, out, "16", process.execPath, join(ROOT, "src/main.ts")];
    const server = await startServerProcess(cmd, env);
    const acknowledged: string[] = [];
    let stopped = false;
    try {
      const adminLogin = (await (
        await fetch(`${server.url}/_admin/api/login`, {
          method: "POST",
          body: JSON.stringify({ email: env.BURROW_ADMIN_EMAIL, password: env.BURROW_ADMIN_PASSWORD }),
        })
      ).json()) as { token: string };
      const admin = { authorization: `Bearer ${adminLogin.token}` };
      expect((await fetch(`${server.url}/_push/tokens/androidgcm/device-1`, { method: "POST", headers: api, body: "{}" })).status).toBe(
        200,
      );
      const ann = { username: "ann", password: "ann-password" };
      expect((await fetch(`${server.url}/user`, { method: "POST", headers: api, body: JSON.stringify(ann) })).status).toBe(201);
      expect(await metric(server, "burrow_disk_full")).toBe(0);

      // Fill the disk: big objects until one is refused, then smaller ones, until even a small one is (bounded).
      const create = (text: string) => fetch(`${server.url}/note`, { method: "POST", headers: api, body: JSON.stringify({ text }) });
      const deadline = Date.now() + 30_000;
      for (const size of [96 * 1024, 8 * 1024, 512, 16]) {
        for (;;) {
          expect(Date.now()).toBeLessThan(deadline);
          const r = await create("x".repeat(size));
          if (r.status === 201) {
            acknowledged.push(((await r.json()) as { note_id: string }).note_id);
            continue;
          }
          expect(r.status).toBe(507);
          expect(await r.json()).toEqual(DISK_FULL);
          break;
        }
      }
      expect(acknowledged.length).toBeGreaterThan(20);

      // Reads keep working.
      const one = await fetch(`${server.url}/note/${acknowledged[0]}`, { headers: api });
      expect(one.status).toBe(200);
      expect(((await one.json()) as { text: string }).text.length).toBe(96 * 1024);
      const last = await fetch(`${server.url}/note/${acknowledged.at(-1)}`, { headers: api });
      expect(last.status).toBe(200);
      const listed = await fetch(`${server.url}/note`, { headers: api });
      expect(listed.status).toBe(200);

      // A login (it writes a session), an upload, an update, a push send and a backup are refused cleanly.
      const login = await fetch(`${server.url}/user/accessToken`, { method: "POST", headers: api, body: JSON.stringify(ann) });
      expect(login.status).toBe(507);
      expect(await login.json()).toEqual(DISK_FULL);
      const up = await fetch(`${server.url}/note`, {
        method: "POST",
        headers: api,
        body: JSON.stringify({ text: "file", file: upload(1024 * 1024) }),
      });
      expect(up.status).toBe(507);
      expect(await up.json()).toEqual(DISK_FULL);
      const put = await fetch(`${server.url}/note/${acknowledged[1]}`, {
        method: "PUT",
        headers: api,
        body: JSON.stringify({ text: "y".repeat(64 * 1024) }),
      });
      expect(put.status).toBe(507);
      const push = await fetch(`${server.url}/_push/notifications`, {
        method: "POST",
        headers: api,
        body: JSON.stringify({ payload: { message: "full" } }),
      });
      expect(push.status).toBe(507);
      expect(await push.json()).toEqual(DISK_FULL);
      const backup = await fetch(`${server.url}/_admin/api/backups`, { method: "POST", headers: admin, body: "{}" });
      expect(backup.status).toBe(507);
      expect(await backup.json()).toEqual(DISK_FULL);
      expect(
        ((await (await fetch(`${server.url}/_admin/api/backups`, { headers: admin })).json()) as { backups: unknown[] }).backups,
      ).toEqual([]);

      // The status figures and the metrics say so.
      expect(await metric(server, "burrow_disk_full")).toBe(1);
      expect(await metric(server, "burrow_disk_full_refusals_total")).toBeGreaterThanOrEqual(8);
      const status = (await (await fetch(`${server.url}/_admin/api/status`, { headers: admin })).json()) as {
        operations: { disk: { full: boolean; freeBytes: number; refusedWrites: number; lastFullAt: string | null } };
      };
      expect(status.operations.disk.full).toBe(true);
      expect(status.operations.disk.lastFullAt).not.toBeNull();
      expect(status.operations.disk.freeBytes).toBeNumber();

      // Free space (the wrapper removes the filler): writes succeed again, no restart.
      server.proc.kill("SIGUSR1");
      const freeBy = Date.now() + 10_000;
      while (((await metric(server, "burrow_disk_free_bytes")) ?? 0) < 8 * 1024 * 1024) {
        expect(Date.now()).toBeLessThan(freeBy);
        await Bun.sleep(100);
      }
      const again = await create("after the disk was freed");
      expect(again.status).toBe(201);
      acknowledged.push(((await again.json()) as { note_id: string }).note_id);
      expect(await metric(server, "burrow_disk_full")).toBe(0);
      const withFile = await fetch(`${server.url}/note`, {
        method: "POST",
        headers: api,
        body: JSON.stringify({ text: "file", file: upload(64 * 1024) }),
      });
      expect(withFile.status).toBe(201);
      acknowledged.push(((await withFile.json()) as { note_id: string }).note_id);
      const pushed = await fetch(`${server.url}/_push/notifications`, {
        method: "POST",
        headers: api,
        body: JSON.stringify({ payload: { message: "room again" } }),
      });
      expect(await pushed.json()).toEqual({ queued: 1 });
      const statusAfter = (await (await fetch(`${server.url}/_admin/api/status`, { headers: admin })).json()) as {
        operations: { disk: { full: boolean } };
      };
      expect(statusAfter.operations.disk.full).toBe(false);

      expect(await server.stop()).toBe(0);
      stopped = true;
    } finally {
      if (!stopped) await server.stop();
    }

    // Nothing partial was left: one uploaded file (the one after the space was freed), no temp file, no backup.
    const files = readFileSync(join(out, "files.txt"), "utf8").trim().split("\n");
    expect(files.filter((f) => f.startsWith("./files/"))).toEqual([
      expect.stringMatching(/^\.\/files\/development\/[0-9a-f]{32}\/blob\.bin$/),
    ]);
    expect(files.filter((f) => f.includes(".~") || f.endsWith(".tmp") || f.endsWith(".partial") || f.startsWith("./backups/"))).toEqual([]);

    // Every database is whole, and every acknowledged write is there.
    for (const name of ["system.db", "development.db", "production.db"]) {
      expect(existsSync(join(out, name))).toBe(true);
      const db = new Database(join(out, name));
      try {
        expect(db.query("PRAGMA integrity_check").values()).toEqual([["ok"]]);
        if (name === "development.db") {
          const ids = new Set(
            db
              .query("SELECT note_id FROM o_note")
              .values()
              .map((r) => r[0] as string),
          );
          expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
          expect(db.query("SELECT count(*) FROM _burrow_push_notifications").values()).toEqual([[1]]);
          expect(db.query("SELECT count(*) FROM _burrow_files").values()).toEqual([[1]]);
        }
      } finally {
        db.close();
      }
    }
  },
  90_000,
);
