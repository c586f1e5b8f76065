// Auth benchmark against the built binary: token refreshes per second, a MAC-signed GET by key against the
// unsigned one (interleaved rounds, paired ratios), and read latency while 250 logins run at concurrency 10
// (password hashing must not block the event loop). Load from other processes; loopback; bounded.
// Usage: bun run scripts/bench/auth.ts [--seconds 4] [--rounds 3] [--build] [--write]

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { macSignature, normalizedString } from "../../src/auth/mac.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { runLoad, type LoadResult } from "./load.ts";
import { startBenchServer } from "./server.ts";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "4" }, rounds: { type: "string", default: "3" }, build: { type: "boolean", default: false }, write: { type: "boolean", default: false }, binary: { type: "string" } },
});
const seconds = Math.min(30, Math.max(1, Number(values.seconds)));
const rounds = Math.min(9, Math.max(1, Number(values.rounds)));
if (!Bun.which("wrk")) throw new Error("this benchmark needs wrk (apt-get install wrk): signed requests are replayed from a prepared file");
const server = await startBenchServer(values.binary ?? ensureBinary(values.build!));
const headers = server.headers;
const url = new URL(server.url);
const rows: (string | number)[][] = [];
const checks: string[][] = [];
const log = (s: string) => console.error(s);

async function login(username: string): Promise<{ access_token: string; mac_key: string; refresh_token: string }> {
  const r = await fetch(`${server.url}/user/accessToken`, { method: "POST", headers: { ...headers, "content-type": "application/x-www-form-urlencoded" }, body: `username=${username}&password=bench-password-1&token_type=mac` });
  if (!r.ok) throw new Error(`login ${username}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { access_token: string; mac_key: string; refresh_token: string };
}

/** wrk with one prepared request per line (path + Authorization), each used once: MAC nonces must not repeat. */
function runSigned(lines: string[], connections: number): Promise<LoadResult> {
  const file = join(server.dir, `signed-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, lines.join("\n") + "\n");
  const script = join(server.dir, "signed.lua");
  writeFileSync(script, `
local reqs = {}
for line in io.lines(${JSON.stringify(file)}) do
  local tab = line:find("\\t")
  reqs[#reqs + 1] = { line:sub(1, tab - 1), line:sub(tab + 1) }
end
local i = 0
request = function()
  i = i + 1
  local r = reqs[((i - 1) % #reqs) + 1]
  return wrk.format("GET", r[1], { ["accept"] = "application/vnd.service+json; version=0", ["x-service-api-key"] = ${JSON.stringify(headers["x-service-api-key"])}, ["authorization"] = r[2] })
end
`);
  const p = Bun.spawnSync(["wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, server.url], { stdout: "pipe" });
  const out = p.stdout.toString();
  const pct = (x: string) => {
    const m = new RegExp(`\\s${x}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    return m ? Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1) : NaN;
  };
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  if (requests > lines.length) throw new Error(`signed load sent ${requests} requests but only ${lines.length} were prepared; raise the count`);
  return Promise.resolve({ tool: "wrk 4.1", requests, rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]), p50: pct("50"), p99: pct("99"), errors });
}

try {
  await server.putSchema("bench", { fields: { title: { type: "string" }, n: { type: "integer" } } });
  const ids = await server.seed("bench", 10_000, (i) => ({ title: `object ${i}`, n: i }));
  await server.seed("user", 50, (i) => ({ username: `u${i}`, password: "bench-password-1" }));
  // All load comes from one address: the per-IP limit (300 a minute by default) would stop it at once.
  await server.putSettings("development", { rateLimits: { ipPerMinute: 1_000_000 } });

  // 1. Token refresh: 50 clients, each refreshing its own token chain, for a bounded time.
  const chains = await Promise.all(Array.from({ length: 50 }, (_, i) => login(`u${i}`)));
  let refreshes = 0;
  let refreshErrors = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    chains.map(async (c) => {
      let token = c.refresh_token;
      while (performance.now() < until) {
        const r = await fetch(`${server.url}/user/refreshToken`, { method: "POST", headers: { ...headers, "content-type": "application/x-www-form-urlencoded" }, body: `refresh_token=${token}&grant_type=refresh_token&token_type=mac` });
        if (!r.ok) {
          refreshErrors++;
          break;
        }
        token = ((await r.json()) as { refresh_token: string }).refresh_token;
        refreshes++;
      }
    }),
  );
  const refreshRate = refreshes / ((performance.now() - started) / 1000);
  log(`refresh: ${refreshRate.toFixed(0)}/s, ${refreshErrors} errors`);
  rows.push(["token refresh (50 clients, each its own rotating chain)", Math.round(refreshRate), "", "", refreshErrors]);
  checks.push(["token refresh >= 5,000/s", `${refreshRate.toFixed(0)}/s`, refreshRate >= 5000 && refreshErrors === 0 ? "met" : "MISSED"]);

  // 2. MAC-signed GET by key vs unsigned, interleaved, at concurrency 50.
  const creds = await login("u0");
  const ratios: number[] = [];
  let lastSigned: LoadResult | null = null;
  let lastPlain: LoadResult | null = null;
  for (let round = 0; round < rounds; round++) {
    const ts = String(Math.floor(Date.now() / 1000));
    const lines = Array.from({ length: 400_000 }, (_, i) => {
      const path = `/bench/${ids[i % ids.length]}`;
      const nonce = `r${round}n${i}`;
      const mac = macSignature(creds.mac_key, normalizedString({ ts, nonce, method: "GET", uri: path, host: url.hostname, port: Number(url.port) }));
      return `${path}\tMAC id="${creds.access_token}",ts="${ts}",nonce="${nonce}",mac="${mac}"`;
    });
    lastPlain = await runLoad({ base: server.url, method: "GET", paths: ids.map((id) => `/bench/${id}`), headers, connections: 50, seconds }, "wrk");
    lastSigned = await runSigned(lines, 50);
    ratios.push(lastSigned.rps / lastPlain.rps);
    log(`round ${round}: unsigned ${lastPlain.rps.toFixed(0)}/s, signed ${lastSigned.rps.toFixed(0)}/s (errors ${lastSigned.errors}), ${(100 * ratios.at(-1)!).toFixed(0)}%`);
    rows.push([`GET by key, unsigned, c=50 (round ${round + 1})`, Math.round(lastPlain.rps), lastPlain.p50, lastPlain.p99, lastPlain.errors]);
    rows.push([`GET by key, MAC-signed, c=50 (round ${round + 1})`, Math.round(lastSigned.rps), lastSigned.p50, lastSigned.p99, lastSigned.errors]);
  }
  const ratio = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
  checks.push(["MAC-signed GET by key >= 80% of unsigned (median of paired rounds)", `${(ratio * 100).toFixed(0)}% (${ratios.map((r) => (r * 100).toFixed(0)).join(" / ")})`, ratio >= 0.8 && lastSigned!.errors === 0 ? "met" : "MISSED"]);

  // 3. Reads during a login storm: 250 logins at concurrency 10 from another process.
  const readPaths = ids.map((id) => `/bench/${id}`);
  const idle = await runLoad({ base: server.url, method: "GET", paths: readPaths, headers, connections: 4, seconds }, "wrk");
  const storm = Bun.spawn([process.execPath, join(import.meta.dir, "login-storm.ts"), server.url, headers["x-service-api-key"]!, "250", "10"], { stdout: "pipe", stderr: "inherit" });
  await Bun.sleep(200);
  const during = await runLoad({ base: server.url, method: "GET", paths: readPaths, headers, connections: 4, seconds }, "wrk");
  const stormResult = JSON.parse(await new Response(storm.stdout).text()) as { ok: number; failed: number; ms: number };
  log(`reads idle p99 ${idle.p99} ms, during storm p99 ${during.p99} ms; storm ${stormResult.ok} ok in ${stormResult.ms} ms`);
  rows.push(["reads (c=4), idle", Math.round(idle.rps), idle.p50, idle.p99, idle.errors]);
  rows.push([`reads (c=4) during 250 logins at c=10 (${stormResult.ok} ok, ${stormResult.failed} failed, ${(stormResult.ms / 1000).toFixed(1)} s)`, Math.round(during.rps), during.p50, during.p99, during.errors]);
  const stormCovered = stormResult.ms >= seconds * 1000 * 0.8;
  checks.push(["read p99 during the login storm < 2x idle", `${during.p99.toFixed(2)} vs ${idle.p99.toFixed(2)} ms (${(during.p99 / idle.p99).toFixed(2)}x)${stormCovered ? "" : "; the storm ended before the read run"}`, during.p99 < 2 * idle.p99 && stormResult.failed === 0 ? "met" : "MISSED"]);

  const md = [
    "### Auth (scripts/bench/auth.ts)",
    "",
    `${machine()}; wrk 4.1, 1 thread, ${seconds} s per run, built binary, loopback; refresh and login clients are fetch loops in other processes.`,
    "",
    table(["case", "req/s", "p50 ms", "p99 ms", "errors"], rows),
    "",
    table(["target", "measured", ""], checks),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("auth", md);
} finally {
  await server.stop();
}
