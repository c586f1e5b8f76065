// A fake APNs for provider tests: a real HTTP/2 TLS server (node:http2.createSecureServer) on a free loopback
// port, with a test PKI made in-process by node-forge (no openssl binary). It checks what Apple checks (method,
// path, provider JWT or client certificate, topic and apns-* headers, a JSON body of at most 4096 bytes), records
// every accepted delivery, and answers chosen tokens with errors, delays or a GOAWAY on demand.
// makeApnsTestPki() also makes the client credentials: a .p8 key and .p12 files signed by the fake's CA.

import { generateKeyPairSync, verify, X509Certificate, type KeyObject } from "node:crypto";
import http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import forge from "node-forge";

export const TEST_TOPIC = "com.example.app";
export const TEST_KEY_ID = "KEY1234567";
export const TEST_TEAM_ID = "TEAM123456";
export const TEST_P12_PASSWORD = "p12-s3cret";

export interface ApnsTestPki {
  caPem: string;
  server: { certPem: string; keyPem: string };
  /** Token auth: the .p8 (PKCS#8 PEM) and the public key the fake verifies JWTs with. */
  p8: { pem: string; publicKey: KeyObject; keyId: string; teamId: string };
  /** Certificate auth: a .p12 (base64, TEST_P12_PASSWORD) holding the client key, its certificate and the CA. */
  p12Base64: string;
  /** A .p12 with the client certificate only (no key). */
  p12NoKeyBase64: string;
  /** A .p12 with a key and only the CA certificate (no certificate matching the key). */
  p12WrongCertBase64: string;
}

function rsaKey(): forge.pki.rsa.PrivateKey {
  // Node's generator is native and fast; forge's pure-JS one takes seconds.
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return forge.pki.privateKeyFromPem(privateKey.export({ type: "pkcs1", format: "pem" }).toString()) as forge.pki.rsa.PrivateKey;
}

function certificate(opts: {
  key: forge.pki.rsa.PrivateKey;
  signer: forge.pki.rsa.PrivateKey;
  issuer?: forge.pki.Certificate;
  subject: forge.pki.CertificateField[];
  serial: string;
  extensions: object[];
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(opts.key.n, opts.key.e);
  cert.serialNumber = opts.serial;
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  cert.setSubject(opts.subject);
  cert.setIssuer(opts.issuer ? opts.issuer.subject.attributes : opts.subject);
  cert.setExtensions(opts.extensions);
  cert.sign(opts.signer, forge.md.sha256.create());
  return cert;
}

function p12(key: forge.pki.rsa.PrivateKey | null, certs: forge.pki.Certificate[]): string {
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, certs, TEST_P12_PASSWORD, { algorithm: "3des" });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary").toString("base64");
}

/** A CA, a server certificate for 127.0.0.1, and client credentials of both kinds (about 0.3 s). */
export function makeApnsTestPki(): ApnsTestPki {
  const caKey = rsaKey();
  const ca = certificate({
    key: caKey,
    signer: caKey,
    subject: [{ name: "commonName", value: "Burrow Test APNs CA" }],
    serial: "01",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true },
    ],
  });
  const serverKey = rsaKey();
  const server = certificate({
    key: serverKey,
    signer: caKey,
    issuer: ca,
    subject: [{ name: "commonName", value: "127.0.0.1" }],
    serial: "02",
    extensions: [
      {
        name: "subjectAltName",
        altNames: [
          { type: 7, ip: "127.0.0.1" },
          { type: 2, value: "localhost" },
        ],
      },
      { name: "extKeyUsage", serverAuth: true },
    ],
  });
  const clientKey = rsaKey();
  const client = certificate({
    key: clientKey,
    signer: caKey,
    issuer: ca,
    subject: [
      { type: "0.9.2342.19200300.100.1.1", value: TEST_TOPIC },
      { name: "commonName", value: `Apple Push Services: ${TEST_TOPIC}` },
      { name: "organizationalUnitName", value: TEST_TEAM_ID },
      { name: "countryName", value: "US" },
    ],
    serial: "03",
    extensions: [{ name: "extKeyUsage", clientAuth: true }],
  });
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    caPem: forge.pki.certificateToPem(ca),
    server: { certPem: forge.pki.certificateToPem(server), keyPem: forge.pki.privateKeyToPem(serverKey) },
    p8: {
      pem: ec.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      publicKey: ec.publicKey,
      keyId: TEST_KEY_ID,
      teamId: TEST_TEAM_ID,
    },
    // The CA goes first so that picking the leaf by its key (not by position) is exercised.
    p12Base64: p12(clientKey, [ca, client]),
    p12NoKeyBase64: p12(null, [client]),
    p12WrongCertBase64: p12(clientKey, [ca]),
  };
}

/** A canned answer for one device token. */
export interface FakeAnswer {
  status?: number;
  reason?: string;
  /** Retry-After header value. */
  retryAfter?: string;
  /** Wait this long before answering (with `status`, or 200 after the normal checks). */
  delayMs?: number;
}

export interface FakeDelivery {
  token: string;
  apnsId: string;
  headers: Record<string, string>;
  payload: unknown;
  /** Which connection (1-based, in accept order) carried it. */
  connection: number;
  /** "jwt" or "certificate". */
  auth: string;
}

export interface ApnsFake {
  url: string;
  ca: string;
  deliveries: FakeDelivery[];
  /** TLS sessions accepted so far. */
  readonly connections: number;
  /** Distinct provider JWTs that passed verification. */
  jwtsSeen: Set<string>;
  /** Every request that reached the handler (accepted or not). */
  readonly requests: number;
  /** Most streams open at once on one connection. */
  readonly peakStreams: number;
  /** PING frames received. */
  readonly pings: number;
  /** Answer `token` this way from now on (undefined: back to normal). */
  answer(token: string, answer: FakeAnswer | undefined): void;
  /**
   * After `n` more accepted deliveries, answer the n-th and send GOAWAY on its connection (once). Graceful: the
   * streams already open are still answered; abrupt: the connection is destroyed and they get no answer.
   */
  goawayAfter(n: number, mode?: "graceful" | "abrupt"): void;
  close(): Promise<void>;
}

export interface ApnsFakeOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS to advertise (default: the server's default). */
  maxConcurrentStreams?: number;
  /** Delay every answer by this many ms (to make streams overlap). */
  delayMs?: number;
  topic?: string;
  /**
   * Called for every accepted delivery instead of recording it in `deliveries` (benchmarks: a million records
   * with their headers would not fit).
   */
  onDelivery?: (token: string, apnsId: string) => void;
}

const JSON_TYPE = { "content-type": "application/json" };

export async function startApnsFake(pki: ApnsTestPki, opts: ApnsFakeOptions = {}): Promise<ApnsFake> {
  const topic = opts.topic ?? TEST_TOPIC;
  const answers = new Map<string, FakeAnswer>();
  const deliveries: FakeDelivery[] = [];
  const jwtsSeen = new Set<string>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let connections = 0;
  let requests = 0;
  let peakStreams = 0;
  let pings = 0;
  let goawayIn = 0;
  let goawayMode: "graceful" | "abrupt" = "graceful";

  const server = http2.createSecureServer({
    key: pki.server.keyPem,
    cert: pki.server.certPem,
    ca: pki.caPem,
    requestCert: true,
    rejectUnauthorized: false,
    allowHTTP1: false,
    ...(opts.maxConcurrentStreams ? { settings: { maxConcurrentStreams: opts.maxConcurrentStreams } } : {}),
  });
  const sessionNo = new WeakMap<http2.Http2Session, { n: number; active: number }>();
  server.on("session", (session) => {
    connections++;
    sessions.add(session);
    sessionNo.set(session, { n: connections, active: 0 });
    session.on("close", () => sessions.delete(session));
    session.on("error", () => {});
    session.on("ping", () => pings++);
  });

  /** The auth failure reason, or the auth kind that passed. */
  function checkAuth(session: http2.Http2Session, authorization: string | undefined): { ok: string } | { fail: string } {
    if (authorization) {
      const m = /^bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(authorization);
      if (!m) return { fail: "InvalidProviderToken" };
      const [, h, c, s] = m as unknown as [string, string, string, string];
      let header: { alg?: string; kid?: string };
      let claims: { iss?: string; iat?: number };
      try {
        header = JSON.parse(Buffer.from(h, "base64url").toString());
        claims = JSON.parse(Buffer.from(c, "base64url").toString());
      } catch {
        return { fail: "InvalidProviderToken" };
      }
      // A provider token already verified is not verified again (providers reuse one for 20-60 minutes).
      const known = jwtsSeen.has(authorization.slice(7));
      const signed =
        known ||
        verify("sha256", Buffer.from(`${h}.${c}`), { key: pki.p8.publicKey, dsaEncoding: "ieee-p1363" }, Buffer.from(s, "base64url"));
      if (!signed || header.alg !== "ES256" || header.kid !== pki.p8.keyId || claims.iss !== pki.p8.teamId)
        return { fail: "InvalidProviderToken" };
      if (typeof claims.iat !== "number" || Math.abs(Date.now() / 1000 - claims.iat) > 3600) return { fail: "ExpiredProviderToken" };
      jwtsSeen.add(authorization.slice(7));
      return { ok: "jwt" };
    }
    const socket = session.socket as TLSSocket;
    const peer = socket.getPeerCertificate?.(true);
    if (!peer?.raw) return { fail: "MissingProviderToken" };
    if (!socket.authorized) return { fail: "BadCertificate" }; // Not signed by the test CA.
    const subject = new X509Certificate(peer.raw).subject;
    if (!subject.split("\n").includes(`UID=${topic}`)) return { fail: "BadCertificate" };
    return { ok: "certificate" };
  }

  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    requests++;
    const session = stream.session!;
    const info = sessionNo.get(session)!;
    info.active++;
    peakStreams = Math.max(peakStreams, info.active);
    stream.on("close", () => info.active--);
    stream.on("error", () => {});
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const h = (k: string) => (typeof headers[k] === "string" ? (headers[k] as string) : undefined);
      const reply = (status: number, reason?: string, extra: Record<string, string> = {}) => {
        if (stream.closed || stream.destroyed) return;
        const body = reason ? JSON.stringify(status === 410 ? { reason, timestamp: Date.now() } : { reason }) : "";
        stream.respond({ ":status": status, "apns-id": h("apns-id") ?? crypto.randomUUID(), ...(body ? JSON_TYPE : {}), ...extra });
        // Bun's server sends end("") as an empty DATA frame that HTTP/2 clients count as invalid (after ~1000 the
        // client drops the connection with "Too many invalid HTTP/2 frames"); APNs sends no body on a 200.
        if (body) stream.end(body);
        else stream.end();
      };
      const m = /^\/3\/device\/([0-9a-fA-F]+)$/.exec(h(":path") ?? "");
      const body = Buffer.concat(chunks);
      const auth = checkAuth(session, h("authorization"));
      let payload: unknown;
      const fail =
        h(":method") !== "POST"
          ? [405, "MethodNotAllowed"]
          : !m
            ? [404, "BadPath"]
            : "fail" in auth
              ? [403, auth.fail]
              : !h("apns-topic")
                ? [400, "MissingTopic"]
                : h("apns-topic") !== topic
                  ? [400, "BadTopic"]
                  : !["alert", "background"].includes(h("apns-push-type") ?? "")
                    ? [400, "InvalidPushType"]
                    : !["5", "10"].includes(h("apns-priority") ?? "")
                      ? [400, "BadPriority"]
                      : !/^\d+$/.test(h("apns-expiration") ?? "")
                        ? [400, "BadExpirationDate"]
                        : !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(h("apns-id") ?? "")
                          ? [400, "BadMessageId"]
                          : Buffer.byteLength(h("apns-collapse-id") ?? "") > 64
                            ? [400, "BadCollapseId"]
                            : body.length === 0
                              ? [400, "PayloadEmpty"]
                              : body.length > 4096
                                ? [413, "PayloadTooLarge"]
                                : null;
      if (!fail) {
        try {
          payload = JSON.parse(body.toString("utf8"));
        } catch {
          payload = undefined;
        }
      }
      const token = m?.[1] ?? "";
      const canned = answers.get(token);
      const respond = () => {
        if (fail) return reply(fail[0] as number, fail[1] as string);
        if (payload === undefined || typeof payload !== "object" || payload === null) return reply(400, "BadPayload");
        if (canned?.status && canned.status !== 200) {
          return reply(canned.status, canned.reason, canned.retryAfter ? { "retry-after": canned.retryAfter } : {});
        }
        if (stream.closed || stream.destroyed) return; // The client gave up or the connection is gone.
        if (opts.onDelivery) opts.onDelivery(token, h("apns-id")!);
        else {
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(headers)) if (typeof v === "string") flat[k] = v;
          deliveries.push({ token, apnsId: h("apns-id")!, headers: flat, payload, connection: info.n, auth: "ok" in auth ? auth.ok : "" });
        }
        reply(200);
        if (goawayIn > 0 && --goawayIn === 0) {
          if (goawayMode === "graceful")
            session.close(); // GOAWAY; streams already open still get answers.
          else setImmediate(() => session.destroy()); // Let the 200 above go out first.
        }
      };
      const delay = canned?.delayMs ?? opts.delayMs ?? 0;
      if (delay > 0) setTimeout(respond, delay);
      else respond();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    ca: pki.caPem,
    deliveries,
    jwtsSeen,
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    get peakStreams() {
      return peakStreams;
    },
    get pings() {
      return pings;
    },
    answer(token, answer) {
      if (answer) answers.set(token, answer);
      else answers.delete(token);
    },
    goawayAfter(n, mode = "graceful") {
      goawayIn = n;
      goawayMode = mode;
    },
    close() {
      for (const s of sessions) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
