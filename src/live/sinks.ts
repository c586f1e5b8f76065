// Where a stream's events go: a Server-Sent Events response (what EventSource reads) or a WebSocket carrying the
// same messages as JSON text frames {"id", "event", "data"}. Each holds at most a bounded number of unread bytes:
// past it the client is too slow, the connection is closed and the client resumes from the change log.

import type { ServerWebSocket } from "bun";

export interface Sink {
  /** Queue an event; false when the connection is gone or was just closed for being too slow. */
  send(id: number | null, event: string, data: string): boolean;
  /** Move the client's resume point to `id` without an event (SSE: an id-only message; WebSocket: a ping frame). */
  position(id: number): void;
  /** A keep-alive the client ignores. */
  keepAlive(): void;
  /** Close the connection (after a final event, if any was sent). */
  close(): void;
  readonly closed: boolean;
  /**
   * Null while the buffer is less than half full; otherwise a promise that settles once the client read some of it
   * (or the connection went). A replay waits on it; the live feed does not wait: past the buffer it cuts off.
   */
  room(): Promise<void> | null;
}

const encoder = new TextEncoder();

export class SseSink implements Sink {
  readonly response: Response;
  closed = false;
  private controller!: ReadableStreamDefaultController<Uint8Array>;

  constructor(
    private readonly limitBytes: number,
    private readonly onGone: (reason: "closed" | "slow") => void,
  ) {
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
        },
        // Called when the connection took everything queued: the client is keeping up.
        pull: () => {
          this.unread = 0;
          const w = this.waiting;
          this.waiting = [];
          for (const resolve of w) resolve();
        },
        cancel: () => this.gone("closed"),
      },
      // Counted in chunks (a byte-length strategy costs 7 KB more per connection); bytes are counted in `unread`.
      { highWaterMark: 1 },
    );
    this.response = new Response(stream, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
    });
  }

  private waiting: (() => void)[] = [];
  /** Bytes queued since the connection last took everything (an upper bound of what the client has not read). */
  private unread = 0;

  room(): Promise<void> | null {
    if (this.closed || this.unread < this.limitBytes / 2) return null;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private gone(reason: "closed" | "slow"): void {
    if (this.closed) return;
    this.closed = true;
    for (const resolve of this.waiting) resolve();
    this.waiting = [];
    this.onGone(reason);
  }

  private write(text: string): boolean {
    if (this.closed) return false;
    const bytes = encoder.encode(text);
    this.controller.enqueue(bytes);
    this.unread += bytes.byteLength;
    if (this.unread > this.limitBytes) {
      this.gone("slow");
      this.end();
      return false;
    }
    return true;
  }

  send(id: number | null, event: string, data: string): boolean {
    return this.write(`${id === null ? "" : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`);
  }

  position(id: number): void {
    this.write(`id: ${id}\n\n`);
  }

  keepAlive(): void {
    this.write(": keep-alive\n\n");
  }

  close(): void {
    this.gone("closed");
    this.end();
  }

  private end(): void {
    try {
      this.controller.close();
    } catch {
      // already closed, or cancelled by the client
    }
  }
}

/** The data a live WebSocket carries (ServerWebSocket.data). */
export interface WsData {
  sink?: WsSink;
  open(ws: ServerWebSocket<WsData>): void;
  message?(ws: ServerWebSocket<WsData>, message: string | Buffer): void;
  close(ws: ServerWebSocket<WsData>): void;
  drain?(ws: ServerWebSocket<WsData>): void;
}

export class WsSink implements Sink {
  closed = false;

  constructor(
    private readonly ws: ServerWebSocket<WsData>,
    private readonly limitBytes: number,
    private readonly onGone: (reason: "closed" | "slow") => void,
  ) {}

  private waiting: (() => void)[] = [];

  room(): Promise<void> | null {
    if (this.closed || this.ws.getBufferedAmount() < this.limitBytes / 2) return null;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The socket wrote out what it held (Bun's drain). */
  drained(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const resolve of w) resolve();
  }

  gone(reason: "closed" | "slow"): void {
    if (this.closed) return;
    this.closed = true;
    this.drained();
    this.onGone(reason);
  }

  private write(text: string): boolean {
    if (this.closed) return false;
    this.ws.send(text);
    if (this.ws.getBufferedAmount() > this.limitBytes) {
      this.gone("slow");
      this.ws.close(1013, "too slow: reconnect with after=<last id>");
      return false;
    }
    return true;
  }

  send(id: number | null, event: string, data: string): boolean {
    return this.write(`{${id === null ? "" : `"id":${id},`}"event":${JSON.stringify(event)},"data":${data}}`);
  }

  position(id: number): void {
    this.write(`{"id":${id},"event":"ping","data":null}`);
  }

  keepAlive(): void {
    if (!this.closed) this.ws.ping();
  }

  close(): void {
    if (this.closed) return;
    this.gone("closed");
    this.ws.close(1000, "stream ended");
  }
}
