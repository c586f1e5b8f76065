// Crash safety: the server is killed with SIGKILL under concurrent writes 20 times and
// started again on the same data directory. Every write it acknowledged with a 2xx must be there after the
// restart, and every database must pass PRAGMA integrity_check at the end. Burrow runs SQLite in WAL mode with
// synchronous=NORMAL: a commit is in the WAL file (the operating system's cache) before the answer is sent, so
// a killed process loses nothing it acknowledged; only a power loss or OS crash may lose the last commits.

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
