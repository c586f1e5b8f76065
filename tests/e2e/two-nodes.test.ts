// Two Burrow nodes on one libSQL server behind HAProxy, all real processes on loopback: sqld (namespaces on),
// s3rver as the shared file store, two `burrow serve --store` nodes, HAProxy from Debian (scripts/install-haproxy.mjs)
// balancing round-robin. Checked through the balancer and against each node: CRUD and queries, a MAC request replayed
// on the other node, a logout on one node honoured by the other, a rate limit counted across both, a schema change
// and a deploy made on one node served by the other within a second, exact counters from both, live events and
// channel messages crossing from one node to a stream on the other, a backup made on one
// node while the other writes (every acknowledged write in it, restored onto new namespaces), a custom code job
// scheduled every minute run once per occurrence by the two, and a push broadcast to 10,000 devices with one node
// killed (kill -9) halfway.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/db/open-store.ts";
import { restoreToStore } from "../../src/backup/restore-to-store.ts";
import { formatUpload } from "../../src/files/upload.ts";
import { tempDir } from "../helpers/app.ts";
import { collapseKeysByToken, startFcmFake, type FcmFake } from "../helpers/fcm-fake.ts";
import { freePort, startLoopbackProcess, type LoopbackProcess } from "../helpers/loopback-process.ts";
import { startS3 } from "../helpers/s3rver.ts";
import { macAuth } from "../helpers/sign.ts";
import { EventReader } from "../helpers/live.ts";
import { type ServerProcess, ROOT, startServerProcess } from "../helpers/spawn.ts";
import { type Sqld, startSqld } from "../helpers/sqld.ts";

// Every test sets its own time limit: logins hash passwords and the checks wait out the nodes' refresh, which
// takes longer than bun's default 5 s when the machine is busy.

const SOURCE = [process.execPath, join(ROOT, "src/main.ts")];
const DEV_KEY = "two-nodes-dev-public";
const PROD_KEY = "two-nodes-prod-public";
const ADMIN = { email: "ops@example.com", password: "two-nodes-password" };
const dir = tempDir("burrow-two-nodes-");

let sqld: Sqld;
let s3: Awaited<ReturnType<typeof startS3>>;
let fcm: FcmFake;
let haproxy: LoopbackProcess;
const nodes: ServerProcess[] = [];
/** The balancer's address as clients see it (what MAC signatures cover). */
let lb: { url: string; host: string; port: number };
let adminToken = "";

function nodeEnv(name: string): Record<string, string> {
  return {
    BURROW_DIR: join(dir, name),
    BURROW_STORE: sqld.url,
    BURROW_STORE_ADMIN_URL: sqld.adminUrl!,
    BURROW_STORE_NAMESPACE: "app",
    BURROW_DEV_PUBLIC_KEY: DEV_KEY,
    BURROW_DEV_PRIVATE_KEY: "two-nodes-dev-private",
    BURROW_PROD_PUBLIC_KEY: PROD_KEY,
    BURROW_PROD_PRIVATE_KEY: "two-nodes-prod-private",
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_LOG_LEVEL: "warn",
  };
}

beforeAll(async () => {
  const bin = execFileSync("node", [join(ROOT, "scripts/install-haproxy.mjs")], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  [sqld, s3, fcm] = await Promise.all([startSqld({ namespaces: true }), startS3(), startFcmFake()]);
  // One after the other: the first creates the namespaces.
  nodes.push(await startServerProcess(SOURCE, nodeEnv("a")));
  nodes.push(await startServerProcess(SOURCE, nodeEnv("b")));
  const port = freePort();
  const servers = nodes.map((n, i) => `  server n${i} ${new URL(n.url).host} check inter 200 fall 2 rise 1`).join("\n");
  const cfg = join(dir, "haproxy.cfg");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    cfg,
    `global\n  maxconn 2000\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 30s\n  timeout server 30s\n  retries 2\n  option redispatch\n` +
      `frontend api\n  bind 127.0.0.1:${port}\n  default_backend nodes\nbackend nodes\n  balance roundrobin\n  option httpchk GET /_health\n${servers}\n`,
  );
  haproxy = await startLoopbackProcess({
    name: "haproxy",
    argv: () => [bin, "-f", cfg, "-db"],
    ready: async () => (await fetch(`http://127.0.0.1:${port}/_health`, { signal: AbortSignal.timeout(1000) })).ok,
  });
  lb = { url: `http://127.0.0.1:${port}`, host: "127.0.0.1", port };
  const login = await fetch(`${lb.url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) });
  adminToken = ((await login.json()) as { token: string }).token;
  // Files go to S3, shared by both nodes.
  const files = {
    store: "s3",
    s3: { endpoint: s3.endpoint, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, region: "us-east-1" },
  };
  for (const env of ["development", "production"]) expect((await admin("PUT", `/settings/${env}`, { files })).status).toBe(200);
  // The node that did not take a PUT serves the new settings once its next look is due (at most 0.4 s).
  await Bun.sleep(1000);
}, 120_000);

afterAll(async () => {
  await haproxy?.stop();
  for (const n of nodes) await n.stop().catch(() => {});
  fcm?.stop();
  await s3?.stop();
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function admin(method: string, path: string, body?: unknown, base = lb.url): Promise<Response> {
  return fetch(`${base}/_admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Upload development's custom code through `base` (the balancer unless a node is named). */
function uploadCode(source: string, base = lb.url): Promise<Response> {
  return fetch(`${base}/_admin/api/code`, {
    method: "PUT",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/javascript" },
    body: source,
  });
}

/** A development API call through `base` (the balancer unless a node is named), presenting the balancer's Host. */
async function api(
  method: string,
  path: string,
  opts: { base?: string; body?: unknown; headers?: Record<string, string>; version?: number } = {},
) {
  const version = opts.version ?? 0;
  const res = await fetch(`${opts.base ?? lb.url}${path}`, {
    method,
    headers: {
      host: `${lb.host}:${lb.port}`,
      "x-service-api-key": version === 0 ? DEV_KEY : PROD_KEY,
      accept: `application/vnd.service+json; version=${version}`,
      "content-type": "application/json",
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

const signed = (creds: { access_token: string; mac_key: string }, method: string, path: string, nonce?: string) => ({
  authorization: macAuth(creds, method, path, { host: lb.host, port: lb.port, nonce }),
});

test("CRUD and queries through the balancer; binary files land in the shared S3 store", async () => {
  expect(
    (await admin("PUT", "/schemas/note", { fields: { title: { type: "string" }, n: { type: "integer" }, pic: { type: "binary" } } }))
      .status,
  ).toBe(201);
  for (let i = 0; i < 20; i++)
    expect((await api("POST", "/note", { body: { note_id: `n${i}`, title: `note ${i}`, n: i } })).status).toBe(201);
  const [a, b] = nodes.map((n) => n.url);
  // Each node reads what the other wrote.
  expect((await api("GET", "/note/n3", { base: a })).body).toMatchObject({ note_id: "n3", n: 3 });
  expect((await api("GET", "/note/n4", { base: b })).body).toMatchObject({ note_id: "n4", n: 4 });
  const page = await api("GET", `/note?${new URLSearchParams({ "n[gte]": "10" })}`, {
    headers: { "x-service-orderby": "n:desc", range: "objects=0-4" },
  });
  expect(page.status).toBe(206);
  expect(page.body.map((o: { n: number }) => o.n)).toEqual([19, 18, 17, 16, 15]);
  expect((await api("PUT", "/note/n5", { base: b, body: { title: "changed on b" } })).status).toBe(200);
  expect((await api("GET", "/note/n5", { base: a })).body.title).toBe("changed on b");
  // A file uploaded through node a is served by node b (both use S3).
  const bytes = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 1, 2, 3]);
  const up = await api("PUT", "/note/n6", { base: a, body: { pic: formatUpload("image/png", "file.png", bytes) } });
  expect(up.status).toBe(200);
  const url = new URL(up.body.pic as string);
  const file = await fetch(`${b}${url.pathname}`);
  expect(file.status).toBe(200);
  expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);
  expect((await api("DELETE", "/note/n7", { base: b })).status).toBe(200);
  expect((await api("GET", "/note/n7", { base: a })).status).toBe(404);
}, 30_000);

test("rate limits count requests on both nodes together", async () => {
  const [a, b] = nodes.map((n) => n.url);
  expect((await admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 10 } })).status).toBe(200);
  await Bun.sleep(1000); // both nodes have the new setting
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await api("POST", "/user/accessToken", {
      base: i % 2 === 0 ? a : b,
      body: { username: "nobody", password: "wrong-password" },
    });
    statuses.push(r.status);
  }
  // Exactly ten got an answer about the password (401); the other ten were refused by the shared limit.
  expect(statuses.filter((s) => s === 429).length).toBe(10);
  expect(statuses.slice(0, 10).every((s) => s !== 429)).toBe(true);
  expect((await admin("PUT", "/settings/development", { rateLimits: { ipPerMinute: 300 } })).status).toBe(200);
  await Bun.sleep(1000); // both nodes are back on the default before the next login
}, 30_000);

test("sessions: a MAC request replayed on the other node is refused; a logout on b is honoured by a within a second", async () => {
  const [a, b] = nodes.map((n) => n.url);
  expect((await api("POST", "/user", { body: { username: "ann", password: "ann-password" } })).status).toBe(201);
  const login = await api("POST", "/user/accessToken", { base: a, body: { username: "ann", password: "ann-password" } });
  expect(login.status).toBe(200);
  const creds = login.body as { access_token: string; mac_key: string };
  const headers = signed(creds, "GET", "/note/n1", `replay-${Date.now()}`);
  expect((await api("GET", "/note/n1", { base: a, headers })).status).toBe(200);
  const replay = await api("GET", "/note/n1", { base: b, headers });
  expect(replay.status).toBe(401);
  expect(replay.body.error).toContain("replayed");

  // Logged in on a (its session cached there), logged out on b, refused on a within a second.
  expect((await api("GET", "/note/n1", { base: a, headers: signed(creds, "GET", "/note/n1") })).status).toBe(200);
  expect((await api("GET", "/user/logout", { base: b, headers: signed(creds, "GET", "/user/logout") })).status).toBe(200);
  await Bun.sleep(1000);
  expect((await api("GET", "/note/n1", { base: a, headers: signed(creds, "GET", "/note/n1") })).status).toBe(401);
}, 30_000);

test("a schema change and a deploy made on one node are served by the other within a second", async () => {
  const [a, b] = nodes.map((n) => n.url);
  expect((await api("GET", "/gadget", { base: b })).status).toBe(404);
  expect((await admin("PUT", "/schemas/gadget", { fields: { name: { type: "string" } } }, a)).status).toBe(201);
  await Bun.sleep(1000);
  expect((await api("POST", "/gadget", { base: b, body: { name: "served by b" } })).status).toBe(201);

  const deploy = await admin("POST", "/deploy", {}, a);
  expect(deploy.status).toBe(200);
  const version = ((await deploy.json()) as { version: number }).version;
  await Bun.sleep(1000);
  const r = await api("POST", "/gadget", { base: b, version, body: { name: "production on b" } });
  expect(r.status).toBe(201);
}, 30_000);

test("counters incremented from both nodes at once are exact", async () => {
  const [a, b] = nodes.map((n) => n.url);
  expect((await admin("PUT", "/schemas/counter", { fields: { hits: { type: "integer" } } })).status).toBe(201);
  await Bun.sleep(1000);
  expect((await api("POST", "/counter", { base: a, body: { counter_id: "c", hits: 0 } })).status).toBe(201);
  let errors = 0;
  await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      for (let k = 0; k < 25; k++) {
        const r = await api("PUT", "/counter/c", { base: i % 2 === 0 ? a : b, body: { "hits[inc]": 1 } });
        if (r.status !== 200) {
          errors++;
          if (errors === 1) console.error("counter increment refused:", r.status, JSON.stringify(r.body));
        }
      }
    }),
  );
  expect(errors).toBe(0);
  expect((await api("GET", "/counter/c", { base: b })).body.hits).toBe(500);
}, 60_000);

test("live: a write on one node reaches a stream on the other within a second; a channel message too; a reconnect to the other node replays", async () => {
  const [a, b] = nodes.map((n) => n.url);
  const code = `export const methods = [{ name: "shout", async execute(r, s) { await s.live.publish("public:room", JSON.parse(r.body)); return { body: {} }; } }];`;
  expect((await uploadCode(code)).status).toBe(200);
  const created = await api("POST", "/_live/streams", { base: a });
  expect(created.status).toBe(201);
  const { stream, token } = created.body as { stream: string; token: string };
  // The subscription is written through b, the stream is read from b, the write goes through a.
  expect(
    (await api("PUT", `/_live/streams/${stream}/subscriptions/notes`, { base: b, body: { schema: "note", query: "n[gte]=100" } })).status,
  ).toBe(200);
  expect((await api("PUT", `/_live/streams/${stream}/channels/public:room`, { base: a })).status).toBe(200);
  const onB = new EventReader(await fetch(`${b}/_live/streams/${stream}?token=${token}`));
  expect((await onB.next())!.event).toBe("ready");
  await Bun.sleep(500); // b has code and settings of the latest epoch
  const t0 = performance.now();
  expect((await api("POST", "/note", { base: a, body: { note_id: "live1", n: 100 } })).status).toBe(201);
  const [ev] = await onB.take(1, 2000);
  const ms = performance.now() - t0;
  expect([ev!.event, ev!.data.object.note_id]).toEqual(["create", "live1"]);
  expect(ms).toBeLessThan(1000);
  expect((await api("POST", "/shout", { base: a, body: { typing: "ann" } })).status).toBe(200);
  expect((await onB.take(1, 2000))[0]).toEqual({ id: null, event: "message", data: { channel: "public:room", data: { typing: "ann" } } });
  await onB.close();
  // Disconnected: writes go on; reconnecting to the other node replays them from the shared log.
  expect((await api("PUT", "/note/live1", { base: b, body: { n: 101 } })).status).toBe(200);
  expect((await api("DELETE", "/note/live1", { base: b })).status).toBe(200);
  const onA = new EventReader(await fetch(`${a}/_live/streams/${stream}?token=${token}`, { headers: { "last-event-id": String(ev!.id) } }));
  expect((await onA.next())!.event).toBe("ready");
  expect((await onA.take(2, 2000)).map((e) => e.event)).toEqual(["update", "delete"]);
  await onA.close();
}, 30_000);

test("a backup made on a while b writes holds every write b had acknowledged, and restores onto new namespaces", async () => {
  const [a, b] = nodes.map((n) => n.url);
  expect((await admin("PUT", "/schemas/entry", { fields: { seq: { type: "integer" } } }, a)).status).toBe(201);
  await Bun.sleep(1000);
  const acked: number[] = [];
  let stop = false;
  let failures = 0;
  const writer = (async () => {
    for (let seq = 1; seq <= 3000 && !stop; seq++) {
      const r = await api("POST", "/entry", { base: b, body: { seq } });
      if (r.status === 201) acked.push(seq);
      else failures++;
    }
  })();
  while (acked.length < 20) await Bun.sleep(5);
  const before = acked.length;
  const made = await admin("POST", "/backups", {}, a);
  const after = acked.length;
  stop = true;
  await writer;
  expect(made.status).toBe(201);
  expect(failures).toBe(0);
  expect(after).toBeGreaterThan(before); // b's writes went on while the backup was made
  const file = join(dir, "a", ((await made.json()) as { file: string }).file);

  const location = { dir: join(dir, "restored"), url: sqld.url, authToken: null, namespace: "restored", adminUrl: sqld.adminUrl };
  await restoreToStore(file, location);
  const restored = await openStore(location);
  try {
    const rs = await restored.development.execute("SELECT seq FROM o_entry ORDER BY seq");
    const seqs = rs.rows.map((r) => Number(r.seq));
    // Every write acknowledged before the backup started is in it, and what is in it is a prefix of b's writes.
    expect(seqs.length).toBeGreaterThanOrEqual(before);
    expect(seqs.length).toBeLessThanOrEqual(after);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  } finally {
    restored.close();
  }
}, 60_000);

test("hooks: writes on both nodes run the before-hook and each change's after-hook once", async () => {
  const [a, b] = nodes.map((n) => n.url);
  const open = { create: "open", read: "open", update: "open", delete: "open" };
  expect(
    (await admin("PUT", "/schemas/hooked", { fields: { n: { type: "integer" }, tag: { type: "string" } }, permissions: open }, a)).status,
  ).toBe(201);
  expect(
    (await admin("PUT", "/schemas/hook_audit", { fields: { ref: { type: "string" }, change: { type: "integer" } }, permissions: open }, a))
      .status,
  ).toBe(201);
  const code = `export const hooks = { hooked: {
    beforeCreate(c) { if (c.object.n < 0) throw reject(422, "n is not negative"); return { ...c.object, tag: "hooked" }; },
    async afterCreate(c, s) { await s.data.create("hook_audit", { ref: c.key, change: c.id }); },
  } };`;
  const up = await fetch(`${a}/_admin/api/code`, {
    method: "PUT",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/javascript" },
    body: code,
  });
  expect(up.status).toBe(200);
  await Bun.sleep(1000);
  const made: string[] = [];
  for (let i = 0; i < 100; i++) {
    const r = await api("POST", "/hooked", { base: i % 2 === 0 ? a : b, body: { n: i } });
    expect([r.status, r.body.tag]).toEqual([201, "hooked"]);
    made.push(r.body.hooked_id);
  }
  expect((await api("POST", "/hooked", { base: b, body: { n: -1 } })).status).toBe(422);
  let audits: { ref: string; change: number }[] = [];
  for (let i = 0; i < 100 && audits.length < made.length; i++) {
    await Bun.sleep(100);
    audits = (await (await admin("GET", "/data/development/hook_audit", undefined, b)).json()) as typeof audits;
  }
  await Bun.sleep(500);
  audits = (await (await admin("GET", "/data/development/hook_audit", undefined, a)).json()) as typeof audits;
  expect(audits.length).toBe(made.length);
  expect(new Set(audits.map((x) => x.ref))).toEqual(new Set(made));
  expect(new Set(audits.map((x) => x.change)).size).toBe(made.length);
  expect((await admin("DELETE", "/code", undefined, a)).status).toBe(200);
}, 120_000);

test("a job scheduled every minute runs once per occurrence across both nodes", async () => {
  const [a, b] = nodes.map((n) => n.url);
  expect((await admin("PUT", "/schemas/beat", { fields: { occurrence: { type: "string" }, run: { type: "string" } } }, a)).status).toBe(
    201,
  );
  const code = `export const jobs = [{ name: "beat", schedule: "* * * * *", async run(job, s) { await s.data.create("beat", { occurrence: job.occurrence, run: job.run }); } }];`;
  expect((await uploadCode(code, a)).status).toBe(200);
  // Both nodes have the code within a second; from then on every occurrence is theirs to race for. A real minute
  // passes per occurrence: two are waited for.
  await Bun.sleep(1000);
  const since = Date.now();
  type Run = { id: string; occurrence: string; trigger: string; status: string };
  let runs: Run[] = [];
  for (let i = 0; i < 150; i++) {
    const listed = (await (await admin("GET", "/jobs?env=development", undefined, i % 2 === 0 ? a : b)).json()) as {
      jobs: { runs: Run[] }[];
    };
    runs = listed.jobs[0]!.runs.filter((r) => Date.parse(r.occurrence) > since);
    if (runs.filter((r) => r.status === "ok").length >= 2) break;
    await Bun.sleep(1000);
  }
  const done = runs.filter((r) => r.status === "ok");
  expect(done.length).toBeGreaterThanOrEqual(2);
  // One row per occurrence (a node that lost the race records nothing), each a scheduled run that ended well.
  expect(new Set(runs.map((r) => r.occurrence)).size).toBe(runs.length);
  expect(runs.filter((r) => r.status !== "running").map((r) => [r.trigger, r.status])).toEqual(done.map(() => ["schedule", "ok"]));
  // Each ran once: one object per occurrence, written by that run.
  const objects = (await (await admin("GET", "/data/development/beat", undefined, b)).json()) as { occurrence: string; run: string }[];
  for (const r of done) expect(objects.filter((o) => o.occurrence === r.occurrence).map((o) => o.run)).toEqual([r.id]);
  expect((await admin("DELETE", "/code", undefined, a)).status).toBe(200);
}, 180_000);

test("a broadcast to 10,000 devices reaches every one once with a node killed halfway", async () => {
  const N = 10_000;
  const push = { concurrency: 50, fcm: { serviceAccount: fcm.account.json, url: fcm.url } };
  expect((await admin("PUT", "/settings/development", { push })).status).toBe(200);
  // The devices, registered straight into the shared store (registration is not what this checks).
  const store = await openStore({ dir, url: sqld.url, authToken: null, namespace: "app", adminUrl: null });
  try {
    const now = Date.now();
    for (let i = 0; i < N; i += 1000) {
      const rows = Array.from({ length: 1000 }, (_, k) => `device-${i + k}`);
      await store.development.execute({
        sql: `INSERT INTO _burrow_push_tokens (type, token, user, created) VALUES ${rows.map(() => "('androidgcm', ?, NULL, ?)").join(", ")}`,
        args: rows.flatMap((t) => [t, now]),
      });
    }
  } finally {
    store.close();
  }
  await Bun.sleep(1000); // both nodes have the push settings
  fcm.delayMs = 5;
  const sent = await fetch(`${lb.url}/_push/notifications`, {
    method: "POST",
    headers: { "x-service-api-key": DEV_KEY, accept: "application/vnd.service+json; version=0", "content-type": "application/json" },
    body: JSON.stringify({ payload: { message: "to everyone" } }),
  });
  expect(await sent.json()).toEqual({ queued: N });
  const half = Date.now() + 60_000;
  while (fcm.deliveries.length < N / 2 && Date.now() < half) await Bun.sleep(10);
  expect(fcm.deliveries.length).toBeGreaterThanOrEqual(N / 2);
  nodes[0]!.proc.kill("SIGKILL");
  await nodes[0]!.proc.exited;
  const atKill = fcm.deliveries.length;

  // Node b finishes the queue, taking over a's leases once they run out (15 s on a shared store).
  const deadline = Date.now() + 60_000;
  while (new Set(fcm.deliveries.map((d) => d.token)).size < N && Date.now() < deadline) await Bun.sleep(50);
  const byToken = collapseKeysByToken(fcm.deliveries);
  expect(byToken.size).toBe(N);
  // A device got a second copy only if a had sent it but not yet recorded it when it died: at most a's sends in
  // flight (50) and its outcomes waiting to be recorded (a chunk, 50); the copy carries the same collapse key.
  const twice = [...byToken.values()].filter((keys) => keys.length > 1);
  expect(twice.length).toBeLessThanOrEqual(100);
  for (const keys of twice) expect(new Set(keys).size).toBe(1);
  expect([...byToken.values()].every((keys) => keys.length <= 2)).toBe(true);
  console.error(
    `two nodes, kill -9 halfway: ${atKill} delivered at the kill, ${N} devices reached, ${twice.length} got the same notification twice (same collapse key)`,
  );
}, 150_000);
