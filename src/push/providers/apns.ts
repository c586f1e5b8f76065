// The APNs provider: Apple's provider API over one long-lived node:http2 session per credential (token auth
// with a cached ES256 JWT, or certificate auth with a .p12), many concurrent streams within the server's
// SETTINGS_MAX_CONCURRENT_STREAMS, a keep-alive PING, reconnection after GOAWAY, and every answer classified
// into a DeliveryResult (see provider.ts). Credential parsing lives in apns-auth.ts.

import type http2 from "node:http2";
import type Tls from "node:tls";
import { onFirstUse } from "../../on-first-use.ts";
import type { DeliveryResult, PushMessage, PushProvider } from "../provider.ts";
import { type ApnsAuth, ProviderTokens, readP12 } from "./apns-auth.ts";

const nodeHttp2 = onFirstUse(() => require("node:http2") as typeof http2);
const nodeTls = onFirstUse(() => require("node:tls") as typeof Tls);

export { validateApnsCredentials, type ApnsAuth } from "./apns-auth.ts";

export const APNS_PRODUCTION_URL = "https://api.push.apple.com";
export const APNS_SANDBOX_URL = "https://api.sandbox.push.apple.com";

export interface ApnsConfig {
  /** Base URL: APNS_SANDBOX_URL for development builds, APNS_PRODUCTION_URL for App Store/TestFlight builds. */
  url: string;
  /** `apns-topic`: the app's bundle id. */
  topic: string;
  /** An extra trusted CA (PEM), added to the system roots (tests, TLS-inspecting proxies). */
  ca?: string;
  auth: ApnsAuth;
  /** Per-send timeout in ms, from send() to the answer, connecting and queueing included (default 10 s). */
  timeoutMs?: number;
  /** Milliseconds since the epoch (JWT iat and refresh, apns-expiration); injectable for tests. */
  clock?: () => number;
  /** How often to PING the idle connection to keep it (and NAT/firewall state) alive (default 60 s). */
  pingIntervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const PING_INTERVAL_MS = 60_000;
/**
 * apns-expiration is now + 24 hours: APNs keeps the (collapsed) notification for an offline device for a day,
 * then drops it. A day-old chat or reminder alert is stale, and 0 ("deliver now or never") would lose every
 * notification sent while the phone is off or out of coverage.
 */
const EXPIRATION_S = 24 * 3600;
/** Our own ceiling on concurrent streams, whatever the server advertises (APNs advertises up to 1000). */
const MAX_STREAMS_CAP = 1000;
const MAX_RESPONSE_BYTES = 16 * 1024;
const HEX_TOKEN = /^[0-9a-fA-F]{16,400}$/;

interface Job {
  headers: http2.OutgoingHttpHeaders;
  body: string;
  resolve: (r: DeliveryResult) => void;
  timer: ReturnType<typeof setTimeout>;
  settled: boolean;
  stream?: http2.ClientHttp2Stream;
}

interface Connection {
  session: http2.ClientHttp2Session;
  /** The server's SETTINGS arrived: streams may be opened, up to maxStreams at a time. */
  ready: boolean;
  /** False after GOAWAY, an error or close: no new streams; in-flight ones finish or fail. */
  usable: boolean;
  maxStreams: number;
  active: number;
  error?: Error;
}

export function createApnsProvider(config: ApnsConfig): PushProvider {
  return new ApnsProvider(config);
}

class ApnsProvider implements PushProvider {
  readonly platform = "ios" as const;
  private readonly clock: () => number;
  private readonly timeoutMs: number;
  private readonly tokens: ProviderTokens | null = null;
  private readonly tlsOptions: http2.SecureClientSessionOptions = {};
  /** Why the credential cannot be used (reported by every send instead of throwing here). */
  private readonly configError: string | null = null;
  private readonly queue: Job[] = [];
  private conn: Connection | null = null;
  private pinger: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(private readonly config: ApnsConfig) {
    this.clock = config.clock ?? Date.now;
    this.timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (config.ca) this.tlsOptions.ca = [...nodeTls().rootCertificates, config.ca];
    try {
      if (config.auth.kind === "token") this.tokens = new ProviderTokens(config.auth, this.clock);
      else {
        const { certPem, keyPem } = readP12(config.auth.p12Base64, config.auth.password);
        this.tlsOptions.cert = certPem;
        this.tlsOptions.key = keyPem;
      }
    } catch (e) {
      this.configError = `APNs credentials: ${(e as Error).message}`;
    }
  }

  send(message: PushMessage): Promise<DeliveryResult> {
    if (this.configError) return Promise.resolve({ kind: "failed", reason: this.configError });
    if (this.closed) return Promise.resolve({ kind: "retry", reason: "the APNs provider is closed" });
    if (!HEX_TOKEN.test(message.token))
      return Promise.resolve({ kind: "invalid-token", reason: "BadDeviceToken (not a hex APNs device token)" });
    const aps = message.payload.aps as Record<string, unknown> | undefined;
    const alert = !!aps && (aps.alert !== undefined || aps.sound !== undefined || aps.badge !== undefined);
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": `/3/device/${message.token}`,
      "content-type": "application/json",
      "apns-topic": this.config.topic,
      "apns-push-type": alert ? "alert" : "background",
      "apns-priority": alert ? "10" : "5",
      "apns-expiration": String(Math.floor(this.clock() / 1000) + EXPIRATION_S),
    };
    if (/^[0-9a-fA-F]{32}$/.test(message.id)) {
      const h = message.id.toLowerCase();
      headers["apns-id"] = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    if (message.id && Buffer.byteLength(message.id) <= 64) headers["apns-collapse-id"] = message.id;
    return new Promise((resolve) => {
      const job: Job = { headers, body: JSON.stringify(message.payload), resolve, settled: false, timer: undefined as never };
      job.timer = setTimeout(() => {
        if (job.stream && !job.stream.closed) job.stream.close(nodeHttp2().constants.NGHTTP2_CANCEL);
        this.finish(job, { kind: "retry", reason: `no answer from APNs within ${this.timeoutMs} ms` });
      }, this.timeoutMs);
      this.queue.push(job);
      this.pump();
    });
  }

  close(): void {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.finish(job, { kind: "retry", reason: "the APNs provider is closed" });
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
    const conn = this.conn;
    this.conn = null;
    if (conn) {
      conn.usable = false;
      conn.session.close(); // In-flight streams finish (or time out); no new ones.
    }
  }

  private finish(job: Job, result: DeliveryResult): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    job.resolve(result);
  }

  /** Starts as many queued jobs as the connection allows; opens a connection when there is none. */
  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      if (this.queue[0]!.settled) {
        this.queue.shift();
        continue;
      }
      const conn = this.connection();
      if (!conn.ready || conn.active >= conn.maxStreams) return; // Pumped again on SETTINGS or a closed stream.
      this.start(conn, this.queue.shift()!);
    }
  }

  private connection(): Connection {
    if (this.conn?.usable) return this.conn;
    const session = nodeHttp2().connect(this.config.url, this.tlsOptions);
    const conn: Connection = { session, ready: false, usable: true, maxStreams: 1, active: 0 };
    this.conn = conn;
    session.unref(); // Pending sends keep the process alive through their timers; an idle session does not.
    const connectTimer = setTimeout(() => {
      if (!conn.ready) session.destroy(new Error(`could not connect to APNs within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    connectTimer.unref();
    const drop = () => {
      conn.usable = false;
      if (this.conn === conn) this.conn = null;
    };
    session.on("remoteSettings", (settings) => {
      const max = settings.maxConcurrentStreams ?? MAX_STREAMS_CAP;
      conn.maxStreams = Math.max(1, Math.min(max, MAX_STREAMS_CAP));
      if (!conn.ready) {
        conn.ready = true;
        clearTimeout(connectTimer);
        this.startPing();
      }
      this.pump();
    });
    session.on("goaway", () => {
      drop();
      session.close(); // Let the streams the server still answers finish.
      this.pump(); // Queued jobs go to a new connection.
    });
    session.on("error", (e) => {
      conn.error = e;
      drop();
    });
    session.on("close", () => {
      clearTimeout(connectTimer);
      const waitedForThis = this.conn === conn || this.conn === null;
      drop();
      if (!conn.ready && waitedForThis) {
        // Never connected: fail what waited for this connection rather than reconnect in a loop.
        const reason = `cannot connect to APNs (${conn.error?.message ?? "connection closed"})`;
        for (const job of this.queue.splice(0)) this.finish(job, { kind: "retry", reason });
      } else this.pump();
    });
    return conn;
  }

  private start(conn: Connection, job: Job): void {
    const jwt = this.tokens?.get();
    const headers = jwt ? { ...job.headers, authorization: `bearer ${jwt}` } : job.headers;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = conn.session.request(headers);
    } catch (e) {
      if (!conn.session.closed && !conn.session.destroyed) {
        // Not the session's fault (e.g. a header value Node refuses): reconnecting would not help.
        this.finish(job, { kind: "failed", reason: `APNs request refused locally (${(e as Error).message})` });
        return;
      }
      // The session went away between our last look and now (GOAWAY being processed): use another one.
      conn.usable = false;
      if (this.conn === conn) this.conn = null;
      this.queue.unshift(job);
      return;
    }
    conn.active++;
    job.stream = stream;
    let status = 0;
    let retryAfter: string | undefined;
    let size = 0;
    const chunks: Buffer[] = [];
    let error: Error | undefined;
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      const ra = h["retry-after"];
      retryAfter = Array.isArray(ra) ? ra[0] : ra;
    });
    stream.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
    });
    stream.on("end", () => {
      if (status) this.finish(job, this.classify(status, Buffer.concat(chunks).toString("utf8"), retryAfter, jwt));
    });
    stream.on("error", (e) => {
      error = e;
    });
    stream.on("close", () => {
      conn.active--;
      if (!job.settled) {
        const why =
          stream.rstCode === nodeHttp2().constants.NGHTTP2_REFUSED_STREAM
            ? "APNs refused the stream (REFUSED_STREAM)"
            : error
              ? `APNs stream failed (${error.message})`
              : conn.error
                ? `APNs connection failed (${conn.error.message})`
                : "the APNs connection closed before the answer";
        this.finish(job, { kind: "retry", reason: why });
      }
      this.pump();
    });
    stream.end(job.body);
  }

  private classify(status: number, body: string, retryAfter: string | undefined, jwt: string | undefined): DeliveryResult {
    if (status === 200) return { kind: "sent" };
    let reason = `HTTP ${status}`;
    try {
      const parsed = JSON.parse(body) as { reason?: unknown };
      if (typeof parsed.reason === "string" && parsed.reason) reason = parsed.reason;
    } catch {
      // No JSON body: keep the status.
    }
    if (status === 410 || (status === 400 && (reason === "BadDeviceToken" || reason === "DeviceTokenNotForTopic"))) {
      return { kind: "invalid-token", reason };
    }
    if (status === 403 && jwt && (reason === "ExpiredProviderToken" || reason === "InvalidProviderToken")) {
      const wait = this.tokens!.refused(jwt);
      return wait > 0 ? { kind: "retry", reason, afterMs: wait } : { kind: "retry", reason };
    }
    if (status === 429 || status >= 500 || reason === "IdleTimeout") {
      const afterMs = parseRetryAfter(retryAfter, this.clock());
      return afterMs === undefined ? { kind: "retry", reason } : { kind: "retry", reason, afterMs };
    }
    return { kind: "failed", reason: `APNs ${status} ${reason}` };
  }

  private startPing(): void {
    if (this.pinger) return;
    this.pinger = setInterval(() => {
      const conn = this.conn;
      if (!conn?.ready || !conn.usable) return;
      let answered = false;
      const timer = setTimeout(() => {
        if (!answered) conn.session.destroy(new Error("APNs did not answer a PING"));
      }, this.timeoutMs);
      timer.unref();
      try {
        conn.session.ping((err) => {
          answered = true;
          clearTimeout(timer);
          if (err) conn.session.destroy(err);
        });
      } catch (e) {
        clearTimeout(timer);
        conn.session.destroy(e as Error);
      }
    }, this.config.pingIntervalMs ?? PING_INTERVAL_MS);
    this.pinger.unref();
  }
}

/** Retry-After as delta-seconds or an HTTP date, in ms from now. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
