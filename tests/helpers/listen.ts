// A test app listening on a free loopback port with the options `burrow serve` uses (serveOptions), and raw
// HTTP/1.1 exchanges for what fetch() will not send: malformed paths, unknown methods, oversized headers.

import { connect } from "node:net";
import { serveOptions } from "../../src/http/serve-options.ts";
import type { TestApp } from "./app.ts";

export interface RawResponse {
  /** 0 when the server closed the connection without answering. */
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The header lines as they came (names spelled as the server wrote them). */
  lines: string[];
  body: string;
}

export interface Listening {
  url: string;
  /** Send `head` (request line and headers, without the blank line) plus `body`; read until the server closes. */
  raw(head: string, body?: string): Promise<RawResponse>;
  stop(): void;
}

const RAW_TIMEOUT_MS = 3000;

export function listen(t: TestApp): Listening {
  t.app.listen(serveOptions({ http: { host: "127.0.0.1", port: 0 } }));
  const port = t.app.server!.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    raw: (head, body = "") => exchange(port, `${head}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n${body}`),
    stop: () => void t.app.server?.stop(true),
  };
}

function exchange(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), RAW_TIMEOUT_MS);
    socket.on("data", (d) => chunks.push(Buffer.from(d)));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(parse(Buffer.concat(chunks).toString("utf8")));
    });
    socket.write(request);
  });
}

function parse(text: string): RawResponse {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return { status: 0, headers: {}, lines: [], body: text };
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, lines, body: text.slice(end + 4) };
}
