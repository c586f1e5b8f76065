// Live data (docs/api/live.md): one stream per client under /_live/, opened on the first subscription, read with
// EventSource where there is one (it resumes with Last-Event-ID by itself) or else with streamed fetch resuming
// with ?after=<last id>. A stream that expired is created again with its subscriptions (onReset tells the caller).

import type { Json } from "./errors.ts";
import type { Client } from "./client.ts";
import { whereQuery } from "./query.ts";

export type LiveEventType = "create" | "update" | "delete" | "enter" | "leave";

export interface SubscribeOptions {
  where?: Record<string, unknown>;
  select?: string | string[];
  events?: LiveEventType[];
}

export interface SubscribeHandlers {
  /** The stream's session ended (logout, expiry, ...): no more events. */
  onEnd?: (reason: string) => void;
  /** Events were lost (the log moved on, a restore, a new stream): reload what you show. */
  onReset?: (reason: string) => void;
  /** The subscription no longer compiles (its schema or a field was removed). */
  onError?: (error: string) => void;
}

interface Sub extends SubscribeHandlers {
  body: object;
  onEvent: (e: Json) => void;
}

const EVENTS = ["create", "update", "delete", "enter", "leave", "reset", "end", "error"];

export class Live {
  private stream: Promise<{ stream: string; token: string }> | null = null;
  private subs = new Map<string, Sub>();
  private n = 0;
  private lastId: string | null = null;
  private close: (() => void) | null = null;
  private delay = 500;

  constructor(private c: Client) {}

  subscribe(schema: string, o: SubscribeOptions, onEvent: (e: Json) => void, h: SubscribeHandlers) {
    const name = `s${++this.n}`;
    const body: Record<string, unknown> = { schema, query: whereQuery(o.where) };
    if (o.select) body.select = Array.isArray(o.select) ? o.select.join(",") : o.select;
    if (o.events) body.events = o.events;
    const sub: Sub = { ...h, body, onEvent };
    this.subs.set(name, sub);
    const ready = this.put(name, sub).then(() => {
      if (this.subs.size && !this.close) this.connect();
    });
    ready.catch(() => this.subs.delete(name));
    const off = async () => {
      if (!this.subs.delete(name)) return;
      if (!this.subs.size) this.stop();
      await this.stream?.then((s) => this.c.call("DELETE", `/_live/streams/${s.stream}/subscriptions/${name}`)).catch(() => {});
    };
    return Object.assign(off, { ready });
  }

  private streamOf() {
    this.stream ??= this.c.call("POST", "/_live/streams").then((a) => a.body);
    this.stream.catch(() => (this.stream = null));
    return this.stream;
  }

  private async put(name: string, sub: Sub) {
    const s = await this.streamOf();
    await this.c.call("PUT", `/_live/streams/${s.stream}/subscriptions/${name}`, { body: sub.body });
  }

  private stop() {
    this.close?.();
    this.close = null;
  }

  /** The stream is gone (expired, or its session ended): a new one, with every subscription put again. */
  private async renew(reason: string) {
    this.stop();
    this.stream = null;
    this.lastId = null;
    try {
      await Promise.all([...this.subs].map(([n, s]) => this.put(n, s)));
      for (const s of this.subs.values()) s.onReset?.(reason);
      if (this.subs.size) this.connect();
    } catch {
      this.retry(() => this.renew(reason));
    }
  }

  private retry(f: () => void) {
    const t = setTimeout(f, this.delay);
    this.delay = Math.min(this.delay * 2, 30_000);
    this.close = () => clearTimeout(t);
  }

  private dispatch(event: string, data: string, id: string | null) {
    if (id) this.lastId = id;
    this.delay = 500;
    if (!EVENTS.includes(event)) return;
    const d = JSON.parse(data || "{}");
    const subs = [...this.subs.values()];
    if (event === "reset") for (const s of subs) s.onReset?.(d.reason);
    else if (event === "end") {
      this.stop();
      this.stream = null;
      this.subs.clear();
      for (const s of subs) s.onEnd?.(d.reason);
    } else {
      const sub = this.subs.get(d.subscription);
      if (event === "error") sub?.onError?.(d.error);
      else sub?.onEvent({ type: event, id, schema: d.schema, object: d.object });
    }
  }

  private async connect() {
    let stopped = false;
    this.close = () => {
      stopped = true;
    };
    const s = await this.streamOf();
    if (stopped) return;
    const url = `${this.c.base}/_live/streams/${s.stream}?token=${encodeURIComponent(s.token)}`;
    const ES = (globalThis as { EventSource?: typeof EventSource }).EventSource;
    if (ES && this.c.opts.eventSource !== false) {
      const es = new ES(url + (this.lastId ? `&after=${this.lastId}` : ""));
      this.close = () => es.close();
      for (const name of EVENTS)
        es.addEventListener(name, (e) => {
          if ((e as MessageEvent).data !== undefined)
            this.dispatch(name, (e as MessageEvent).data, (e as MessageEvent).lastEventId || null);
        });
      // The browser reconnects by itself; a CLOSED source was refused (the stream expired): start a new one.
      es.onerror = () => {
        if (es.readyState === 2 && this.close) void this.renew("the live stream was created again");
      };
      return;
    }
    const ctl = new AbortController();
    this.close = () => ctl.abort();
    this.read(url, ctl).catch(() => {});
  }

  /** One fetch of the stream, parsed as Server-Sent Events; reconnects (or renews) when it ends. */
  private async read(url: string, ctl: AbortController) {
    let r: Response;
    try {
      r = await (this.c.opts.fetch ?? fetch)(url + (this.lastId ? `&after=${this.lastId}` : ""), {
        signal: ctl.signal,
        headers: { accept: "text/event-stream" },
      });
    } catch {
      if (!ctl.signal.aborted) this.retry(() => this.connect());
      return;
    }
    if (r.status === 401) return void this.renew("the live stream was created again");
    if (r.ok && r.body) {
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      let ended = false;
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, "\n");
          let cut = buf.indexOf("\n\n");
          while (cut >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            let event = "message";
            let id: string | null = null;
            const data: string[] = [];
            for (const line of block.split("\n")) {
              const m = /^([a-z]+): ?(.*)$/.exec(line);
              if (m?.[1] === "event") event = m[2]!;
              else if (m?.[1] === "id") id = m[2]!;
              else if (m?.[1] === "data") data.push(m[2]!);
            }
            if (data.length) this.dispatch(event, data.join("\n"), id);
            else if (id) this.lastId = id;
            ended ||= event === "end";
            cut = buf.indexOf("\n\n");
          }
        }
      } catch {}
      if (ended) return;
    }
    if (!ctl.signal.aborted) this.retry(() => this.connect());
  }
}
