// An open-loop load generator: it sends requests at a fixed rate whatever the server's latency (HTTP/1.1 pipelined
// on raw TCP connections), so a slow server meets the same offered load instead of a politely slower client, and each
// latency is measured from the moment the request was due (no coordinated omission). Phases of rates run back to back
// (e.g. 4x the capacity for 20 s, then a quarter for 5 s); for each phase it reports answers by status, latency
// percentiles of 2xx and of 503, and latency per 100 ms window (to see how fast p99 recovers). Prints one JSON line.
// Usage: bun run scripts/bench/open-loop.ts --url http://127.0.0.1:8080/path --phases 20000x20,2000x5
//        [--connections 64] [--header "name: value" ...]

import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    phases: { type: "string" },
    connections: { type: "string", default: "64" },
    header: { type: "string", multiple: true, default: [] },
  },
});
if (!values.url || !values.phases) throw new Error("--url and --phases (rate x seconds, comma separated) are needed");
const target = new URL(values.url);
if (target.hostname !== "127.0.0.1" && target.hostname !== "localhost") throw new Error("loopback only");
const phases = values.phases.split(",").map((p) => {
  const [rate, seconds] = p.split("x").map(Number);
  if (!(rate! > 0 && seconds! > 0 && seconds! <= 600 && rate! <= 500_000)) throw new Error(`bad phase ${p}`);
  return { rate: rate!, seconds: seconds! };
});
const extra = (values.header as string[]).map((h) => `${h}\r\n`).join("");
const request = Buffer.from(`GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n${extra}\r\n`);

interface PhaseResult {
  rate: number;
  seconds: number;
  sent: number;
  byStatus: Record<string, number>;
  ok: number[];
  shed: number[];
  /** p99 of 2xx per 100 ms window (by due time). */
  windows: { at: number; p99: number; n: number }[];
}

interface Conn {
  socket: Bun.Socket<undefined> | null;
  due: number[];
  phase: number[];
  head: number;
  buf: Buffer;
  out: Buffer[];
}

const results: PhaseResult[] = phases.map((p) => ({ ...p, sent: 0, byStatus: {}, ok: [], shed: [], windows: [] }));
const windowLat: Map<number, number[]>[] = phases.map(() => new Map());
const started = performance.now();
let phaseStart = started;

function onAnswer(c: Conn, status: number) {
  const due = c.due[c.head]!;
  const ph = c.phase[c.head]!;
  c.head++;
  if (c.head > 4096) {
    c.due = c.due.slice(c.head);
    c.phase = c.phase.slice(c.head);
    c.head = 0;
  }
  const lat = performance.now() - due;
  const r = results[ph]!;
  r.byStatus[status] = (r.byStatus[status] ?? 0) + 1;
  if (status >= 200 && status < 300) {
    r.ok.push(lat);
    const w = Math.floor((due - started) / 100);
    const list = windowLat[ph]!.get(w);
    if (list) list.push(lat);
    else windowLat[ph]!.set(w, [lat]);
  } else if (status === 503) r.shed.push(lat);
}

/** Parse as many whole responses as the buffer holds (Content-Length bodies; Burrow sends no chunked answers here). */
function parse(c: Conn) {
  let b = c.buf;
  for (;;) {
    const end = b.indexOf("\r\n\r\n");
    if (end < 0) break;
    const status = (b[9]! - 48) * 100 + (b[10]! - 48) * 10 + (b[11]! - 48);
    // "Content-Length: n" (any case): find "ength:" within the head, then read the digits.
    let len = 0;
    const at = b.indexOf("ength:");
    if (at > 0 && at < end) {
      let i = at + 6;
      while (b[i] === 32) i++;
      while (b[i]! >= 48 && b[i]! <= 57) len = len * 10 + (b[i++]! - 48);
    }
    if (b.length < end + 4 + len) break;
    b = b.subarray(end + 4 + len);
    onAnswer(c, status);
  }
  c.buf = b.length ? Buffer.from(b) : Buffer.alloc(0);
}

function flush(c: Conn) {
  while (c.socket && c.out.length) {
    const chunk = c.out[0]!;
    const n = c.socket.write(chunk);
    if (n < chunk.length) {
      c.out[0] = chunk.subarray(Math.max(0, n));
      return;
    }
    c.out.shift();
  }
}

const conns: Conn[] = await Promise.all(
  Array.from({ length: Number(values.connections) }, async () => {
    const c: Conn = { socket: null, due: [], phase: [], head: 0, buf: Buffer.alloc(0), out: [] };
    c.socket = await Bun.connect({
      hostname: target.hostname,
      port: Number(target.port),
      socket: {
        data(_s, data) {
          c.buf = c.buf.length ? Buffer.concat([c.buf, data]) : Buffer.from(data);
          parse(c);
        },
        drain() {
          flush(c);
        },
        close() {
          c.socket = null;
        },
      },
    });
    return c;
  }),
);

let next = 0;
for (let p = 0; p < phases.length; p++) {
  const { rate, seconds } = phases[p]!;
  phaseStart = performance.now();
  const total = Math.round(rate * seconds);
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const dueCount = Math.min(total, Math.floor(((now - phaseStart) * rate) / 1000));
    for (; sent < dueCount; sent++) {
      const c = conns[next++ % conns.length]!;
      if (!c.socket) continue;
      c.due.push(phaseStart + (sent * 1000) / rate);
      c.phase.push(p);
      c.out.push(request);
      flush(c);
    }
    await Bun.sleep(1);
  }
  results[p]!.sent = sent;
}
// The last answers, bounded: 15 s after the last send.
const until = performance.now() + 15_000;
while (performance.now() < until && conns.some((c) => c.socket && c.head < c.due.length)) await Bun.sleep(20);
for (const c of conns) c.socket?.end();

const pct = (xs: number[], q: number) => {
  if (!xs.length) return null;
  const s = Float64Array.from(xs).sort();
  return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 100) / 100;
};
const out = results.map((r, p) => ({
  rate: r.rate,
  seconds: r.seconds,
  sent: r.sent,
  byStatus: r.byStatus,
  unanswered: r.sent - Object.values(r.byStatus).reduce((a, b) => a + b, 0),
  okPerSecond: Math.round(r.ok.length / r.seconds),
  ok: { p50: pct(r.ok, 0.5), p99: pct(r.ok, 0.99), p999: pct(r.ok, 0.999), max: pct(r.ok, 1) },
  shed: { p50: pct(r.shed, 0.5), p99: pct(r.shed, 0.99) },
  windows: [...windowLat[p]!.entries()].sort((a, b) => a[0] - b[0]).map(([w, xs]) => ({ atMs: w * 100, p99: pct(xs, 0.99), n: xs.length })),
}));
console.log(JSON.stringify(out));
process.exit(0);
