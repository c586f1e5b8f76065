// Load generation for benchmarks, always from a second process on loopback, bounded in time:
// wrk (preferred when installed: `apt-get install wrk`) or autocannon (from npm, always available).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface LoadSpec {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  base: string;
  method: "GET" | "POST" | "PUT";
  /** Paths to cycle through at random (e.g. one per object). */
  paths: string[];
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  tool: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export type Tool = "wrk" | "autocannon";

export function defaultTool(): Tool {
  return Bun.which("wrk") ? "wrk" : "autocannon";
}

const ROOT = join(import.meta.dir, "../..");

export async function runLoad(spec: LoadSpec, tool: Tool = defaultTool()): Promise<LoadResult> {
  return tool === "wrk" ? runWrk(spec) : runAutocannon(spec);
}

function toMs(v: string, unit: string): number {
  const n = Number(v);
  return unit === "us" ? n / 1000 : unit === "s" ? n * 1000 : unit === "m" ? n * 60_000 : n;
}

function parseWrk(out: string, stderr: string): LoadResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s|m)`).exec(out);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  if (!Number.isFinite(rps)) throw new Error(`wrk failed: ${out} ${stderr}`);
  return { tool: "wrk 4.1", requests, rps, p50: pct("50"), p99: pct("99"), errors };
}

/** Run wrk without blocking this process (a benchmark may sample the server while it runs). */
async function spawnWrk(script: string, spec: { base: string; connections: number; seconds: number }): Promise<LoadResult> {
  const proc = Bun.spawn(
    ["wrk", "-t1", `-c${spec.connections}`, `-d${spec.seconds}s`, "--timeout", "5s", "--latency", "-s", script, spec.base],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return parseWrk(out, err);
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "burrow-wrk-"));
  writeFileSync(join(dir, "paths.txt"), `${spec.paths.join("\n")}\n`);
  const headerLines = Object.entries(spec.headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join("\n");
  const script = `
local paths = {}
for line in io.lines(${JSON.stringify(join(dir, "paths.txt"))}) do paths[#paths + 1] = line end
wrk.method = ${JSON.stringify(spec.method)}
${spec.body !== undefined ? `wrk.body = ${JSON.stringify(spec.body)}` : ""}
${headerLines}
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, paths[math.random(#paths)])
end
`;
  writeFileSync(join(dir, "script.lua"), script);
  try {
    return await spawnWrk(join(dir, "script.lua"), spec);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * wrk replaying complete GET requests prepared in advance, each sent once, in order (signed requests must not
 * repeat a nonce). The Lua collector is stopped after loading, so the client never pauses mid-run; throws
 * when the run needed more requests than were prepared.
 */
export async function runPreparedGets(spec: {
  base: string;
  connections: number;
  seconds: number;
  requests: { path: string; headers: Record<string, string> }[];
}): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "burrow-wrk-"));
  const host = new URL(spec.base).host;
  // One request per line, CRLF written as a tab (header values here never hold one).
  const lines = spec.requests.map((r) =>
    [`GET ${r.path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\t"),
  );
  writeFileSync(join(dir, "requests.txt"), `${lines.join("\n")}\n`);
  writeFileSync(
    join(dir, "script.lua"),
    `
local reqs = {}
local n = 0
for line in io.lines(${JSON.stringify(join(dir, "requests.txt"))}) do
  n = n + 1
  reqs[n] = (line:gsub("\\t", "\\r\\n"))
end
collectgarbage("collect")
collectgarbage("stop")
local i = 0
request = function()
  i = i + 1
  return reqs[((i - 1) % n) + 1]
end
`,
  );
  let result: LoadResult;
  try {
    result = await spawnWrk(join(dir, "script.lua"), spec);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (result.requests > spec.requests.length)
    throw new Error(`wrk sent ${result.requests} requests but only ${spec.requests.length} were prepared; prepare more`);
  return result;
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const proc = Bun.spawn(["node", join(import.meta.dir, "autocannon-driver.mjs")], {
    cwd: ROOT,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  proc.stdin.write(JSON.stringify(spec));
  proc.stdin.end();
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out) as LoadResult;
}
