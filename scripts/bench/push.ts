// Push end to end: the built binary, the provider fakes in their own process (scripts/bench/push-fakes.ts), a
// broadcast to N registered devices of mixed platforms. Reports registrations/s through the API, how long the
// send takes to be acknowledged (its fan-out stored), deliveries/s per platform at the fakes, the server's peak
// RSS, data API GET p99 idle and during the broadcast (wrk), and a kill -9 mid-broadcast run: devices lost and
// repeats (with the first copy's apns-id / collapse key, or with another).
// Usage: bun run scripts/bench/push.ts [--tokens 100000,1000000] [--mix ios=0.6,android=0.3,web=0.1]
//        [--api-max 100000] [--kill-tokens 100000] [--rtt-ms 0] [--build] [--write]
// --rtt-ms makes the fakes answer that much later, like providers across the internet (not written to the docs).
// Tokens beyond --api-max are written straight into the environment's database (setup only, not measured).

import { Database } from "bun:sqlite";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { normalizeToken } from "../../src/push/tokens.ts";
import { tempDir } from "../../tests/helpers/app.ts";
import { startServerProcess, type ServerProcess } from "../../tests/helpers/spawn.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { runLoad, type LoadResult } from "./load.ts";
import { pushSettingsFor, startPushFakes } from "./push-fakes-client.ts";

const { values } = parseArgs({
  options: {
    tokens: { type: "string", default: "100000" },
    mix: { type: "string", default: "ios=0.6,android=0.3,web=0.1" },
    "api-max": { type: "string", default: "100000" },
    "kill-tokens": { type: "string", default: "100000" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    "no-pin": { type: "boolean", default: false },
    "rtt-ms": { type: "string", default: "0" },
  },
});
// With two or more cores the server gets core 0 to itself and everything else (this driver, the fakes, wrk)
// runs on the other cores, so the figures are the server's, not the scheduler's.
const cores = navigator.hardwareConcurrency;
const pin = !values["no-pin"] && cores >= 2 && Bun.which("taskset") !== null;
if (pin) Bun.spawnSync(["taskset", "-pc", `1-${cores - 1}`, String(process.pid)], { stdout: "ignore" });
const sizes = values.tokens!.split(",").map((s) => Math.min(2_000_000, Math.max(1000, Number(s))));
const apiMax = Math.min(1_000_000, Math.max(0, Number(values["api-max"])));
const killTokens = Number(values["kill-tokens"]);
const mix = Object.fromEntries(
  values
    .mix!.split(",")
    .map((p) => p.split("="))
    .map(([k, v]) => [k, Number(v)]),
) as Record<Platform, number>;
const exe = ensureBinary(values.build!);
const BROADCAST_LIMIT_MS = 600_000;

type Platform = "ios" | "android" | "web";
const PLATFORMS: Platform[] = ["ios", "android", "web"];
interface Tally {
  deliveries: number;
  devices: number;
  sameIdRepeats: number;
  otherIdRepeats: number;
  firstAt: number;
  lastAt: number;
}
type Stats = Record<Platform, Tally> & { now: number; webRejections: number; fcmRejections: number };
// The fakes, in a process of their own, at lower priority (push-fakes-client.ts).
const { fakes, proc: fakesProc } = await startPushFakes({ BENCH_PROVIDER_DELAY_MS: values["rtt-ms"]! });
const stats = async () => (await (await fetch(`${fakes.control}/stats`)).json()) as Stats;
const reset = () => fetch(`${fakes.control}/reset`, { method: "POST" });

const KEY = "bench-push-dev-key";
const ADMIN = { email: "bench@example.com", password: "bench-password" };
const api = { accept: "application/vnd.service+json; version=0", "x-service-api-key": KEY, "content-type": "application/json" };

/** Which platform device i is on, following the mix (deterministic). */
function platformOf(i: number): Platform {
  const x = ((i * 2654435761) >>> 0) / 2 ** 32;
  return x < mix.ios ? "ios" : x < mix.ios + mix.android ? "android" : "web";
}
function device(i: number): { type: "ios" | "androidgcm" | "web"; token: string; raw: unknown } {
  const p = platformOf(i);
  if (p === "ios") return { type: "ios", token: i.toString(16).padStart(64, "0"), raw: null };
  if (p === "android") return { type: "androidgcm", token: `bench-android-${i}`, raw: null };
  const sub = {
    endpoint: `${fakes.web.url}/push/${i.toString(16).padStart(24, "0")}`,
    keys: { p256dh: fakes.web.p256dh, auth: fakes.web.auth },
  };
  return { type: "web", token: normalizeToken("web", sub), raw: sub };
}

function rssMb(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
    return kb / 1024;
  } catch {
    return NaN;
  }
}

async function startServer(dir: string): Promise<{ server: ServerProcess; admin: Record<string, string> }> {
  // BURROW_BENCH_SERVER_CMD runs another command in place of the binary (e.g. `bun --cpu-prof src/main.ts`).
  const cmd = process.env.BURROW_BENCH_SERVER_CMD ? process.env.BURROW_BENCH_SERVER_CMD.split(" ") : [exe];
  const server = await startServerProcess(
    pin ? ["taskset", "-c", "0", ...cmd] : cmd,
    {
      BURROW_DIR: join(dir, "data"),
      BURROW_DEV_PUBLIC_KEY: KEY,
      BURROW_ADMIN_EMAIL: ADMIN.email,
      BURROW_ADMIN_PASSWORD: ADMIN.password,
      BURROW_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    },
    { stderrFile: join(process.env.BENCH_LOG_DIR ?? dir, `server-${Date.now()}.log`), serverDefaults: true },
  );
  const login = (await (await fetch(`${server.url}/_admin/api/login`, { method: "POST", body: JSON.stringify(ADMIN) })).json()) as {
    token: string;
  };
  return { server, admin: { authorization: `Bearer ${login.token}` } };
}

async function configure(url: string, admin: Record<string, string>): Promise<void> {
  const push = pushSettingsFor(fakes);
  const r = await fetch(`${url}/_admin/api/settings/development`, { method: "PUT", headers: admin, body: JSON.stringify({ push }) });
  if (!r.ok) throw new Error(`push settings: ${await r.text()}`);
}

/** Register devices [from, to) through the API, 64 at a time; answers registrations per second. */
async function registerViaApi(url: string, from: number, to: number): Promise<number> {
  const started = performance.now();
  let next = from;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < to) {
        const i = next++;
        const d = device(i);
        const path = d.type === "web" ? `/_push/tokens/web/x` : `/_push/tokens/${d.type}/${d.token}`;
        const body = d.type === "web" ? { user: `u${i}`, subscription: d.raw } : { user: `u${i}` };
        const r = await fetch(`${url}${path}`, { method: "POST", headers: api, body: JSON.stringify(body) });
        if (r.status !== 200) throw new Error(`register ${i}: ${r.status} ${await r.text()}`);
      }
    }),
  );
  return (to - from) / ((performance.now() - started) / 1000);
}

/** Write devices [from, to) straight into the development database (setup for the large runs). */
function registerDirect(dir: string, from: number, to: number): void {
  const db = new Database(join(dir, "data", "development.db"));
  db.exec("PRAGMA busy_timeout = 10000");
  const insert = db.prepare("INSERT OR IGNORE INTO _burrow_push_tokens (type, token, user, created) VALUES (?, ?, ?, ?)");
  const now = Date.now();
  for (let start = from; start < to; start += 50_000) {
    db.transaction(() => {
      for (let i = start; i < Math.min(to, start + 50_000); i++) {
        const d = device(i);
        insert.run(d.type, d.token, `u${i}`, now);
      }
    })();
  }
  db.close();
}

async function register(url: string, dir: string, n: number): Promise<number | null> {
  const viaApi = Math.min(n, apiMax);
  const rate = viaApi > 0 ? await registerViaApi(url, 0, viaApi) : null;
  if (n > viaApi) registerDirect(dir, viaApi, n);
  return rate;
}

async function idsOf(url: string, n: number): Promise<string[]> {
  const batch = Array.from({ length: n }, (_, i) => ({ title: `item ${i}`, n: i }));
  const r = (await (await fetch(`${url}/items`, { method: "POST", headers: api, body: JSON.stringify(batch) })).json()) as {
    succeeded: string[];
  };
  return r.succeeded;
}

const getLoad = (url: string, ids: string[], seconds: number): Promise<LoadResult> =>
  runLoad({ base: url, method: "GET", paths: ids.map((id) => `/items/${id}`), headers: api, connections: 4, seconds }, "wrk");

/** GET p99 as the median of ROUNDS back-to-back wrk runs (one 5 s run's p99 moved by 2x from run to run). */
const ROUNDS = 3;
const ROUND_S = 3;
interface Rounds {
  p99: number;
  rps: number;
  p99s: number[];
}
async function getRounds(url: string, ids: string[]): Promise<Rounds> {
  const runs: LoadResult[] = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await getLoad(url, ids, ROUND_S));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { p99: median(runs.map((r) => r.p99)), rps: median(runs.map((r) => r.rps)), p99s: runs.map((r) => r.p99) };
}

interface Delivery {
  byPlatform: Record<Platform, Tally>;
  lastAt: number;
  reached: number;
  webRejections: number;
  fcmRejections: number;
}

/** Poll the fakes until `expected` devices are reached (or the limit), sampling the server's RSS meanwhile. */
async function await_(expected: number, pid: number, peak: { rss: number }, stopWhen?: (reached: number) => boolean): Promise<Delivery> {
  const deadline = Date.now() + BROADCAST_LIMIT_MS;
  for (;;) {
    peak.rss = Math.max(peak.rss, rssMb(pid));
    const s = await stats();
    const reached = PLATFORMS.reduce((a, p) => a + s[p].devices, 0);
    const lastAt = Math.max(...PLATFORMS.map((p) => s[p].lastAt));
    if (reached >= expected || Date.now() > deadline || stopWhen?.(reached))
      return {
        byPlatform: { ios: s.ios, android: s.android, web: s.web },
        lastAt,
        reached,
        webRejections: s.webRejections,
        fcmRejections: s.fcmRejections,
      };
    await Bun.sleep(100);
  }
}

const rate = (t: Tally) => (t.deliveries > 1 && t.lastAt > t.firstAt ? t.deliveries / ((t.lastAt - t.firstAt) / 1000) : NaN);

async function broadcastRun(n: number) {
  const dir = tempDir("burrow-bench-push-");
  await reset();
  const { server, admin } = await startServer(dir);
  try {
    await configure(server.url, admin);
    const ids = await idsOf(server.url, 1000);
    const t0 = performance.now();
    const regRate = await register(server.url, dir, n);
    const setupS = (performance.now() - t0) / 1000;
    console.error(`${n}: ${setupS.toFixed(1)} s to register (${regRate ? `${regRate.toFixed(0)}/s through the API` : "direct"})`);
    await getLoad(server.url, ids, 2); // warm-up
    const idle = await getRounds(server.url, ids);
    const rssIdle = rssMb(server.proc.pid);
    const peak = { rss: rssIdle };
    const { now: fakeNow0 } = await stats();
    const sendStart = performance.now();
    const res = await fetch(`${server.url}/_push/notifications`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ payload: { message: "bench", badge: 1 } }),
    });
    const ackMs = performance.now() - sendStart;
    const queued = ((await res.json()) as { queued: number }).queued;
    if (queued !== n) throw new Error(`queued ${queued}, expected ${n}`);
    const during = getRounds(server.url, ids).then(async (r) => ({ ...r, endedAt: (await stats()).now }));
    const d = await await_(n, server.proc.pid, peak);
    const busy = await during;
    // Every round must fall inside the broadcast (a round after its end measures an idle server).
    if (d.lastAt < busy.endedAt) console.error(`${n}: the broadcast ended before the GET rounds did; raise --tokens`);
    // Both instants on the fakes' clock: just before the send, and the last delivery.
    const endToEndS = (d.lastAt - fakeNow0) / 1000;
    console.error(
      `${n}: ${d.reached} reached, ack ${ackMs.toFixed(0)} ms, rss ${rssIdle.toFixed(0)} -> ${peak.rss.toFixed(0)} MB, GET p99 ${idle.p99} (${idle.p99s.join(", ")}) -> ${busy.p99} (${busy.p99s.join(", ")}) ms at ${idle.rps.toFixed(0)} -> ${busy.rps.toFixed(0)} req/s`,
    );
    return { n, regRate, ackMs, d, endToEndS, rssIdle, rssPeak: peak.rss, idle, busy };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function killRun(n: number) {
  const dir = tempDir("burrow-bench-push-kill-");
  await reset();
  let { server, admin } = await startServer(dir);
  try {
    await configure(server.url, admin);
    registerDirect(dir, 0, n);
    const res = await fetch(`${server.url}/_push/notifications`, {
      method: "POST",
      headers: api,
      body: JSON.stringify({ payload: { message: "survive" } }),
    });
    const queued = ((await res.json()) as { queued: number }).queued;
    const peak = { rss: 0 };
    const before = await await_(n, server.proc.pid, peak, (reached) => reached >= n * 0.3);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const atKill = await stats();
    const deliveredBeforeKill = PLATFORMS.reduce((a, p) => a + atKill[p].deliveries, 0);
    ({ server } = await startServer(dir));
    const after = await await_(n, server.proc.pid, peak);
    await Bun.sleep(500); // let stragglers land before counting repeats
    const s = await stats();
    const repeatsSame = PLATFORMS.reduce((a, p) => a + s[p].sameIdRepeats, 0);
    const repeatsOther = PLATFORMS.reduce((a, p) => a + s[p].otherIdRepeats, 0);
    const reached = PLATFORMS.reduce((a, p) => a + s[p].devices, 0);
    console.error(
      `kill -9 at ${n}: ${deliveredBeforeKill} before the kill (${before.reached} devices), ${reached} reached, ${repeatsSame} repeats with the same id, ${repeatsOther} with another`,
    );
    return { n, queued, deliveredBeforeKill, reached, lost: n - reached, repeatsSame, repeatsOther, after };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs = [];
for (const n of sizes) runs.push(await broadcastRun(n));
const kill = killTokens > 0 ? await killRun(killTokens) : null;
fakesProc.stdin.end();
await fakesProc.exited;

const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "-");
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const rows = runs.map((r) => [
  r.n.toLocaleString("en"),
  r.regRate ? f0(r.regRate) : "direct",
  f0(r.ackMs),
  f0(rate(r.d.byPlatform.ios)),
  f0(rate(r.d.byPlatform.android)),
  f0(rate(r.d.byPlatform.web)),
  f0(r.n / r.endToEndS),
  `${f0(r.rssIdle)} / ${f0(r.rssPeak)}`,
  `${f1(r.idle.p99)} / ${f1(r.busy.p99)}`,
  `${r.d.reached}/${r.n}`,
]);
let out = [
  `Machine: ${machine()}. Mix ${values.mix}. ${pin ? "The server is pinned to core 0; the provider fakes (at nice 10), wrk (4 connections) and the driver run on the other cores." : "Server, provider fakes and wrk share all cores."} GET p99: the median of ${ROUNDS} back-to-back rounds of ${ROUND_S} s, idle and from the moment the send is acknowledged.`,
  "",
  table(
    [
      "devices",
      "register/s (API)",
      "send ack ms",
      "APNs/s",
      "FCM/s",
      "Web Push/s",
      "all/s end to end",
      "RSS MB idle / peak",
      "GET p99 ms idle / during",
      "reached",
    ],
    rows,
  ),
  "",
  kill
    ? table(
        [
          "kill -9 run",
          "devices",
          "delivered before the kill",
          "reached after restart",
          "lost",
          "repeats, same apns-id/collapse key",
          "repeats, other id",
        ],
        [["mid-broadcast", kill.n, kill.deliveredBeforeKill, kill.reached, kill.lost, kill.repeatsSame, kill.repeatsOther]],
      )
    : "",
].join("\n");
// The issue's targets, judged from this run.
const big = runs.reduce((a, r) => (r.n > a.n ? r : a), runs[0]!);
const apnsRates = runs.map((r) => rate(r.d.byPlatform.ios)).filter(Number.isFinite);
const worstP99 = Math.max(...runs.map((r) => r.busy.p99 / r.idle.p99));
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
const targets = [
  "",
  `Targets: APNs ≥ 10,000 deliveries/s: ${verdict(apnsRates.length > 0 && Math.min(...apnsRates) >= 10_000)} (lowest ${f0(Math.min(...apnsRates))}/s);`,
  `RSS < 200 MB during the ${big.n.toLocaleString("en")} broadcast: ${verdict(big.rssPeak < 200)} (peak ${f0(big.rssPeak)} MB);`,
  `GET p99 during a broadcast < 2x idle: ${verdict(worstP99 < 2)} (worst ${worstP99.toFixed(2)}x);`,
  kill
    ? `kill -9 mid-broadcast, 0 lost: ${verdict(kill.lost === 0)} (${kill.lost} lost); 0 duplicates: ${verdict(kill.repeatsSame + kill.repeatsOther === 0)} (${kill.repeatsSame} deliveries sent twice because the killed process had sent but not yet recorded them, each with its first apns-id / collapse key / Topic, so the device shows one; ${kill.repeatsOther} repeats with another id; the providers take no idempotency key, so a send the killed process made cannot be told from one it did not).`
    : "",
].join("\n");
out += targets;
console.log(out);
if (values.write) writeSection("push", `## Push (scripts/bench/push.ts)\n\n${out}`);
