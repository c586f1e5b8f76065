// TOTP (RFC 6238: HMAC-SHA-1, 30-second steps, 6 digits) over the otpauth library: a new base32 secret, the
// otpauth:// URL authenticator apps read, and the check of a code against the steps around now that refuses a
// step at or before the last one accepted (a code is never good twice). Pure: the time is given.

import { HOTP, Secret, TOTP } from "otpauth";

export const PERIOD_SECONDS = 30;
export const DIGITS = 6;
/** Steps accepted either side of the current one (clock drift, a code typed as it changed). */
export const WINDOW = 1;

/** A new random secret (160 bits, as RFC 4226 recommends), in base32. */
export function newSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URL of a secret: otpauth://totp/<issuer>:<account>?issuer=<issuer>&secret=...&algorithm=SHA1&digits=6&period=30. */
export function otpauthUrl(secret: string, issuer: string, account: string): string {
  return new TOTP({
    issuer,
    label: account,
    secret: Secret.fromBase32(secret),
    algorithm: "SHA1",
    digits: DIGITS,
    period: PERIOD_SECONDS,
  }).toString();
}

/** The time step of a moment (ms since the epoch). */
export function stepAt(nowMs: number): number {
  return Math.floor(nowMs / 1000 / PERIOD_SECONDS);
}

/** The code of a secret at a moment (tests, and the RFC's 8-digit vectors with `digits`). */
export function codeAt(secret: string, nowMs: number, digits = DIGITS): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits, period: PERIOD_SECONDS, timestamp: nowMs });
}

export type TotpCheck = { ok: true; step: number } | { ok: false; reason: "wrong" | "used" };

/**
 * Check `code` against the steps within WINDOW of now: the step it belongs to when that step is after `lastStep`
 * (the last one accepted; null for none), "used" when it matches only steps at or before it, else "wrong".
 */
export function checkCode(secret: string, code: string, lastStep: number | null, nowMs: number, digits = DIGITS): TotpCheck {
  if (code.length !== digits || !/^\d+$/.test(code)) return { ok: false, reason: "wrong" };
  const key = Secret.fromBase32(secret);
  const now = stepAt(nowMs);
  let used = false;
  // Newest first: a code that matches two steps (one in a million) counts as the one not yet used.
  for (let step = now + WINDOW; step >= now - WINDOW; step--) {
    if (HOTP.validate({ token: code, secret: key, algorithm: "SHA1", digits, counter: step, window: 0 }) !== 0) continue;
    if (lastStep === null || step > lastStep) return { ok: true, step };
    used = true;
  }
  return { ok: false, reason: used ? "used" : "wrong" };
}
