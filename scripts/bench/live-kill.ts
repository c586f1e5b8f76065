// kill -9 during a burst of writes, for scripts/bench/live.ts: streams connected through raw-socket clients
// (scripts/bench/live-clients.ts), a writer creating numbered objects one after the other, the server killed
// halfway and started again on the same port and data directory; the clients reconnect with Last-Event-ID as
// EventSource does. Every acknowledged write must reach every stream exactly once.

import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../tests/helpers/app.ts";
import { freePort } from "../../tests/helpers/loopback-process.ts";
import { startClients } from "./live-client-process.ts";

const KEY = "bench-kill-public-key";
const ADMIN = { email: "bench@example.com", password: "bench-password" };

export async function killDuringBurst(exe: string, streams = 200, writes = 600) {
  const dir = tempDir("burrow-live-kill-");
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const headers = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" };
  const start = async () => {
    const proc = Bun.spawn([exe, "serve", "--http", `127.0.0.1:${port}`], {
      env: {
        PATH: process.env.PATH ?? "",
        BURROW_DIR: join(dir, "data"),
        BURROW_DEV_PUBLIC_KEY: KEY,
        BURROW_ADMIN_EMAIL: ADMIN.email,
        BURROW_ADMIN_PASSWORD: ADMIN.password,
        BURROW_LOG_LEVEL: "warn",
      },
      stdout: "ignore",
      stderr: "inherit",
    });
    for (let i = 0; i < 400; i++) {
      try {
        if ((await fetch(`${url}/_health`)).ok) return proc;
      } catch {}
      await Bun.sleep(25);
    }
    throw new Error("the server did not start");
  };
  let server = await start();
  const { ask, stop: stopClients } = startClients();
  try {
    const token = (
      (await (await fetch(`${url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) })).json()) as { token: string }
    ).token;
    const admin = (path: string, body: unknown) =>
      fetch(`${url}/_admin/api${path}`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
    await admin("/settings/development", { live: { streamsPerIp: 20_000 } });
    await admin("/schemas/burst", { fields: { seq: { type: "string" } } });
    const pairs: [string, string][] = [];
    for (let i = 0; i < streams; i++) {
      const s = (await (await fetch(`${url}/_live/streams`, { method: "POST", headers })).json()) as { stream: string; token: string };
      await fetch(`${url}/_live/streams/${s.stream}/subscriptions/all`, {
        method: "PUT",
        headers,
        body: JSON.stringify({ schema: "burst" }),
      });
      pairs.push([s.stream, s.token]);
    }
    await ask({ cmd: "open", url, streams: pairs });
    const acked: number[] = [];
    let beforeKill = 0;
    let killedAt = 0;
    let backAt = 0;
    let reconnectMs = 0;
    for (let seq = 1; acked.length < writes; seq++) {
      if (acked.length === writes / 2 && killedAt === 0) {
        server.kill(9);
        await server.exited;
        killedAt = performance.now();
        beforeKill = acked.length;
        server = await start();
        backAt = performance.now();
        for (let i = 0; i < 400 && (await ask({ cmd: "count" })).connected < streams; i++) await Bun.sleep(25);
        reconnectMs = performance.now() - backAt;
      }
      try {
        const r = await fetch(`${url}/burst`, { method: "POST", headers, body: JSON.stringify({ seq: `s${seq}-` }) });
        if (r.status === 201) acked.push(seq);
      } catch {
        // the server is down: this write was not acknowledged
      }
    }
    let result = await ask({ cmd: "seqs", list: acked });
    for (let i = 0; i < 40 && result.missing > 0; i++) {
      await Bun.sleep(100);
      result = await ask({ cmd: "seqs", list: acked });
    }
    return {
      streams,
      acknowledged: acked.length,
      beforeKill,
      missing: result.missing as number,
      duplicates: result.duplicates as number,
      reconnectMs,
      downMs: backAt - killedAt,
    };
  } finally {
    stopClients();
    server.kill();
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
