// Many Server-Sent Events clients in one process for scripts/bench/live.ts: raw TCP connections to /_live streams
// (HTTP/1.1, chunked bodies parsed by hand: thousands of fetch streams cost more than the server under test), each
// reconnecting with Last-Event-ID after 200 ms when its connection drops, as EventSource does. Commands come as JSON
// lines on stdin, answers as JSON lines on stdout:
//   {"cmd": "open", "url": "http://127.0.0.1:port", "streams": [[id, token], ...]}  -> {"open": n} once all are ready
//   {"cmd": "watch", "marker": "m-17", "timeoutMs": 5000} -> {"times": [epoch ms at which each stream got it]}
//   {"cmd": "count"} -> {"events": total events received, "streams": n}
//   {"cmd": "seqs", "list": [1, 2, 4]} -> {"missing": n, "duplicates": n, "streams": n}: did each stream get each once?
//   {"cmd": "close"} -> {"closed": n}

import { connect, type Socket } from "bun";

interface Conn {
  id: string;
  token: string;
  socket: Socket<Conn> | null;
  /** Raw bytes not yet parsed (headers, then chunk framing). */
  raw: string;
  headersDone: boolean;
  /** SSE text not yet cut into events. */
  text: string;
  chunkLeft: number;
  ready: boolean;
  lastId: string | null;
  /** seq numbers of `s<n>-` markers received, to find gaps and doubles after a kill. */
  seqs: Map<number, number>;
}

const now = () => performance.timeOrigin + performance.now();
let base = new URL("http://127.0.0.1");
let conns: Conn[] = [];
let events = 0;
let closing = false;
const watchers: { marker: string; times: Map<Conn, number>; done: () => void }[] = [];
let readyWaiter: (() => void) | null = null;
const decoder = new TextDecoder();

function open(c: Conn): void {
  c.raw = "";
  c.headersDone = false;
  c.text = "";
  c.chunkLeft = 0;
  void connect<Conn>({
    hostname: base.hostname,
    port: Number(base.port),
    data: c,
    socket: {
      open(s) {
        c.socket = s;
        s.write(
          `GET /_live/streams/${c.id}?token=${c.token} HTTP/1.1\r\nHost: ${base.host}\r\nAccept: text/event-stream\r\n${c.lastId ? `Last-Event-ID: ${c.lastId}\r\n` : ""}\r\n`,
        );
      },
      data(_s, bytes) {
        c.raw += decoder.decode(bytes);
        parse(c);
      },
      close() {
        c.socket = null;
        if (!closing) setTimeout(() => open(c), 200);
      },
      error() {},
    },
  }).catch(() => {
    if (!closing) setTimeout(() => open(c), 200);
  });
}

function parse(c: Conn): void {
  if (!c.headersDone) {
    const end = c.raw.indexOf("\r\n\r\n");
    if (end < 0) return;
    if (!c.raw.startsWith("HTTP/1.1 200")) {
      process.stderr.write(`stream ${c.id}: ${c.raw.slice(0, 200)}\n`);
      c.socket?.end();
      return;
    }
    c.raw = c.raw.slice(end + 4);
    c.headersDone = true;
  }
  // Chunked transfer coding: <hex size>\r\n<data>\r\n ...
  for (;;) {
    if (c.chunkLeft > 0) {
      const take = Math.min(c.chunkLeft, c.raw.length);
      c.text += c.raw.slice(0, take);
      c.raw = c.raw.slice(take);
      c.chunkLeft -= take;
      if (c.chunkLeft > 0) break;
      c.chunkLeft = -2; // the CRLF after the data
    }
    if (c.chunkLeft === -2) {
      if (c.raw.length < 2) break;
      c.raw = c.raw.slice(2);
      c.chunkLeft = 0;
    }
    const line = c.raw.indexOf("\r\n");
    if (line < 0) break;
    c.chunkLeft = Number.parseInt(c.raw.slice(0, line), 16);
    c.raw = c.raw.slice(line + 2);
    if (c.chunkLeft === 0) break;
  }
  events_(c);
}

function events_(c: Conn): void {
  for (;;) {
    const cut = c.text.indexOf("\n\n");
    if (cut < 0) return;
    const block = c.text.slice(0, cut);
    c.text = c.text.slice(cut + 2);
    const idAt = block.startsWith("id: ") ? 0 : block.indexOf("\nid: ") + 1;
    if (idAt > 0 || block.startsWith("id: ")) {
      const end = block.indexOf("\n", idAt);
      c.lastId = block.slice(idAt + 4, end < 0 ? undefined : end);
    }
    if (!block.includes("data: ")) continue;
    if (block.includes("event: ready")) {
      c.ready = true;
      if (readyWaiter && conns.every((x) => x.ready)) readyWaiter();
      continue;
    }
    events++;
    const s = block.indexOf('"s');
    if (s >= 0) {
      const m = /"s(\d+)-/.exec(block);
      if (m) {
        const n = Number(m[1]);
        c.seqs.set(n, (c.seqs.get(n) ?? 0) + 1);
      }
    }
    for (const w of watchers)
      if (!w.times.has(c) && block.includes(w.marker)) {
        w.times.set(c, now());
        if (w.times.size === conns.length) w.done();
      }
  }
}

function reply(o: unknown): void {
  process.stdout.write(`${JSON.stringify(o)}\n`);
}

async function handle(msg: Record<string, any>): Promise<void> {
  switch (msg.cmd) {
    case "open": {
      base = new URL(msg.url);
      conns = (msg.streams as [string, string][]).map(([id, token]) => ({
        id,
        token,
        socket: null,
        raw: "",
        headersDone: false,
        text: "",
        chunkLeft: 0,
        ready: false,
        lastId: null,
        seqs: new Map(),
      }));
      const ready = new Promise<void>((r) => (readyWaiter = r));
      for (let i = 0; i < conns.length; i++) {
        open(conns[i]!);
        if (i % 200 === 199) await Bun.sleep(20); // do not flood the listen backlog
      }
      await ready;
      readyWaiter = null;
      reply({ open: conns.length });
      return;
    }
    case "watch": {
      const w = { marker: msg.marker as string, times: new Map<Conn, number>(), done: () => {} };
      const finished = new Promise<void>((r) => (w.done = r));
      watchers.push(w);
      await Promise.race([finished, Bun.sleep(msg.timeoutMs ?? 5000)]);
      watchers.splice(watchers.indexOf(w), 1);
      reply({ times: [...w.times.values()] });
      return;
    }
    case "count":
      reply({ events, streams: conns.length, connected: conns.filter((c) => c.socket).length });
      return;
    case "seqs": {
      let missing = 0;
      let duplicates = 0;
      for (const c of conns) {
        for (const n of msg.list as number[]) if (!c.seqs.has(n)) missing++;
        for (const k of c.seqs.values()) if (k > 1) duplicates += k - 1;
      }
      reply({ missing, duplicates, streams: conns.length });
      return;
    }
    case "close":
      closing = true;
      for (const c of conns) c.socket?.end();
      reply({ closed: conns.length });
      return;
  }
}

let buffered = "";
for await (const chunk of Bun.stdin.stream()) {
  buffered += decoder.decode(chunk);
  for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim()) await handle(JSON.parse(line));
  }
}
