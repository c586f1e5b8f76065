// A throwaway SMTP server (smtp-server, a devDependency) on a free loopback port that keeps every message it gets.
// Plain text only (no STARTTLS); logging in is optional but only burrow / s3cret is accepted.
import { SMTPServer } from "smtp-server";

export const SMTP_USER = "burrow";
export const SMTP_PASSWORD = "s3cret";

/** Burrow's `smtp` settings for the loopback server on `port`, signing in with the user it accepts. */
export function smtpSettings(port: number) {
  return { host: "127.0.0.1", port, secure: false, user: SMTP_USER, password: SMTP_PASSWORD, from: "App <app@example.com>" };
}

export interface ReceivedMail {
  /** Envelope sender and recipients. */
  from: string;
  to: string[];
  /** The user who logged in for this message, null without a login. */
  user: string | null;
  raw: string;
  subject: string;
  text: string;
}

const START_TIMEOUT_MS = 5_000;

export async function startSmtp(): Promise<{ port: number; messages: ReceivedMail[]; connections(): number; stop(): Promise<void> }> {
  const messages: ReceivedMail[] = [];
  let connections = 0;
  const server = new SMTPServer({
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    disableReverseLookup: true,
    closeTimeout: 1_000,
    socketTimeout: 10_000,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
      else callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const { subject, text } = parseMessage(raw);
        const env = session.envelope;
        messages.push({
          from: env.mailFrom ? env.mailFrom.address : "",
          to: env.rcptTo.map((r) => r.address),
          user: session.user ?? null,
          raw,
          subject,
          text,
        });
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the SMTP server did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      clearTimeout(timer);
      server.off("error", reject);
      resolve((server.server.address() as { port: number }).port);
    });
  });
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { port, messages, connections: () => connections, stop };
}

/** Subject and text body of a message as nodemailer writes it (single part or multipart, 7bit/QP/base64). */
function parseMessage(raw: string): { subject: string; text: string } {
  const { headers, body } = splitPart(raw);
  return { subject: headers.get("subject") ?? "", text: textBody(headers, body) ?? "" };
}

function splitPart(raw: string): { headers: Map<string, string>; body: string } {
  const end = raw.indexOf("\r\n\r\n");
  const head = end < 0 ? raw : raw.slice(0, end);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: end < 0 ? "" : raw.slice(end + 4) };
}

function textBody(headers: Map<string, string>, body: string): string | undefined {
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith("multipart/") && boundary) {
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith("--")) break;
      const p = splitPart(part.replace(/^\r\n/, ""));
      const text = textBody(p.headers, p.body);
      if (text !== undefined) return text;
    }
    return undefined;
  }
  if (!type.toLowerCase().startsWith("text/plain")) return undefined;
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const decoded =
    encoding === "base64"
      ? Buffer.from(body, "base64").toString("utf8")
      : encoding === "quoted-printable"
        ? Buffer.from(
            body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
            "latin1",
          ).toString("utf8")
        : body;
  return decoded.replace(/\r\n$/, "").replaceAll("\r\n", "\n");
}
