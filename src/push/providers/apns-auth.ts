// APNs credentials: the .p8 signing key and its provider-token (ES256 JWT) cache with Apple's refresh rules, the
// .p12 client certificate read with node-forge, and validateApnsCredentials, which checks a configuration up
// front so a settings endpoint can refuse it with a one-line message instead of failing at send time.

import { createPrivateKey, sign, X509Certificate, type KeyObject } from "node:crypto";
import type Forge from "node-forge";
import { onFirstUse } from "../../on-first-use.ts";

const nodeForge = onFirstUse(() => require("node-forge") as typeof Forge);

export type ApnsAuth =
  | { kind: "token"; keyP8: string; keyId: string; teamId: string }
  | { kind: "certificate"; p12Base64: string; password: string };

/** What a valid credential tells about itself. */
export interface ApnsCredentialInfo {
  /** Certificate auth: the bundle id in the certificate's subject UID (a good default `apns-topic`). */
  bundleId?: string;
  /** Certificate auth: when the certificate stops being valid. */
  expiresAt?: Date;
}

/** The client certificate and key of a .p12, as PEM for `http2.connect`. */
export interface ApnsClientCertificate {
  certPem: string;
  keyPem: string;
  bundleId?: string;
  notBefore: Date;
  notAfter: Date;
}

const UID_OID = "0.9.2342.19200300.100.1.1";
const APPLE_ID = /^[A-Z0-9]{10}$/;

/** Checks an APNs credential; throws an Error with a one-line message saying what is wrong. */
export function validateApnsCredentials(auth: ApnsAuth, now: Date = new Date()): ApnsCredentialInfo {
  if (auth.kind === "token") {
    if (!APPLE_ID.test(auth.keyId)) throw new Error("the key id must be the 10-character Key ID of the .p8 key (e.g. ABC123DEFG)");
    if (!APPLE_ID.test(auth.teamId)) throw new Error("the team id must be the 10-character Team ID of the Apple developer account");
    parseP8(auth.keyP8);
    return {};
  }
  const cert = readP12(auth.p12Base64, auth.password);
  if (now < cert.notBefore) throw new Error(`the .p12 certificate is not valid before ${cert.notBefore.toISOString()}`);
  if (now > cert.notAfter) throw new Error(`the .p12 certificate expired on ${cert.notAfter.toISOString()}`);
  return { bundleId: cert.bundleId, expiresAt: cert.notAfter };
}

/** The P-256 private key of a .p8 file (PKCS#8 PEM); throws with a one-line message. */
export function parseP8(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem.trim(), format: "pem" });
  } catch {
    throw new Error("the .p8 key is not a valid EC private key (expected the PEM text of the AuthKey_XXXXXXXXXX.p8 file)");
  }
  if (key.asymmetricKeyType !== "ec")
    throw new Error(`the .p8 key is not a valid EC private key (it is ${key.asymmetricKeyType ?? "unknown"})`);
  if (key.asymmetricKeyDetails?.namedCurve !== "prime256v1") throw new Error("the .p8 key is not a P-256 (ES256) key");
  return key;
}

/** Reads a base64 .p12 and returns the certificate that matches its private key; throws with a one-line message. */
export function readP12(p12Base64: string, password: string): ApnsClientCertificate {
  const der = Buffer.from(p12Base64.replace(/\s+/g, ""), "base64");
  if (der.length === 0) throw new Error("the .p12 is empty or not base64");
  let p12: Forge.pkcs12.Pkcs12Pfx;
  const forge = nodeForge();
  try {
    const asn1 = forge.asn1.fromDer(der.toString("binary"));
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/password|MAC could not be verified/i.test(msg)) throw new Error("the .p12 password is wrong");
    throw new Error(`the .p12 is not a readable PKCS#12 file (${msg.replace(/\s+/g, " ")})`);
  }

  const keys: KeyObject[] = [];
  for (const type of [forge.pki.oids.pkcs8ShroudedKeyBag!, forge.pki.oids.keyBag!]) {
    for (const bag of p12.getBags({ bagType: type })[type] ?? []) {
      // forge decodes RSA keys; other kinds (EC) stay as ASN.1, which Node's crypto reads.
      const asn1 = bag.key ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key)) : bag.asn1;
      if (!asn1) continue;
      try {
        keys.push(createPrivateKey({ key: Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary"), format: "der", type: "pkcs8" }));
      } catch {
        // An unreadable key cannot match a certificate; the checks below report it.
      }
    }
  }
  if (keys.length === 0) throw new Error("the .p12 holds no private key (export the certificate together with its key)");

  const certBag = forge.pki.oids.certBag!;
  const certs = (p12.getBags({ bagType: certBag })[certBag] ?? []).flatMap((bag) => {
    const asn1 = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : bag.asn1;
    if (!asn1) return [];
    try {
      const x509 = new X509Certificate(Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary"));
      const uid = bag.cert?.subject.getField({ type: UID_OID }) as { value?: unknown } | null | undefined;
      return [{ x509, uid: typeof uid?.value === "string" ? uid.value : undefined }];
    } catch {
      return [];
    }
  });
  if (certs.length === 0) throw new Error("the .p12 holds no certificate");

  // The chain may include the CA: the leaf is the certificate whose public key matches the private key.
  for (const key of keys) {
    for (const { x509, uid } of certs) {
      if (!x509.checkPrivateKey(key)) continue;
      return {
        certPem: x509.toString(),
        keyPem: key.export({ type: "pkcs8", format: "pem" }).toString(),
        bundleId: uid ?? /^UID=(.+)$/m.exec(x509.subject)?.[1],
        notBefore: new Date(x509.validFrom),
        notAfter: new Date(x509.validTo),
      };
    }
  }
  throw new Error("the .p12 holds no certificate matching its key");
}

/** Provider tokens are reused until this age... */
export const JWT_MAX_AGE_MS = 50 * 60_000;
/** ...and never replaced before this age (APNs answers 429 TooManyProviderTokenUpdates to faster updates). */
export const JWT_MIN_AGE_MS = 20 * 60_000;

/**
 * The provider-token cache of one .p8 credential. The rule: the first token is made on first use; a token is
 * replaced when it is 50 minutes old (APNs refuses tokens older than 60), or when APNs refused it (403
 * ExpiredProviderToken / InvalidProviderToken) and it is at least 20 minutes old. So after the first, a token is
 * never made less than 20 minutes after the previous one, whatever APNs answers. A new key means a new provider
 * and a new cache.
 */
export class ProviderTokens {
  private current: { jwt: string; issuedAt: number; refused: boolean } | null = null;
  private readonly key: KeyObject;
  /** How many tokens this cache has made (for tests and diagnostics). */
  minted = 0;

  constructor(
    private readonly auth: { keyP8: string; keyId: string; teamId: string },
    private readonly clock: () => number,
  ) {
    this.key = parseP8(auth.keyP8);
  }

  /** The token to send now. */
  get(): string {
    const now = this.clock();
    const cur = this.current;
    if (cur) {
      const age = now - cur.issuedAt;
      if (age < JWT_MAX_AGE_MS && !(cur.refused && age >= JWT_MIN_AGE_MS)) return cur.jwt;
    }
    const header = b64url(JSON.stringify({ alg: "ES256", kid: this.auth.keyId }));
    const claims = b64url(JSON.stringify({ iss: this.auth.teamId, iat: Math.floor(now / 1000) }));
    const data = `${header}.${claims}`;
    const signature = sign("sha256", Buffer.from(data), { key: this.key, dsaEncoding: "ieee-p1363" }).toString("base64url");
    this.current = { jwt: `${data}.${signature}`, issuedAt: now, refused: false };
    this.minted++;
    return this.current.jwt;
  }

  /** APNs refused `jwt`; returns how long until a replacement may be made (0: the next get() makes one). */
  refused(jwt: string): number {
    const cur = this.current;
    if (!cur || cur.jwt !== jwt) return 0; // Already replaced.
    cur.refused = true;
    return Math.max(0, JWT_MIN_AGE_MS - (this.clock() - cur.issuedAt));
  }
}

function b64url(text: string): string {
  return Buffer.from(text).toString("base64url");
}
