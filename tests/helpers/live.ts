// Live streams in tests: create one (as any caller), connect to it in-process (app.handle) and read its
// Server-Sent Events one at a time with a deadline, or assert that nothing comes.

import { expect } from "bun:test";
import { KEYS, type TestApp } from "./app.ts";
import { macAuth, type MacCredentials, oauthAuth } from "./sign.ts";

export interface LiveEvent {
  id: number | null;
  event: string;
  data: any;
}

export type Caller = "anonymous" | "app" | MacCredentials;

/** Headers that make a request to `path` come from `who`. */
export function callerHeaders(who: Caller, method: string, path: string): Record<string, string> {
  if (who === "anonymous") return {};
  if (who === "app") return { authorization: oauthAuth(KEYS.devPublic, KEYS.devPrivate, method, `http://localhost${path}`) };
  return { authorization: macAuth(who, method, path) };
}

export async function createStream(t: TestApp, who: Caller = "anonymous"): Promise<{ stream: string; token: string }> {
  const r = await t.request("POST", "/_live/streams", { headers: callerHeaders(who, "POST", "/_live/streams") });
  expect([r.status, r.text]).toEqual([201, r.text]);
  return r.body;
}

export async function subscribe(t: TestApp, stream: string, name: string, spec: unknown, who: Caller = "anonymous") {
  const path = `/_live/streams/${stream}/subscriptions/${name}`;
  return t.request("PUT", path, { body: spec, headers: callerHeaders(who, "PUT", path) });
}

type Chunk = { done: boolean; value?: Uint8Array };

/** Reads the events of one SSE response in order. */
export class EventReader {
  private buffer = "";
  private readonly reader: { read(): Promise<Chunk>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();
  private pending: Promise<Chunk> | null = null;
  ended = false;
  /** The id of the last event (or id-only message) read: what EventSource would send as Last-Event-ID. */
  lastId: number | null = null;

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader() as unknown as EventReader["reader"];
  }

  /** The next event (id-only messages and comments move lastId and are skipped); null when the stream ended. */
  async next(timeoutMs = 3000): Promise<LiveEvent | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const cut = this.buffer.indexOf("\n\n");
      if (cut >= 0) {
        const block = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 2);
        let id: number | null = null;
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const [field, ...rest] = line.split(": ");
          const value = rest.join(": ");
          if (field === "id") id = Number(value);
          else if (field === "event") event = value;
          else if (field === "data") data.push(value);
        }
        if (id !== null) this.lastId = id;
        if (data.length === 0) continue;
        return { id, event, data: JSON.parse(data.join("\n")) };
      }
      if (this.ended) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms (buffered: ${JSON.stringify(this.buffer)})`);
      this.pending ??= this.reader.read();
      const r = await Promise.race([this.pending, Bun.sleep(left).then(() => null)]);
      if (r === null) continue;
      this.pending = null;
      if (r.done) this.ended = true;
      else if (r.value) this.buffer += this.decoder.decode(r.value, { stream: true });
    }
  }

  /** The next `n` events. */
  async take(n: number, timeoutMs = 3000): Promise<LiveEvent[]> {
    const out: LiveEvent[] = [];
    while (out.length < n) {
      const e = await this.next(timeoutMs);
      if (e === null) throw new Error(`the stream ended after ${out.length} of ${n} events`);
      out.push(e);
    }
    return out;
  }

  /** Events arriving within `ms` (none expected by callers that compare with []). */
  async quiet(ms = 250): Promise<LiveEvent[]> {
    const out: LiveEvent[] = [];
    const until = Date.now() + ms;
    for (;;) {
      const left = until - Date.now();
      if (left <= 0) return out;
      try {
        const e = await this.next(left);
        if (e === null) return out;
        out.push(e);
      } catch {
        return out;
      }
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}

/** Connect in-process; the first event (ready) is read and checked. */
export async function connect(
  t: TestApp,
  stream: string,
  token: string,
  opts: { lastEventId?: number; after?: number } = {},
): Promise<EventReader> {
  const headers: Record<string, string> = {};
  if (opts.lastEventId !== undefined) headers["last-event-id"] = String(opts.lastEventId);
  const q = opts.after === undefined ? "" : `&after=${opts.after}`;
  const res = await t.app.handle(
    new Request(`http://localhost/_live/streams/${stream}?token=${encodeURIComponent(token)}${q}`, { headers }),
  );
  expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
  const reader = new EventReader(res);
  const ready = await reader.next();
  expect(ready).toEqual({ id: null, event: "ready", data: { stream } });
  return reader;
}
