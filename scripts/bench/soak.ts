// Soak: "nothing grows over time". The built binary (`burrow serve --metrics` on loopback, a fresh temp data
// directory) under a moderate, steady, mixed load for an hour by default: reads by key, queries, creates and deletes
// (a rolling window, so the data set stays the same size), counter increments, file uploads (and their deletes), a
// custom code method, logins (OAuth 2.0 password grant, bearer) and logouts, a few SSE live streams held open the
// whole time (reconnected when dropped), and a push broadcast every few minutes to the loopback provider fakes
// (scripts/bench/push-fakes.ts). Every 10 s: the server's RSS (/proc), JS heap (/_metrics), open descriptors
// (/proc/<pid>/fd, sockets apart), the WAL files' sizes and the client-side request p99 of those 10 s. At the end:
// a table, the raw samples as CSV, and the targets - RSS slope after warm-up < 1 MB per 10 min, p99 of the last
// period within 1.2x of the first, descriptors flat, WAL bounded by SQLite's checkpoint size.
// The load is open-loop at a fixed rate (requests are started on a clock, not when the previous one answers); when
// the server falls behind and MAX_IN_FLIGHT requests are pending, new ones are skipped and counted.
// Usage: bun run scripts/bench/soak.ts [--minutes 60] [--rate 400] [--streams 4] [--tokens 3000]
//        [--push-every-min 5] [--build] [--binary path] [--no-pin] [--csv path] [--write]

import { Database } from "bun:sqlite";
import { appendFileSync, existsSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { formatUpload } from "../../src/files/upload.ts";
import { normalizeToken } from "../../src/push/tokens.ts";
import { tempDir } from "../../tests/helpers/app.ts";
import { ensureBinary, machine, processCpuSeconds, table, writeSection } from "./env.ts";
import { pushSettingsFor, startPushFakes } from "./push-fakes-client.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "60" },
    rate: { type: "string", default: "400" },
    streams: { type: "string", default: "4" },
    tokens: { type: "string", default: "3000" },
    "push-every-min": { type: "string", default: "5" },
    build: { type: "boolean", default: false },
    binary: { type: "string" },
    "no-pin": { type: "boolean", default: false },
    csv: { type: "string" },
    write: { type: "boolean", default: false },
    // Override shares of the mix, e.g. `--mix read=0.5,create=0.5` (others 0): to find which part of the mix grows.
    mix: { type: "string" },
  },
});
const MINUTES = Math.min(24 * 60, Math.max(1, Number(values.minutes)));
const RATE = Math.min(2000, Math.max(20, Number(values.rate)));
const STREAMS = Math.min(50, Math.max(1, Number(values.streams)));
const TOKENS = Math.min(50_000, Math.max(100, Number(values.tokens)));
// A broadcast every N minutes; short runs get at least two.
const PUSH_EVERY_MS = Math.max(20_000, Math.min(Number(values["push-every-min"]) * 60_000, (MINUTES * 60_000) / 3));
const SAMPLE_MS = 10_000;
const MAX_IN_FLIGHT = 64;
const SEED = 10_000;
const CREATE_WINDOW = 1000; // created objects kept before the oldest is deleted
const FILE_WINDOW = 100; // uploaded files kept before the oldest is deleted
const USERS = 50;
const started = new Date();
const csvPath = values.csv ?? `/tmp/burrow-soak-${started.toISOString().replace(/[:.]/g, "-")}.csv`;

// The server on core 0, everything else (this driver, the fakes) on the other cores, as in push.ts.
const cores = navigator.hardwareConcurrency;
const pin = !values["no-pin"] && cores >= 2 && Bun.which("taskset") !== null;
if (pin) Bun.spawnSync(["taskset", "-pc", `1-${cores - 1}`, String(process.pid)], { stdout: "ignore" });
const exe = values.binary ?? ensureBinary(values.build!);
const log = (s: string) => console.error(`[${((Date.now() - started.getTime()) / 1000).toFixed(0).padStart(5)} s] ${s}`);

// ---- the server --------------------------------------------------------------------------------------------------

const KEY = "bench-soak-dev-key";
const ADMIN = { email: "bench@example.com", password: "bench-password" };
const dir = tempDir("burrow-bench-soak-");
const dataDir = join(dir, "data");
const serverLog = join(dir, "server.log");
const serverProc = Bun.spawn([...(pin ? ["taskset", "-c", "0"] : []), exe, "serve", "--http", "127.0.0.1:0", "--metrics"], {
  env: {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    BURROW_DIR: dataDir,
    BURROW_DEV_PUBLIC_KEY: KEY,
    BURROW_ADMIN_EMAIL: ADMIN.email,
    BURROW_ADMIN_PASSWORD: ADMIN.password,
    BURROW_LOG_LEVEL: "warn",
    // Load shedding stays as shipped (on): a steady moderate load must never be shed; the figures show if it was.
  },
  stdout: "pipe",
  stderr: Bun.file(serverLog),
});
const pid = serverProc.pid;
let url = "";
{
  const reader = serverProc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 20_000;
  while (!url) {
    const next = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null)]);
    if (!next || next.done) throw new Error(`server did not start: ${out} ${existsSync(serverLog) ? readFileSync(serverLog, "utf8") : ""}`);
    out += new TextDecoder().decode(next.value);
    url = /serving (http:\/\/[^\s]+)/.exec(out)?.[1] ?? "";
  }
  reader.releaseLock();
  // Keep draining stdout so the server never blocks on a full pipe.
  void (async () => {
    for await (const _ of serverProc.stdout as ReadableStream<Uint8Array>) {
    }
  })().catch(() => {});
  while ((await fetch(`${url}/_health`).catch(() => null))?.status !== 200) {
    if (Date.now() > deadline) throw new Error("server never became healthy");
    await Bun.sleep(10);
  }
}
const api = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" };
const form = { ...api, "content-type": "application/x-www-form-urlencoded" };
const adminToken = (
  (await (await fetch(`${url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) })).json()) as { token: string }
).token;
async function admin(method: string, path: string, body: string, type = "application/json"): Promise<void> {
  const r = await fetch(`${url}/_admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": type },
    body,
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
}

// ---- the push provider fakes -------------------------------------------------------------------------------------

const { fakes, proc: fakesProc } = await startPushFakes();
const pushReached = async () => {
  const s = (await (await fetch(`${fakes.control}/stats`)).json()) as Record<"ios" | "android" | "web", { deliveries: number }>;
  return s.ios.deliveries + s.android.deliveries + s.web.deliveries;
};

// ---- setup -------------------------------------------------------------------------------------------------------

const BUNDLE = `
export const methods = [
  { name: "soak_read", params: ["id"], async execute(r, s) { return { body: await s.data.read("soak_item", r.params.id) }; } },
];`;
const TAGS = 20;
const seedKeys: string[] = [];
let livePageSize = 4096;
{
  const t0 = performance.now();
  await admin(
    "PUT",
    "/settings/development",
    JSON.stringify({
      // All load comes from one address: the per-IP limits would stop it at once.
      rateLimits: { ipPerMinute: 1_000_000, failedLoginsPerAccount: 1_000_000, signupsPerIpPerHour: 1_000_000 },
      push: pushSettingsFor(fakes),
    }),
  );
  await admin(
    "PUT",
    "/schemas/soak_item",
    JSON.stringify({ fields: { title: { type: "string" }, n: { type: "integer" }, tag: { type: "string" }, hits: { type: "integer" } } }),
  );
  await admin("PUT", "/schemas/soak_file", JSON.stringify({ fields: { name: { type: "string" }, data: { type: "binary" } } }));
  for (let i = 0; i < SEED; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, SEED - i) }, (_, j) => ({
      title: `object ${i + j}`,
      n: i + j,
      tag: `t${(i + j) % TAGS}`,
      hits: 0,
    }));
    const r = (await (await fetch(`${url}/soak_item`, { method: "POST", headers: api, body: JSON.stringify(batch) })).json()) as {
      succeeded: string[];
      failed: unknown[];
    };
    if (r.failed.length) throw new Error(`seeding: ${r.failed.length} failed`);
    seedKeys.push(...r.succeeded);
  }
  for (let i = 0; i < USERS; i += 20) {
    const batch = Array.from({ length: Math.min(20, USERS - i) }, (_, j) => ({ username: `u${i + j}`, password: "bench-password-1" }));
    const r = await fetch(`${url}/user`, { method: "POST", headers: api, body: JSON.stringify(batch) });
    if (!r.ok) throw new Error(`users: ${r.status} ${await r.text()}`);
  }
  await admin("PUT", "/code", BUNDLE, "application/javascript");
  // Push devices, mixed platforms, through the API.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < TOKENS) {
        const i = next++;
        const x = ((i * 2654435761) >>> 0) / 2 ** 32;
        let path: string;
        let body: unknown = { user: `u${i % USERS}` };
        if (x < 0.6) path = `/_push/tokens/ios/${i.toString(16).padStart(64, "0")}`;
        else if (x < 0.9) path = `/_push/tokens/androidgcm/soak-android-${i}`;
        else {
          const sub = {
            endpoint: `${fakes.web.url}/push/${i.toString(16).padStart(24, "0")}`,
            keys: { p256dh: fakes.web.p256dh, auth: fakes.web.auth },
          };
          normalizeToken("web", sub); // throws on a subscription the server would refuse
          path = "/_push/tokens/web/x";
          body = { user: `u${i % USERS}`, subscription: sub };
        }
        const r = await fetch(`${url}${path}`, { method: "POST", headers: api, body: JSON.stringify(body) });
        if (r.status !== 200) throw new Error(`push token ${i}: ${r.status} ${await r.text()}`);
      }
    }),
  );
  // SQLite's page size, for the WAL's checkpoint size (read once, then closed: no reader is left holding the WAL).
  try {
    const db = new Database(join(dataDir, "development.db"), { readonly: true });
    livePageSize = Number((db.query("PRAGMA page_size").get() as { page_size: number }).page_size);
    db.close();
  } catch {}
  log(`setup: ${SEED} objects, ${USERS} users, custom code, ${TOKENS} push devices in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// ---- accounting --------------------------------------------------------------------------------------------------

const OPS = ["read", "query", "create", "delete", "counter", "code", "upload", "upload_delete", "login", "logout", "push"] as const;
type Op = (typeof OPS)[number];
/** Per request kind: counts, and each request's latency (ms) with when it started (s after the load began). */
const perOp = Object.fromEntries(OPS.map((o) => [o, { ok: 0, errors: 0, lat: [] as number[], at: [] as number[] }])) as Record<
  Op,
  { ok: number; errors: number; lat: number[]; at: number[] }
>;
let loadStart = 0;
const errorSamples = new Map<string, number>();
let windowLat: number[] = [];
let windowErrors = 0;
let skipped = 0;
let inFlight = 0;

function noteError(op: Op, what: string): void {
  perOp[op].errors++;
  windowErrors++;
  const k = `${op}: ${what.slice(0, 160)}`;
  errorSamples.set(k, (errorSamples.get(k) ?? 0) + 1);
}

/** One timed request; answers the parsed JSON (or null) when the status is the expected one. */
async function call(op: Op, path: string, init: RequestInit, expect: number[] = [200, 201]): Promise<unknown> {
  inFlight++;
  const t0 = performance.now();
  try {
    const r = await fetch(`${url}${path}`, init);
    const text = await r.text();
    const ms = performance.now() - t0;
    windowLat.push(ms);
    perOp[op].lat.push(ms);
    perOp[op].at.push((t0 - loadStart) / 1000);
    if (!expect.includes(r.status)) {
      noteError(op, `${r.status} ${text.slice(0, 120)}`);
      return null;
    }
    perOp[op].ok++;
    return text && text[0] !== "<" ? JSON.parse(text) : null;
  } catch (e) {
    noteError(op, `network: ${(e as Error).message}`);
    return null;
  } finally {
    inFlight--;
  }
}

// ---- the workload ------------------------------------------------------------------------------------------------

const created: string[] = [];
const files: string[] = [];
let liveExpected = 0; // creates matching the streams' subscription (tag=new), since the streams opened
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
const fileBytes = (n: number) => {
  const b = new Uint8Array(n);
  crypto.getRandomValues(b);
  return b;
};
let createdN = 0;
let userN = 0;
const ACTIONS: Record<Exclude<Op, "push" | "logout">, () => Promise<unknown> | null> = {
  read: () => call("read", `/soak_item/${pick(seedKeys)}`, { headers: api }),
  query: () =>
    call(
      "query",
      `/soak_item?tag=t${Math.floor(Math.random() * TAGS)}&n[gt]=${Math.floor(Math.random() * SEED)}`,
      { headers: { ...api, range: "objects=0-19" } },
      [200, 206],
    ),
  create: async () => {
    const n = createdN++;
    const r = (await call("create", "/soak_item", {
      method: "POST",
      headers: api,
      body: JSON.stringify({ title: `new ${n}`, n: SEED + n, tag: "new", hits: 0 }),
    })) as { soak_item_id?: string } | null;
    if (r?.soak_item_id) {
      created.push(r.soak_item_id);
      if (liveOpen) liveExpected++;
    }
  },
  delete: () => {
    if (created.length <= CREATE_WINDOW) return null;
    return call("delete", `/soak_item/${created.shift()}`, { method: "DELETE", headers: api });
  },
  counter: () => call("counter", `/soak_item/${pick(seedKeys)}`, { method: "PUT", headers: api, body: JSON.stringify({ "hits[inc]": 1 }) }),
  code: () => call("code", `/soak_read?id=${pick(seedKeys)}`, { headers: api }),
  upload: async () => {
    const r = (await call("upload", "/soak_file", {
      method: "POST",
      headers: api,
      body: JSON.stringify({ name: "blob", data: formatUpload("application/octet-stream", "blob.bin", fileBytes(16 * 1024)) }),
    })) as { soak_file_id?: string } | null;
    if (r?.soak_file_id) files.push(r.soak_file_id);
  },
  upload_delete: () => {
    if (files.length <= FILE_WINDOW) return null;
    return call("upload_delete", `/soak_file/${files.shift()}`, { method: "DELETE", headers: api });
  },
  login: async () => {
    const r = (await call("login", "/user/accessToken", {
      method: "POST",
      headers: form,
      body: `grant_type=password&username=u${userN++ % USERS}&password=bench-password-1&token_type=bearer`,
    })) as { access_token?: string } | null;
    // Log out again: sessions do not pile up, so what is measured is the server, not a growing session table.
    if (r?.access_token) await call("logout", "/user/logout", { headers: { ...api, authorization: `Bearer ${r.access_token}` } });
  },
};
// Requests per second of each action at --rate (a login brings its logout: two requests).
const SHARE: Record<keyof typeof ACTIONS, number> = {
  read: 0.36,
  query: 0.12,
  create: 0.12,
  delete: 0.12,
  counter: 0.12,
  code: 0.1,
  upload: 0.02,
  upload_delete: 0.02,
  login: 0.01,
};
if (values.mix) {
  const given = new Map(values.mix.split(",").map((kv) => kv.split("=") as [string, string]));
  for (const [k] of given) if (!(k in SHARE)) throw new Error(`--mix: unknown action ${k} (${Object.keys(SHARE).join(", ")})`);
  for (const k of Object.keys(SHARE) as (keyof typeof SHARE)[]) SHARE[k] = Number(given.get(k) ?? 0);
}
const credit = Object.fromEntries(Object.keys(SHARE).map((k) => [k, Math.random()])) as Record<keyof typeof ACTIONS, number>;

// ---- live streams ------------------------------------------------------------------------------------------------

let liveOpen = false;
let liveEvents = 0;
let liveReconnects = 0;
let liveNewStreams = 0;
let liveConnected = 0;
let stopping = false;
const liveAborts = new Set<AbortController>();

async function newStream(): Promise<{ id: string; token: string }> {
  for (;;) {
    try {
      const s = (await (await fetch(`${url}/_live/streams`, { method: "POST", headers: api })).json()) as { stream: string; token: string };
      const r = await fetch(`${url}/_live/streams/${s.stream}/subscriptions/new`, {
        method: "PUT",
        headers: api,
        body: JSON.stringify({ schema: "soak_item", query: "tag=new", events: ["create"] }),
      });
      if (!r.ok) throw new Error(`subscription: ${r.status} ${await r.text()}`);
      liveNewStreams++;
      return { id: s.stream, token: s.token };
    } catch (e) {
      if (stopping) throw e;
      log(`live: creating a stream failed (${(e as Error).message}); retrying`);
      await Bun.sleep(1000);
    }
  }
}

/** One stream held open until the end, reconnected (from its last id) when dropped, replaced when gone. */
async function holdStream(ready: () => void): Promise<void> {
  let s = await newStream();
  let lastId: string | null = null;
  let first = true;
  const decoder = new TextDecoder();
  while (!stopping) {
    const abort = new AbortController();
    liveAborts.add(abort);
    try {
      const r = await fetch(`${url}/_live/streams/${s.id}?token=${s.token}`, {
        headers: lastId ? { "last-event-id": lastId } : {},
        signal: abort.signal,
      });
      if (r.status === 401) {
        s = await newStream();
        lastId = null;
        continue;
      }
      if (!r.ok || !r.body) throw new Error(`status ${r.status}`);
      liveConnected++;
      let buf = "";
      try {
        for await (const chunk of r.body) {
          buf += decoder.decode(chunk, { stream: true });
          let end = buf.indexOf("\n\n");
          while (end >= 0) {
            const msg = buf.slice(0, end);
            buf = buf.slice(end + 2);
            const id = /^id: (\S+)$/m.exec(msg)?.[1];
            if (id) lastId = id;
            if (/^event: create$/m.test(msg)) liveEvents++;
            if (first && /^event: ready$/m.test(msg)) {
              first = false;
              ready();
            }
            end = buf.indexOf("\n\n");
          }
        }
      } finally {
        liveConnected--;
      }
    } catch (e) {
      if (stopping) break;
      log(`live: stream ${s.id.slice(0, 8)} dropped (${(e as Error).message})`);
    } finally {
      liveAborts.delete(abort);
    }
    if (stopping) break;
    liveReconnects++;
    await Bun.sleep(1000);
  }
}

const liveTasks: Promise<void>[] = [];
await Promise.all(
  Array.from(
    { length: STREAMS },
    () =>
      new Promise<void>((ready) => {
        liveTasks.push(holdStream(ready));
      }),
  ),
);
liveOpen = true;
log(`${STREAMS} live streams open`);

// ---- sampling ----------------------------------------------------------------------------------------------------

interface Sample {
  t: number;
  rssMb: number;
  anonMb: number;
  fileMb: number;
  heapMb: number;
  heapTotalMb: number;
  externalMb: number;
  /** The custom code threads' JS heap in use and memory outside it (sandboxes' linear memory, reserved), summed. */
  codeHeapMb: number;
  codeExternalMb: number;
  /** Full collections the code threads ran themselves (a counter since start). */
  codeCollections: number;
  fds: number;
  socketFds: number;
  inboundFds: number;
  devWalKb: number;
  sysWalKb: number;
  devDbMb: number;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  cpuPct: number;
  liveConnected: number;
}
const samples: Sample[] = [];
const CSV_HEADER =
  "t_s,rss_mb,anon_mb,file_mb,heap_mb,heap_total_mb,external_mb,code_heap_mb,code_external_mb,code_collections,fds,socket_fds,inbound_fds,dev_wal_kb,sys_wal_kb,dev_db_mb,requests,p50_ms,p99_ms,errors,server_cpu_pct,live_connected";
writeFileSync(csvPath, `${CSV_HEADER}\n`);
const pct = (xs: ArrayLike<number>, p: number) => {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
};
const fileKb = (p: string) => {
  try {
    return statSync(p).size / 1024;
  } catch {
    return 0;
  }
};
const serverPort = Number(new URL(url).port);
/** TCP socket inodes on this machine with their local port and state (/proc/net/tcp and tcp6). */
function tcpSockets(): Map<string, { localPort: number; listening: boolean }> {
  const out = new Map<string, { localPort: number; listening: boolean }>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"])
    try {
      for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length < 10) continue;
        out.set(f[9]!, { localPort: Number.parseInt(f[1]!.split(":")[1]!, 16), listening: f[3] === "0A" });
      }
    } catch {}
  return out;
}
/** The server's descriptors: all, sockets, and of the sockets the accepted connections (local port = the server's). */
function descriptors(): { all: number; sockets: number; inbound: number } {
  let all = 0;
  let sockets = 0;
  let inbound = 0;
  const tcp = tcpSockets();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    all++;
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (!link.startsWith("socket:")) continue;
      sockets++;
      const s = tcp.get(link.slice(8, -1));
      if (s && s.localPort === serverPort && !s.listening) inbound++;
    } catch {}
  }
  return { all, sockets, inbound };
}
/** The server's JS heap in use and reserved, and memory held outside the heap by JS objects, from /_metrics. */
async function heapFigures(): Promise<{
  used: number;
  total: number;
  external: number;
  codeHeap: number;
  codeExternal: number;
  codeCollections: number;
}> {
  try {
    const text = await (await fetch(`${url}/_metrics`)).text();
    const figure = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
    const mb = (name: string) => figure(name) / 2 ** 20;
    return {
      used: mb("burrow_heap_used_bytes"),
      total: mb("burrow_heap_total_bytes"),
      external: mb("burrow_external_memory_bytes"),
      codeHeap: mb("burrow_code_thread_heap_bytes"),
      codeExternal: mb("burrow_code_thread_external_bytes"),
      codeCollections: figure("burrow_code_thread_collections_total"),
    };
  } catch {
    return { used: NaN, total: NaN, external: NaN, codeHeap: NaN, codeExternal: NaN, codeCollections: NaN };
  }
}

const t0 = performance.now();
loadStart = t0;
let lastCpu = processCpuSeconds(pid) ?? 0;
let lastSampleAt = t0;
async function sample(): Promise<void> {
  const now = performance.now();
  const lat = windowLat;
  windowLat = [];
  const errors = windowErrors;
  windowErrors = 0;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  const heap = await heapFigures();
  const fd = descriptors();
  const cpu = processCpuSeconds(pid) ?? 0;
  const s: Sample = {
    t: (now - t0) / 1000,
    rssMb: kb("VmRSS") / 1024,
    anonMb: kb("RssAnon") / 1024,
    fileMb: kb("RssFile") / 1024,
    heapMb: heap.used,
    heapTotalMb: heap.total,
    externalMb: heap.external,
    codeHeapMb: heap.codeHeap,
    codeExternalMb: heap.codeExternal,
    codeCollections: heap.codeCollections,
    fds: fd.all,
    socketFds: fd.sockets,
    inboundFds: fd.inbound,
    devWalKb: fileKb(join(dataDir, "development.db-wal")),
    sysWalKb: fileKb(join(dataDir, "system.db-wal")),
    devDbMb: fileKb(join(dataDir, "development.db")) / 1024,
    requests: lat.length,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    errors,
    cpuPct: (100 * (cpu - lastCpu)) / ((now - lastSampleAt) / 1000),
    liveConnected,
  };
  lastCpu = cpu;
  lastSampleAt = now;
  samples.push(s);
  appendFileSync(
    csvPath,
    `${[s.t.toFixed(0), s.rssMb.toFixed(1), s.anonMb.toFixed(1), s.fileMb.toFixed(1), s.heapMb.toFixed(1), s.heapTotalMb.toFixed(1), s.externalMb.toFixed(1), s.codeHeapMb.toFixed(1), s.codeExternalMb.toFixed(1), s.codeCollections, s.fds, s.socketFds, s.inboundFds, s.devWalKb.toFixed(0), s.sysWalKb.toFixed(0), s.devDbMb.toFixed(2), s.requests, s.p50.toFixed(2), s.p99.toFixed(2), s.errors, s.cpuPct.toFixed(0), s.liveConnected].join(",")}\n`,
  );
  if (samples.length % 6 === 0 || MINUTES < 10)
    log(
      `rss ${s.rssMb.toFixed(1)} MB (anon ${s.anonMb.toFixed(1)}), heap ${s.heapMb.toFixed(1)} MB, fds ${s.fds} (${s.socketFds} sockets, ${s.inboundFds} accepted), wal ${s.devWalKb.toFixed(0)}/${s.sysWalKb.toFixed(0)} KB, ${(s.requests / 10).toFixed(0)} req/s, p99 ${s.p99.toFixed(1)} ms, errors ${s.errors}, skipped ${skipped}, server cpu ${s.cpuPct.toFixed(0)}%`,
    );
}

// ---- the run -----------------------------------------------------------------------------------------------------

const pushes: { at: number; queued: number; ms: number; reached: number }[] = [];
async function broadcast(): Promise<void> {
  const before = await pushReached();
  const tb = performance.now();
  const r = (await call("push", "/_push/notifications", {
    method: "POST",
    headers: api,
    body: JSON.stringify({ payload: { message: "soak", badge: 1 } }),
  })) as { queued?: number } | null;
  const queued = r?.queued ?? 0;
  let reached = 0;
  while (performance.now() - tb < 120_000) {
    reached = (await pushReached()) - before;
    if (reached >= queued) break;
    await Bun.sleep(200);
  }
  pushes.push({ at: (tb - t0) / 1000, queued, ms: performance.now() - tb, reached });
  log(`push broadcast: ${queued} queued, ${reached} delivered in ${(performance.now() - tb).toFixed(0)} ms`);
}

const endAt = t0 + MINUTES * 60_000;
let nextSample = t0 + SAMPLE_MS;
let nextPush = t0 + PUSH_EVERY_MS / 2;
const background: Promise<unknown>[] = [];
const pending = new Set<Promise<unknown>>();
let last = performance.now();
log(`load: ${RATE} req/s for ${MINUTES} min; samples every ${SAMPLE_MS / 1000} s to ${csvPath}`);
while (performance.now() < endAt) {
  await Bun.sleep(10);
  const now = performance.now();
  const dt = Math.min(0.5, (now - last) / 1000);
  last = now;
  for (const op of Object.keys(SHARE) as (keyof typeof ACTIONS)[]) {
    credit[op] += SHARE[op] * RATE * dt;
    while (credit[op] >= 1) {
      credit[op] -= 1;
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
        continue;
      }
      const p = ACTIONS[op]();
      if (p) {
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
    }
  }
  if (now >= nextPush) {
    nextPush += PUSH_EVERY_MS;
    background.push(broadcast());
  }
  if (now >= nextSample) {
    nextSample += SAMPLE_MS;
    await sample();
  }
}
await Promise.all(pending);
await Promise.all(background);
await Bun.sleep(1000); // the last creates reach the streams
stopping = true;
for (const a of liveAborts) a.abort();
await Promise.all(liveTasks);
const serverLogText = readFileSync(serverLog, "utf8");
const serverErrors = serverLogText.split("\n").filter((l) => /\b(error|ERROR)\b/.test(l)).length;
serverProc.kill("SIGTERM");
await serverProc.exited;
fakesProc.stdin.end();
await fakesProc.exited;
// What the data directory holds at the end: a table that keeps growing under a steady mix shows up here.
function dirBytes(p: string): number {
  let n = 0;
  for (const e of readdirSync(p, { withFileTypes: true }))
    n += e.isDirectory() ? dirBytes(join(p, e.name)) : statSync(join(p, e.name)).size;
  return n;
}
const biggest: string[] = [];
for (const name of ["development.db", "system.db"]) {
  try {
    const db = new Database(join(dataDir, name), { readonly: true });
    const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
    const counts = tables.map((t) => ({
      t,
      n: Number((db.query(`SELECT count(*) AS n FROM "${t.replace(/"/g, '""')}"`).get() as { n: number }).n),
    }));
    db.close();
    counts.sort((a, b) => b.n - a.n);
    biggest.push(
      `${name} (${(statSync(join(dataDir, name)).size / 2 ** 20).toFixed(1)} MB): ${counts
        .slice(0, 6)
        .map((c) => `${c.t} ${c.n}`)
        .join(", ")}`,
    );
  } catch (e) {
    biggest.push(`${name}: ${(e as Error).message}`);
  }
}
const dataDirMb = dirBytes(dataDir) / 2 ** 20;
rmSync(dir, { recursive: true, force: true });

// ---- results -----------------------------------------------------------------------------------------------------

const f = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : "-");
const warmupS = MINUTES >= 20 ? 600 : MINUTES * 60 * 0.2;
const periodS = MINUTES >= 20 ? 600 : MINUTES * 60 * 0.2;
const after = samples.filter((s) => s.t > warmupS);
/** Least-squares slope of y over t (seconds), per 10 minutes. */
function slopePer10Min(pts: { t: number; y: number }[]): number {
  const n = pts.length;
  if (n < 2) return NaN;
  const mt = pts.reduce((a, p) => a + p.t, 0) / n;
  const my = pts.reduce((a, p) => a + p.y, 0) / n;
  const num = pts.reduce((a, p) => a + (p.t - mt) * (p.y - my), 0);
  const den = pts.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  return (num / den) * 600;
}
const rssSlope = slopePer10Min(after.map((s) => ({ t: s.t, y: s.rssMb })));
const anonSlope = slopePer10Min(after.map((s) => ({ t: s.t, y: s.anonMb })));
const fileSlope = slopePer10Min(after.map((s) => ({ t: s.t, y: s.fileMb })));
const heapSlope = slopePer10Min(after.map((s) => ({ t: s.t, y: s.heapMb })).filter((p) => Number.isFinite(p.y)));
const totalS = samples.at(-1)?.t ?? 0;
/** Latencies of the requests of the given kinds that started from `from` to `to` (s after the load began). */
const periodLat = (from: number, to: number, ops: readonly Op[]) => {
  const out: number[] = [];
  for (const o of ops) {
    const { lat, at } = perOp[o];
    for (let i = 0; i < lat.length; i++) if (at[i]! >= from && at[i]! < to) out.push(lat[i]!);
  }
  return out;
};
// Password logins are judged apart: argon2id makes each one cost ~35 ms of CPU on purpose, and at 1% of the mix they
// sit exactly at the 99th percentile of all requests, so an all-request p99 flips between the slowest ordinary
// request and a login's hash from one period to the next (an hour's 10-second windows: 11 or 34 ms).
const JUDGED = OPS.filter((o) => o !== "login" && o !== "push");
const firstP99 = pct(periodLat(0, periodS, JUDGED), 99);
const lastP99 = pct(periodLat(totalS - periodS, totalS + 1, JUDGED), 99);
const opP99 = (o: Op) => [pct(periodLat(0, periodS, [o]), 99), pct(periodLat(totalS - periodS, totalS + 1, [o]), 99)] as const;
const fileFds = after.map((s) => s.fds - s.socketFds);
const fdMin = Math.min(...after.map((s) => s.fds));
const fdMax = Math.max(...after.map((s) => s.fds));
const fileFdSpread = Math.max(...fileFds) - Math.min(...fileFds);
// Accepted connections follow the client (its pool opens more when answers are slow), so they are reported, not
// judged. The server's own sockets (listeners, connections to the push providers) come and go with keep-alive pools,
// so "flat" for them is: the last third after warm-up holds no more than the first third did, give or take a few.
const third = Math.max(1, Math.floor(after.length / 3));
const own = (s: Sample) => s.socketFds - s.inboundFds;
const sockFirst = Math.max(...after.slice(0, third).map(own));
const sockLast = Math.max(...after.slice(-third).map(own));
const SOCKET_SLACK = 8;
// Burrow sets no wal_autocheckpoint (src/db/bun-sqlite-client.ts: journal_mode=WAL, synchronous=NORMAL only), so
// SQLite's default holds: a checkpoint once the WAL passes 1000 pages; the file is then reused from its start, not
// truncated (journal_size_limit is unset), so it should level off near 1000 frames of (page size + 24) bytes.
const CHECKPOINT_PAGES = 1000;
const checkpointKb = (CHECKPOINT_PAGES * (livePageSize + 24) + 32) / 1024;
const walMaxKb = Math.max(...samples.map((s) => Math.max(s.devWalKb, s.sysWalKb)));
const WAL_SLACK = 1.25; // a commit that crosses the threshold lands whole before the checkpoint
const totalRequests = OPS.reduce((a, o) => a + perOp[o].ok + perOp[o].errors, 0);
const totalErrors = OPS.reduce((a, o) => a + perOp[o].errors, 0);
const verdict = (ok: boolean) => (ok ? "pass" : "**FAIL**");
const periodName = MINUTES >= 20 ? "10 min" : `${f(periodS / 60)} min (20%)`;

const step = Math.max(1, Math.ceil(samples.length / 40));
const shown = samples.filter((_, i) => (i + 1) % step === 0 || i === samples.length - 1);
const sampleTable = table(
  [
    "t",
    "RSS MB (anon, file)",
    "heap MB (reserved)",
    "fds (sockets, accepted)",
    "dev WAL KB",
    "sys WAL KB",
    "dev db MB",
    "req/s",
    "p50 ms",
    "p99 ms",
    "errors",
    "server CPU",
  ],
  shown.map((s) => [
    `${Math.floor(s.t / 60)}:${String(Math.round(s.t % 60)).padStart(2, "0")}`,
    `${f(s.rssMb)} (${f(s.anonMb)}, ${f(s.fileMb)})`,
    `${f(s.heapMb)} (${f(s.heapTotalMb)})`,
    `${s.fds} (${s.socketFds}, ${s.inboundFds})`,
    f(s.devWalKb, 0),
    f(s.sysWalKb, 0),
    f(s.devDbMb, 2),
    f(s.requests / (SAMPLE_MS / 1000), 0),
    f(s.p50, 2),
    f(s.p99, 1),
    s.errors,
    `${f(s.cpuPct, 0)}%`,
  ]),
);
const opTable = table(
  ["request", "count", "errors", "p50 ms", "p99 ms", `p99 first / last ${periodName}`, "max ms"],
  OPS.map((o) => [
    o,
    perOp[o].ok + perOp[o].errors,
    perOp[o].errors,
    f(pct(perOp[o].lat, 50), 2),
    f(pct(perOp[o].lat, 99), 1),
    o === "push" ? "-" : `${f(opP99(o)[0], 1)} / ${f(opP99(o)[1], 1)}`,
    f(
      perOp[o].lat.reduce((a, b) => Math.max(a, b), 0),
      0,
    ),
  ]),
);
const checks = table(
  ["target", "measured", ""],
  [
    [
      `RSS slope after warm-up (first ${f(warmupS / 60)} min excluded), least squares < 1 MB per 10 min`,
      `${f(rssSlope, 2)} MB/10 min over ${after.length} samples (anonymous ${f(anonSlope, 2)}, file-backed ${f(fileSlope, 2)}; JS heap in use ${f(heapSlope, 2)})`,
      verdict(rssSlope < 1),
    ],
    [
      `request p99 (every kind but password logins, judged apart: see the table above), last ${periodName} within 1.2x of the first`,
      `${f(firstP99, 2)} -> ${f(lastP99, 2)} ms (${f(lastP99 / firstP99, 2)}x)`,
      verdict(lastP99 <= 1.2 * firstP99),
    ],
    [
      `open descriptors after warm-up flat (non-socket spread <= 4; the server's own sockets, accepted connections apart: most in the last third <= the first third's + ${SOCKET_SLACK})`,
      `all ${fdMin}-${fdMax}; non-socket ${Math.min(...fileFds)}-${Math.max(...fileFds)}; own sockets, most in the first / last third ${sockFirst} / ${sockLast} (accepted connections ${Math.min(...after.map((s) => s.inboundFds))}-${Math.max(...after.map((s) => s.inboundFds))})`,
      verdict(fileFdSpread <= 4 && sockLast <= sockFirst + SOCKET_SLACK),
    ],
    [
      `WAL size bounded by the checkpoint (${CHECKPOINT_PAGES} pages x ${livePageSize} B = ${f(checkpointKb, 0)} KB, x${WAL_SLACK})`,
      `max ${f(walMaxKb, 0)} KB (development ${f(Math.max(...samples.map((s) => s.devWalKb)), 0)}, system ${f(Math.max(...samples.map((s) => s.sysWalKb)), 0)})`,
      verdict(walMaxKb <= checkpointKb * WAL_SLACK),
    ],
    [
      "no unexpected errors (non-2xx or network)",
      `${totalErrors} of ${totalRequests} requests; ${skipped} skipped (client behind); ${serverErrors} error lines in the server log`,
      verdict(totalErrors === 0),
    ],
  ],
);
const liveLine = `Live: ${STREAMS} SSE streams held open, ${liveEvents} create events received for ${liveExpected} matching creates x ${STREAMS} streams = ${liveExpected * STREAMS} expected, ${liveReconnects} reconnects, ${liveNewStreams - STREAMS} streams replaced.`;
const pushLine = `Push: ${pushes.length} broadcasts to ${TOKENS} devices (every ${f(PUSH_EVERY_MS / 60_000)} min): ${pushes.map((p) => `${p.reached}/${p.queued} in ${f(p.ms / 1000)} s`).join(", ")}.`;
const md = [
  `${machine()}; built binary (\`burrow serve --metrics\`), fresh data directory, loopback; ${MINUTES} min at ${RATE} req/s (open loop, one client process, at most ${MAX_IN_FLIGHT} in flight)${pin ? "; the server pinned to core 0, the client and the push fakes on the rest" : ""}. Mix: reads by key ${SHARE.read * 100}%, queries (20 rows) ${SHARE.query * 100}%, creates ${SHARE.create * 100}% with as many deletes (a rolling window of ${CREATE_WINDOW}), counter increments ${SHARE.counter * 100}%, a custom code method reading by key ${SHARE.code * 100}%, 16 KB file uploads ${SHARE.upload * 100}% with as many deletes, password logins with their logouts ${SHARE.login * 100}% each; ${SEED} seeded objects. Samples every ${SAMPLE_MS / 1000} s (raw: ${csvPath}); the table shows ${step === 1 ? "every sample" : `every ${step}th`}.`,
  "",
  sampleTable,
  "",
  opTable,
  "",
  liveLine,
  pushLine,
  `At the end the data directory held ${dataDirMb.toFixed(1)} MB; the largest tables (rows): ${biggest.join("; ")}.`,
  "",
  checks,
  ...(MINUTES < 20 ? ["", `A ${MINUTES}-minute run on a shared machine is a smoke test: its slopes and p99 ratios mean little.`] : []),
].join("\n");
console.log(md);
if (errorSamples.size) {
  console.error("errors:");
  for (const [k, n] of [...errorSamples].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.error(`  ${n} x ${k}`);
}
console.error(`raw samples: ${csvPath}`);
if (values.write) writeSection("soak", `## Soak: an hour of mixed load (scripts/bench/soak.ts)\n\n${md}`);
