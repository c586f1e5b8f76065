// Login latency while someone floods sign-ups: one account logs in again and again (one login at a time) on an
// idle server, then while a second process creates accounts as fast as it can (every sign-up is an argon2id hash
// on the same hashing threads as the logins). This build against a baseline build, each on a fresh server.
// Rate limits are raised so the flood stands for many clients (as from many addresses).
// Usage: bun run scripts/bench/signup-flood.ts --baseline-ref <commit> [--seconds 15] [--concurrency 32]
//        [--logins 40] [--build] [--write]

import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildBaseline, ensureBinary, machine, table, writeSection } from "./env.ts";
import { startBenchServer, type BenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    "baseline-ref": { type: "string" },
    baseline: { type: "string" },
    seconds: { type: "string", default: "15" },
    concurrency: { type: "string", default: "32" },
    logins: { type: "string", default: "40" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const seconds = Math.min(60, Math.max(3, Number(values.seconds)));
const concurrency = Math.min(100, Math.max(1, Number(values.concurrency)));
const logins = Math.min(200, Math.max(5, Number(values.logins)));
if (!values.baseline && !values["baseline-ref"]) throw new Error("give --baseline-ref <commit> (or --baseline <binary>)");

const current = ensureBinary(values.build!);
const baseline = values.baseline ? { exe: values.baseline, cleanup() {} } : buildBaseline(values["baseline-ref"]!);
const label = values.baseline ?? values["baseline-ref"]!;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

/** Logins of one account, one at a time: `count` of them, or until `untilMs` (performance.now) when given. */
async function loginLatencies(s: BenchServer, count: number, untilMs?: number): Promise<number[]> {
  const out: number[] = [];
  const headers = { ...s.headers, "content-type": "application/x-www-form-urlencoded" };
  for (let i = 0; i < count && (untilMs === undefined || performance.now() < untilMs); i++) {
    const t0 = performance.now();
    const r = await fetch(`${s.url}/user/accessToken`, {
      method: "POST",
      headers,
      body: "username=alice&password=alice-password-1&token_type=mac",
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`login answered ${r.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

async function measure(name: string, exe: string) {
  const s = await startBenchServer(exe);
  try {
    // As if from many addresses: no per-IP limit stops the flood (the baseline has no sign-up limit to raise).
    await s
      .putSettings("development", { rateLimits: { ipPerMinute: 1_000_000, signupsPerIpPerHour: 1_000_000 } })
      .catch(() => s.putSettings("development", { rateLimits: { ipPerMinute: 1_000_000 } }));
    const r = await fetch(`${s.url}/user`, {
      method: "POST",
      headers: s.headers,
      body: JSON.stringify({ username: "alice", password: "alice-password-1" }),
    });
    if (r.status !== 201) throw new Error(`sign-up: ${r.status} ${await r.text()}`);
    await loginLatencies(s, 5); // warm-up
    const idle = await loginLatencies(s, logins);
    const storm = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, "signup-storm.ts"),
        s.url,
        s.headers["x-service-api-key"]!,
        String(seconds),
        String(concurrency),
        "flood",
      ],
      { stdout: "pipe", stderr: "inherit" },
    );
    await Bun.sleep(1000); // let the hashing queue fill
    const during = await loginLatencies(s, 10_000, performance.now() + (seconds - 2) * 1000);
    const flood = JSON.parse(await new Response(storm.stdout).text()) as { created: number; refused: number; ms: number };
    await storm.exited;
    const row = [
      name,
      pct(idle, 0.5),
      pct(idle, 0.99),
      during.length,
      pct(during, 0.5),
      pct(during, 0.99),
      Math.round((flood.created / flood.ms) * 1000),
    ];
    console.error(row.join("  "));
    return row;
  } finally {
    await s.stop();
  }
}

try {
  const rows = [
    await measure("this change", current),
    await measure(`baseline ${label}`, baseline.exe),
    await measure("this change (again)", current),
  ];
  const md = [
    `### Login latency under a sign-up flood (scripts/bench/signup-flood.ts)`,
    ``,
    `${machine()}; built binaries, loopback. One account logs in ${logins} times in a row on an idle server, then again and again for ${seconds - 3} s while a second process signs up new accounts at concurrency ${concurrency} (rate limits raised, as from many addresses). Every login and sign-up is an argon2id verification or hash on the hashing threads.`,
    ``,
    table(
      [
        "build",
        "idle login p50 ms",
        "idle p99 ms",
        "logins during the flood",
        "flood login p50 ms",
        "flood p99 ms",
        "sign-ups/s during the flood",
      ],
      rows,
    ),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("signup-flood", md);
} finally {
  baseline.cleanup();
}
