// One HTTP/1.1 exchange over a raw TCP or TLS socket, keeping the response's header lines exactly as they arrived
// (name case included), which fetch() normalizes away.

import { connect as tcpConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";

export interface RawAnswer {
  status: number;
  /** The header lines as received, e.g. `Set-Cookie: a=b`. */
  lines: string[];
  body: string;
}

const TIMEOUT_MS = 5000;

/**
 * Send `head` (request line and header lines, no blank line; `Connection: close` is added) and `body` to
 * 127.0.0.1:`port`, over TLS when `tls` is given (verified against `ca` for `servername`); read until the close.
 */
export function rawExchange(
  port: number,
  head: string,
  opts: { tls?: { ca: string; servername: string }; body?: string } = {},
): Promise<RawAnswer> {
  const request = `${head}\r\nConnection: close\r\n\r\n${opts.body ?? ""}`;
  return new Promise((resolve, reject) => {
    const socket = opts.tls
      ? tlsConnect({ host: "127.0.0.1", port, servername: opts.tls.servername, ca: opts.tls.ca, ALPNProtocols: ["http/1.1"] }, () =>
          socket.write(request),
        )
      : tcpConnect(port, "127.0.0.1", () => socket.write(request));
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () => socket.destroy(new Error(`no complete answer from 127.0.0.1:${port} within ${TIMEOUT_MS} ms`)),
      TIMEOUT_MS,
    );
    socket.on("data", (d) => chunks.push(Buffer.from(d)));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parse(Buffer.concat(chunks).toString("latin1")));
      } catch (e) {
        reject(e);
      }
    });
  });
}

function parse(text: string): RawAnswer {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`incomplete answer: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const chunked = lines.some((l) => /^transfer-encoding:\s*chunked/i.test(l));
  const raw = text.slice(end + 4);
  return { status: Number(statusLine!.split(" ")[1]), lines, body: Buffer.from(chunked ? dechunk(raw) : raw, "latin1").toString("utf8") };
}

function dechunk(raw: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    const size = parseInt(raw.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += raw.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** The header lines named `name`, compared case-insensitively (the lines themselves are left as received). */
export function headerLines(answer: RawAnswer, name: string): string[] {
  const lower = name.toLowerCase();
  return answer.lines.filter((l) => l.slice(0, l.indexOf(":")).trim().toLowerCase() === lower);
}
