// Outbound calls while the API is saturated, with and without a push broadcast going out: the built binary, wrk at
// full speed on GET by key (2 connections per core), and meanwhile, each in its own sequential loop at --rate per
// second, (a) a social sign-in against a loopback Graph fake (facebookAccessToken), (b) an upload of a small file to
// the S3 file store (s3rver on loopback), (c) a custom code method calling `http` to a loopback URL (code.http
// allowPrivate). Three runs, each in a fresh server: no broadcast; a --tokens broadcast in progress (FCM, APNs and
// Web Push fakes of scripts/bench/push-fakes.ts, tokens written straight into the database as push.ts does); the same
// with BURROW_NO_HTTP_THREAD_WARMUP=1, the benchmark switch that leaves Bun's shared HTTP Client thread to be made by
// whichever thread fetches first - here the SCHED_IDLE push delivery thread (src/os/http-client-thread.ts).
// The three take turns for --rounds rounds; p50 and p99 are medians of the rounds'. Reports p50/p99/max per call
// and configuration, the HTTP Client thread's scheduling policy (/proc), GET req/s and p99, the deliveries made
// during the window, and how much CPU other processes on the machine took meanwhile. Every loop is bounded in count
// and time; all on loopback.
// Usage: bun run scripts/bench/outbound.ts [--tokens 1000000] [--seconds 30] [--rate 5] [--rounds 3] [--build]
//        [--binary path] [--no-pin] [--write]

import { Database } from "bun:sqlite";
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { formatUpload } from "../../src/files/upload.ts";
import { policyName, readThreads } from "../../src/os/thread-stat.ts";
import { normalizeToken } from "../../src/push/tokens.ts";
import { startS3 } from "../../tests/helpers/s3rver.ts";
import { startGraphFake } from "../../tests/helpers/social-fakes.ts";
import { tempDir } from "../../tests/helpers/app.ts";
import { startServerProcess, type ServerProcess } from "../../tests/helpers/spawn.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { runLoad, type LoadResult } from "./load.ts";
import { pushSettingsFor, startPushFakes } from "./push-fakes-client.ts";

const { values } = parseArgs({
  options: {
    tokens: { type: "string", default: "1000000" },
    seconds: { type: "string", default: "30" },
    rate: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    mix: { type: "string", default: "ios=0.6,android=0.3,web=0.1" },
    build: { type: "boolean", default: false },
    binary: { type: "string" },
    "no-pin": { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const tokens = Math.min(2_000_000, Math.max(1000, Number(values.tokens)));
const seconds = Math.min(120, Math.max(5, Number(values.seconds)));
const rate = Math.min(50, Math.max(1, Number(values.rate)));
const rounds = Math.min(5, Math.max(1, Number(values.rounds)));
const mix = Object.fromEntries(
  values
    .mix!.split(",")
    .map((p) => p.split("="))
    .map(([k, v]) => [k, Number(v)]),
) as Record<"ios" | "android" | "web", number>;
const exe = values.binary ?? ensureBinary(values.build!);
// As in push.ts: with two or more cores the server gets core 0 to itself; this driver, the fakes, s3rver and wrk run
// on the others. All the server's threads share core 0, so an idle-class thread there gets what the API leaves.
const cores = navigator.hardwareConcurrency;
const pin = !values["no-pin"] && cores >= 2 && Bun.which("taskset") !== null;
if (pin) Bun.spawnSync(["taskset", "-pc", `1-${cores - 1}`, String(process.pid)], { stdout: "ignore" });
const CONNECTIONS = 2 * cores;
/** One probe call gives up after this long (and counts as failed, with this latency). */
const PROBE_TIMEOUT_MS = 10_000;
/** Waiting for the broadcast's first FCM delivery, and for a server to stop. */
const WAIT_MS = 60_000;

const KEY = "bench-outbound-dev-key";
const ADMIN = { email: "bench@example.com", password: "bench-password" };
const APP_SECRET = "bench-app-secret";
const FB_TOKEN = "bench-outbound-graph-token";
const api = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" };
const form = { ...api, "content-type": "application/x-www-form-urlencoded" };

type Tally = { deliveries: number; devices: number };
type Stats = { ios: Tally; android: Tally; web: Tally };

// The push fakes in their own process at nice 10 (push.ts), the Graph fake and the custom code target here.
const { fakes, proc: fakesProc } = await startPushFakes({ BENCH_PROVIDER_DELAY_MS: "0" });
const stats = async () => (await (await fetch(`${fakes.control}/stats`)).json()) as Stats;
const delivered = (s: Stats) => s.ios.deliveries + s.android.deliveries + s.web.deliveries;
const graph = startGraphFake(APP_SECRET);
graph.tokens.set(FB_TOKEN, { id: "900001", name: "Bench User", expiresAt: 0 });
const target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ ok: true }) });
const s3 = await startS3();

/** Which platform device i is on, following the mix (deterministic; as push.ts). */
function device(i: number): { type: string; token: string } {
  const x = ((i * 2654435761) >>> 0) / 2 ** 32;
  if (x < mix.ios) return { type: "ios", token: i.toString(16).padStart(64, "0") };
  if (x < mix.ios + mix.android) return { type: "androidgcm", token: `bench-android-${i}` };
  const endpoint = `${fakes.web.url}/push/${i.toString(16).padStart(24, "0")}`;
  return { type: "web", token: normalizeToken("web", { endpoint, keys: { p256dh: fakes.web.p256dh, auth: fakes.web.auth } }) };
}

/** Write n devices straight into the development database, 50,000 a transaction (setup, not measured). */
function registerDirect(dir: string, n: number): void {
  const db = new Database(join(dir, "data", "development.db"));
  db.exec("PRAGMA busy_timeout = 10000");
  const insert = db.prepare("INSERT OR IGNORE INTO _burrow_push_tokens (type, token, user, created) VALUES (?, ?, ?, ?)");
  const now = Date.now();
  for (let start = 0; start < n; start += 50_000)
    db.transaction(() => {
      for (let i = start; i < Math.min(n, start + 50_000); i++) {
        const d = device(i);
        insert.run(d.type, d.token, `u${i}`, now);
      }
    })();
  db.close();
}

const BUNDLE = `export const methods = [{ name: "outbound", async execute(r, s) {
  const res = await s.http.get(${JSON.stringify(`http://127.0.0.1:${target.port}/`)}, { timeoutMs: ${PROBE_TIMEOUT_MS} });
  return { body: { status: res.status } };
} }];`;

async function setUp(url: string, dir: string, broadcast: boolean): Promise<string[]> {
  const login = (await (await fetch(`${url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) })).json()) as {
    token: string;
  };
  const admin = async (method: string, path: string, body: string, type = "application/json") => {
    const r = await fetch(`${url}/_admin/api${path}`, {
      method,
      headers: { authorization: `Bearer ${login.token}`, "content-type": type },
      body,
    });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  };
  await admin("PUT", "/schemas/doc", JSON.stringify({ fields: { title: { type: "string" }, file: { type: "binary" } } }));
  const push = pushSettingsFor(fakes);
  const settings = {
    rateLimits: { ipPerMinute: 1_000_000 },
    social: { social1: { appId: "1", appSecret: APP_SECRET, baseUrl: graph.url } },
    files: {
      store: "s3",
      s3: {
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        region: "us-east-1",
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        prefix: `${Date.now()}/`,
      },
    },
    code: { http: { allowPrivate: true } },
    ...(broadcast ? { push } : {}),
  };
  await admin("PUT", "/settings/development", JSON.stringify(settings));
  await admin("PUT", "/code", BUNDLE, "application/javascript");
  // The user the sign-ins log in as (node:http on the main thread: it makes no HTTP Client thread).
  const created = await fetch(`${url}/user/createUserWithFacebook`, {
    method: "POST",
    headers: api,
    body: JSON.stringify({ fb_at: FB_TOKEN }),
  });
  if (created.status !== 201) throw new Error(`createUserWithFacebook: ${created.status} ${await created.text()}`);
  const batch = Array.from({ length: 1000 }, (_, i) => ({ title: `item ${i}`, n: i }));
  const r = (await (await fetch(`${url}/items`, { method: "POST", headers: api, body: JSON.stringify(batch) })).json()) as {
    succeeded: string[];
  };
  if (r.succeeded.length !== 1000) throw new Error("seeding items failed");
  if (broadcast) registerDirect(dir, tokens);
  return r.succeeded;
}

const FILE = new Uint8Array(1024).map((_, i) => (i * 31) & 255);
/** The three probe calls: each answers whether the call succeeded. */
const CALLS: { name: string; call(url: string, signal: AbortSignal): Promise<boolean> }[] = [
  {
    name: "social sign-in (Graph /me)",
    call: async (url, signal) =>
      (await fetch(`${url}/user/facebookAccessToken`, { method: "POST", headers: form, body: `fb_at=${FB_TOKEN}&token_type=mac`, signal }))
        .status === 200,
  },
  {
    name: "S3 upload, 1 KiB",
    call: async (url, signal) =>
      (
        await fetch(`${url}/doc`, {
          method: "POST",
          headers: api,
          body: JSON.stringify({ title: "probe", file: formatUpload("application/octet-stream", "probe.bin", FILE) }),
          signal,
        })
      ).status === 201,
  },
  {
    name: "custom code http",
    call: async (url, signal) => {
      const r = await fetch(`${url}/outbound`, { headers: api, signal });
      return r.status === 200 && ((await r.json()) as { status: number }).status === 200;
    },
  },
];

interface Sample {
  ms: number;
  ok: boolean;
}
async function probe(url: string, call: (typeof CALLS)[number]["call"]): Promise<Sample> {
  const t0 = performance.now();
  let ok = false;
  try {
    ok = await call(url, AbortSignal.timeout(PROBE_TIMEOUT_MS));
  } catch {}
  return { ms: performance.now() - t0, ok };
}

/** One call after another, starting at most `rate` a second, until `until` (and at most rate x seconds calls). */
async function probeLoop(url: string, call: (typeof CALLS)[number]["call"], until: number): Promise<Sample[]> {
  const out: Sample[] = [];
  const max = Math.ceil(rate * seconds) + 1;
  let next = performance.now();
  while (out.length < max) {
    const wait = next - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    if (performance.now() >= until) break;
    next = performance.now() + 1000 / rate;
    out.push(await probe(url, call));
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/** Fields after a /proc/<pid>/stat's command name; [] when the process is gone. */
function statFields(pid: number | string): string[] {
  try {
    const t = readFileSync(`/proc/${pid}/stat`, "utf8");
    return t.slice(t.lastIndexOf(")") + 2).split(" ");
  } catch {
    return [];
  }
}

/**
 * Jiffies so far: the machine's busy time (all CPUs, time stolen by the hypervisor included), its total, and this
 * benchmark's own (this process with its reaped children - wrk - and its live descendants: server, fakes, s3rver).
 * The rest of the busy time is other processes on the machine, which a shared machine has.
 */
function cpuSnapshot(): { busy: number; total: number; ours: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const busy = total - f[3]! - f[4]!;
  const children = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = statFields(name);
    if (s.length < 15) continue;
    const pid = Number(name);
    const ppid = Number(s[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    cpu.set(pid, Number(s[11]) + Number(s[12]) + Number(s[13]) + Number(s[14]));
  }
  let ours = 0;
  const todo = [process.pid];
  for (let n = 0; todo.length && n < 10_000; n++) {
    const pid = todo.pop()!;
    ours += cpu.get(pid) ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return { busy, total, ours };
}

/** Other processes' share of the machine's CPU between two snapshots, %. */
const otherCpu = (a: ReturnType<typeof cpuSnapshot>, b: ReturnType<typeof cpuSnapshot>) =>
  b.total > a.total ? Math.max(0, (100 * (b.busy - a.busy - (b.ours - a.ours))) / (b.total - a.total)) : NaN;

interface Run {
  name: string;
  round: number;
  otherCpu: number;
  broadcast: boolean;
  warmup: boolean;
  httpThread: string;
  get: LoadResult;
  calls: { name: string; samples: Sample[] }[];
  deliveredInWindow: number;
  reached: number;
}

async function stopServer(server: ServerProcess): Promise<void> {
  const stopped = await Promise.race([server.stop().then(() => true), Bun.sleep(WAIT_MS).then(() => false)]);
  if (!stopped) {
    server.proc.kill("SIGKILL");
    await server.proc.exited;
  }
}

async function run(name: string, round: number, broadcast: boolean, warmup: boolean): Promise<Run> {
  const dir = tempDir("burrow-bench-outbound-");
  await fetch(`${fakes.control}/reset`, { method: "POST" });
  const server = await startServerProcess(
    pin ? ["taskset", "-c", "0", exe] : [exe],
    {
      BURROW_DIR: join(dir, "data"),
      BURROW_DEV_PUBLIC_KEY: KEY,
      BURROW_ADMIN_EMAIL: ADMIN.email,
      BURROW_ADMIN_PASSWORD: ADMIN.password,
      BURROW_LOG_LEVEL: "warn",
      ...(warmup ? {} : { BURROW_NO_HTTP_THREAD_WARMUP: "1" }),
    },
    { stderrFile: join(dir, "server.log") },
  );
  try {
    const ids = await setUp(server.url, dir, broadcast);
    if (broadcast) {
      // Sent before any probe, so (without the warm-up) the delivery thread's first FCM fetch makes the HTTP Client thread.
      const t0 = performance.now();
      const res = await fetch(`${server.url}/_push/notifications`, {
        method: "POST",
        headers: api,
        body: JSON.stringify({ payload: { message: "bench" } }),
      });
      const queued = ((await res.json()) as { queued: number }).queued;
      if (queued !== tokens) throw new Error(`queued ${queued}, expected ${tokens}`);
      console.error(`${name}: ${tokens} queued in ${(performance.now() - t0).toFixed(0)} ms`);
      const deadline = Date.now() + WAIT_MS;
      while ((await stats()).android.deliveries === 0 && Date.now() < deadline) await Bun.sleep(50);
    }
    // One call of each kind first, not measured (connections, S3 client, custom code thread).
    for (const c of CALLS) if (!(await probe(server.url, c.call)).ok) throw new Error(`${name}: ${c.name} failed before the load`);
    const http = readThreads(server.proc.pid).find((t) => t.name === "HTTP Client");
    const httpThread = http ? policyName(http.policy) : "none";
    const before = await stats();
    const cpu0 = cpuSnapshot();
    const started = performance.now();
    const load = runLoad(
      { base: server.url, method: "GET", paths: ids.map((id) => `/items/${id}`), headers: api, connections: CONNECTIONS, seconds },
      "wrk",
    );
    await Bun.sleep(1000);
    const until = started + (seconds - 1) * 1000;
    const samples = await Promise.all(CALLS.map((c) => probeLoop(server.url, c.call, until)));
    const get = await load;
    const cpu1 = cpuSnapshot();
    const after = await stats();
    const reached = after.ios.devices + after.android.devices + after.web.devices;
    const r: Run = {
      name,
      round,
      otherCpu: otherCpu(cpu0, cpu1),
      broadcast,
      warmup,
      httpThread,
      get,
      calls: CALLS.map((c, i) => ({ name: c.name, samples: samples[i]! })),
      deliveredInWindow: delivered(after) - delivered(before),
      reached,
    };
    for (const c of r.calls) {
      const ms = c.samples.map((s) => s.ms);
      console.error(
        `${name}: ${c.name}: p50 ${pct(ms, 50).toFixed(1)} p99 ${pct(ms, 99).toFixed(1)} max ${Math.max(...ms).toFixed(1)} ms, ${ms.length} calls, ${c.samples.filter((s) => !s.ok).length} failed`,
      );
    }
    console.error(
      `${name}: HTTP Client ${httpThread}, GET ${get.rps.toFixed(0)} req/s p99 ${get.p99} ms, ${r.deliveredInWindow} deliveries in the window, ${reached} reached, other processes ${r.otherCpu.toFixed(0)}% of the CPU`,
    );
    return r;
  } finally {
    await stopServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

const CONFIGS = [
  { name: "API saturated, no broadcast", broadcast: false, warmup: true },
  { name: `API saturated + ${tokens.toLocaleString("en")}-token broadcast`, broadcast: true, warmup: true },
  { name: "same, warm-up off (BURROW_NO_HTTP_THREAD_WARMUP=1)", broadcast: true, warmup: false },
];
// The configurations take turns, round after round, so a spell of load from elsewhere on the machine falls on all.
const runs: Run[] = [];
try {
  for (let round = 1; round <= rounds; round++) for (const c of CONFIGS) runs.push(await run(c.name, round, c.broadcast, c.warmup));
} finally {
  fakesProc.stdin.end();
  await fakesProc.exited;
  graph.stop();
  target.stop(true);
  await s3.stop();
}

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const ms = (xs: Sample[]) => xs.map((x) => x.ms);
const median = (xs: number[]) => pct(xs, 50);
/** A configuration's runs, and the given percentile of call i in each of them. */
const runsOf = (name: string) => runs.filter((r) => r.name === name);
const perRun = (name: string, i: number, p: number) => runsOf(name).map((r) => pct(ms(r.calls[i]!.samples), p));
const rows = CONFIGS.flatMap((c) =>
  CALLS.map((call, i) => {
    const xs = runsOf(c.name).flatMap((r) => r.calls[i]!.samples);
    const threads = [...new Set(runsOf(c.name).map((r) => r.httpThread))].join(", ");
    return [
      c.name,
      threads,
      call.name,
      f1(median(perRun(c.name, i, 50))),
      f1(median(perRun(c.name, i, 99))),
      perRun(c.name, i, 99).map(f1).join(" / "),
      f1(Math.max(...ms(xs))),
      xs.length,
      xs.filter((x) => !x.ok).length,
    ];
  }),
);
const p99 = (c: (typeof CONFIGS)[number], i: number) => median(perRun(c.name, i, 99));
const [quiet, busy, unfixed] = CONFIGS as [(typeof CONFIGS)[number], (typeof CONFIGS)[number], (typeof CONFIGS)[number]];
const ratio = (c: (typeof CONFIGS)[number], i: number) => p99(c, i) / p99(quiet, i);
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
const out = [
  `Machine: ${machine()}. ${pin ? "The server is pinned to core 0; wrk, the driver (Graph fake, custom code target), the push fakes (nice 10) and s3rver run on the other cores." : "Everything shares all cores."} wrk: ${CONNECTIONS} connections, ${seconds} s of GET by key per run; the calls run during it (from 1 s in to 1 s before the end), each kind one after another at up to ${rate}/s, timeout ${PROBE_TIMEOUT_MS / 1000} s (a timed-out call counts as failed, at its timeout). ${rounds} rounds, the three configurations taking turns, each run a fresh server; p50 and p99 are the medians of the rounds' (the machine is shared: the last table says how much CPU other processes took during each run). The broadcast (mix ${values.mix}; FCM fetches) is sent before the first call and is still going out during the window. "HTTP Client thread": the scheduling policy of Bun's shared fetch thread, from /proc.`,
  "",
  table(["run", "HTTP Client thread", "call", "p50 ms", "p99 ms", "p99 ms by round", "max ms", "calls", "failed"], rows),
  "",
  table(
    [
      "run",
      "round",
      "GET req/s",
      "GET p99 ms",
      "push deliveries in the window",
      "devices reached by the end",
      "other processes' CPU, % of the machine",
    ],
    runs.map((r) => [
      r.name,
      r.round,
      r.get.rps.toFixed(0),
      f1(r.get.p99),
      r.broadcast ? r.deliveredInWindow : "-",
      r.broadcast ? `${r.reached}/${tokens}` : "-",
      f1(r.otherCpu),
    ]),
  ),
  "",
  `Target: p99 with the broadcast within 2x of p99 without: ${CALLS.map((c, i) => `${c.name} ${verdict(ratio(busy, i) <= 2)} (${ratio(busy, i).toFixed(2)}x)`).join("; ")}. With the warm-up off: ${CALLS.map((c, i) => `${c.name} ${ratio(unfixed, i).toFixed(2)}x`).join("; ")}.`,
  "",
  "Social sign-in and custom code's `http` go through node:http, which in Bun 1.4 runs on the calling thread (here the main thread), not on the HTTP Client thread: of the three calls only the S3 upload uses that thread, and only it moves with the warm-up off.",
].join("\n");
console.log(out);
if (values.write) writeSection("outbound", `## Outbound calls during a broadcast (scripts/bench/outbound.ts)\n\n${out}`);
