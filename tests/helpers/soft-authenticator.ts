// A software WebAuthn authenticator for API tests: ES256 key pairs from WebCrypto, attestation "none" objects and
// authenticator data built by hand with a tiny CBOR encoder, and the browser's side of a ceremony (clientDataJSON
// with the challenge and origin), answering the JSON a browser's PublicKeyCredential.toJSON() gives. Tests steer
// what a real authenticator would not do: another origin or relying party, a counter of their choosing.

type Cbor = number | string | Uint8Array | Map<number | string, Cbor> | { [k: string]: Cbor };

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const utf8 = (s: string) => new TextEncoder().encode(s);
const u32 = (n: number) => Uint8Array.of((n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
const sha256 = async (bytes: Uint8Array<ArrayBuffer>) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function cborHead(major: number, n: number): Uint8Array {
  if (n < 24) return Uint8Array.of((major << 5) | n);
  if (n < 0x100) return Uint8Array.of((major << 5) | 24, n);
  if (n < 0x10000) return Uint8Array.of((major << 5) | 25, n >> 8, n & 0xff);
  return concat(Uint8Array.of((major << 5) | 26), u32(n));
}

/** CBOR of integers, text, byte strings and maps: what attestation objects and COSE keys need. */
export function cbor(v: Cbor): Uint8Array {
  if (typeof v === "number") return v >= 0 ? cborHead(0, v) : cborHead(1, -1 - v);
  if (typeof v === "string") {
    const bytes = utf8(v);
    return concat(cborHead(3, bytes.length), bytes);
  }
  if (v instanceof Uint8Array) return concat(cborHead(2, v.length), v);
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  return concat(cborHead(5, entries.length), ...entries.flatMap(([k, x]) => [cbor(k), cbor(x as Cbor)]));
}

/** An ECDSA signature as WebCrypto gives it (r || s) in the DER form WebAuthn carries. */
function derSignature(raw: Uint8Array): Uint8Array {
  const int = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.slice(i);
    const body = v[0]! & 0x80 ? concat(Uint8Array.of(0), v) : v;
    return concat(Uint8Array.of(0x02, body.length), body);
  };
  const seq = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(Uint8Array.of(0x30, seq.length), seq);
}

interface SoftCredential {
  id: Uint8Array;
  rpId: string;
  userHandle: string;
  keys: CryptoKeyPair;
  counter: number;
}

/** What a test may make the browser or authenticator do differently. */
export interface Tweaks {
  /** The origin the browser reports (default: the one given). */
  origin?: string;
  /** The relying party id hashed into the authenticator data (default: the options'). */
  rpId?: string;
  /** The challenge the browser signs (default: the options'). */
  challenge?: string;
  /** The signature counter to report (default: one more than the last; 0 without counters). */
  counter?: number;
  /** Whether the user was verified (default: true). */
  userVerified?: boolean;
}

type CreationOptions = { rp: { id?: string }; user: { id: string }; challenge: string; excludeCredentials?: { id: string }[] };
type RequestOptions = { rpId?: string; challenge: string; allowCredentials?: { id: string }[] };

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** `counters: false`: an authenticator that reports 0 every time (no counter). */
  constructor(private readonly opts: { counters?: boolean } = {}) {}

  private async clientData(type: string, challenge: string, origin: string): Promise<{ json: Uint8Array; hash: Uint8Array }> {
    const json = utf8(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
    return { json, hash: await sha256(json) };
  }

  private flags(t: Tweaks, more: number): number {
    return 0x01 | (t.userVerified === false ? 0 : 0x04) | more;
  }

  /** navigator.credentials.create: a new ES256 credential, answered as the registration response JSON. */
  async create(options: CreationOptions, origin: string, t: Tweaks = {}) {
    const rpId = t.rpId ?? options.rp.id ?? new URL(origin).hostname;
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey));
    const cose = cbor(
      new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, raw.slice(1, 33)],
        [-3, raw.slice(33, 65)],
      ]),
    );
    const cred: SoftCredential = {
      id: crypto.getRandomValues(new Uint8Array(16)),
      rpId,
      userHandle: options.user.id,
      keys,
      counter: t.counter ?? 0,
    };
    const authData = concat(
      await sha256(utf8(rpId)),
      Uint8Array.of(this.flags(t, 0x40)),
      u32(cred.counter),
      new Uint8Array(16),
      Uint8Array.of(cred.id.length >> 8, cred.id.length & 0xff),
      cred.id,
      cose,
    );
    this.credentials.push(cred);
    const client = await this.clientData("webauthn.create", t.challenge ?? options.challenge, t.origin ?? origin);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: "public-key",
      response: {
        clientDataJSON: b64u(client.json),
        attestationObject: b64u(cbor({ fmt: "none", attStmt: {}, authData })),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** navigator.credentials.get: an assertion by an allowed credential (or, with none listed, a discoverable one). */
  async get(options: RequestOptions, origin: string, t: Tweaks = {}) {
    const rpId = options.rpId ?? new URL(origin).hostname;
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const cred = this.credentials.find((c) => c.rpId === rpId && (allowed.length === 0 || allowed.includes(b64u(c.id))));
    if (!cred) throw new Error("no credential for these options");
    return this.assert(cred, rpId, options.challenge, origin, t);
  }

  /** An assertion by a given credential of this authenticator, whatever the options allow. */
  async assert(cred: SoftCredential, rpId: string, challenge: string, origin: string, t: Tweaks = {}) {
    // A lower counter of the test's choosing is reported once (a clone); a higher one is where the authenticator goes on.
    const counter = t.counter ?? (this.opts.counters === false ? 0 : ++cred.counter);
    cred.counter = Math.max(cred.counter, counter);
    const authData = concat(await sha256(utf8(t.rpId ?? rpId)), Uint8Array.of(this.flags(t, 0)), u32(counter));
    const client = await this.clientData("webauthn.get", t.challenge ?? challenge, t.origin ?? origin);
    const signed = new Uint8Array(
      await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, cred.keys.privateKey, concat(authData, client.hash)),
    );
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: "public-key",
      response: {
        clientDataJSON: b64u(client.json),
        authenticatorData: b64u(authData),
        signature: b64u(derSignature(signed)),
        userHandle: cred.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
