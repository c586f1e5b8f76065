// TOTP as src/auth/totp.ts computes and checks it: RFC 6238's SHA-1 test vectors (8 digits), the ±1 step window,
// the replay rule (a step at or before the last accepted one is refused) and the otpauth URL.

import { describe, expect, test } from "bun:test";
import { Secret } from "otpauth";
import { checkCode, codeAt, newSecret, otpauthUrl, stepAt } from "../../src/auth/totp.ts";

/** RFC 6238 appendix B: the SHA-1 seed is the ASCII "12345678901234567890". */
const RFC_SECRET = Secret.fromLatin1("12345678901234567890").base32;
const RFC_VECTORS: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

describe("RFC 6238 test vectors (SHA-1, 8 digits)", () => {
  for (const [t, code] of RFC_VECTORS)
    test(`T = ${t} s gives ${code}`, () => {
      expect(codeAt(RFC_SECRET, t * 1000, 8)).toBe(code);
      expect(checkCode(RFC_SECRET, code, null, t * 1000, 8)).toEqual({ ok: true, step: Math.floor(t / 30) });
    });

  test("6 digits are the last 6 of the 8", () => {
    expect(codeAt(RFC_SECRET, 59_000)).toBe("287082");
    expect(codeAt(RFC_SECRET, 1111111109_000)).toBe("081804");
  });
});

describe("the window", () => {
  const secret = newSecret();
  const now = 1_700_000_000_000;
  const step = stepAt(now);

  test("the previous, current and next steps are accepted", () => {
    for (const d of [-1, 0, 1])
      expect(checkCode(secret, codeAt(secret, now + d * 30_000), null, now)).toEqual({ ok: true, step: step + d });
  });

  test("two steps away is wrong", () => {
    expect(checkCode(secret, codeAt(secret, now - 60_000), null, now)).toEqual({ ok: false, reason: "wrong" });
    expect(checkCode(secret, codeAt(secret, now + 60_000), null, now)).toEqual({ ok: false, reason: "wrong" });
  });

  test("malformed codes are wrong, not errors", () => {
    for (const code of ["", "12345", "1234567", "abcdef", "12 456"]) expect(checkCode(secret, code, null, now).ok).toBe(false);
  });

  test("another secret's code is wrong", () => {
    expect(checkCode(secret, codeAt(newSecret(), now), null, now)).toEqual({ ok: false, reason: "wrong" });
  });
});

describe("replay", () => {
  const secret = newSecret();
  const now = 1_700_000_000_000;
  const step = stepAt(now);

  test("a code of the last accepted step is refused as used", () => {
    const code = codeAt(secret, now);
    expect(checkCode(secret, code, null, now)).toEqual({ ok: true, step });
    expect(checkCode(secret, code, step, now)).toEqual({ ok: false, reason: "used" });
    // Still refused while it is inside the window of later steps.
    expect(checkCode(secret, code, step, now + 30_000)).toEqual({ ok: false, reason: "used" });
  });

  test("an earlier step than the last accepted one is refused; a later one passes", () => {
    expect(checkCode(secret, codeAt(secret, now - 30_000), step, now)).toEqual({ ok: false, reason: "used" });
    expect(checkCode(secret, codeAt(secret, now + 30_000), step, now)).toEqual({ ok: true, step: step + 1 });
  });
});

describe("secrets and URLs", () => {
  test("a new secret is 160 random bits in base32", () => {
    const a = newSecret();
    expect(a).toMatch(/^[A-Z2-7]{32}$/);
    expect(newSecret()).not.toBe(a);
  });

  test("the otpauth URL names issuer and account and carries the secret", () => {
    const text = otpauthUrl("JBSWY3DPEHPK3PXP", "My App", "ann");
    expect(text.startsWith("otpauth://totp/My%20App:ann?")).toBe(true);
    const url = new URL(text);
    expect(url.searchParams.get("secret")).toBe("JBSWY3DPEHPK3PXP");
    expect(url.searchParams.get("issuer")).toBe("My App");
    expect(url.searchParams.get("algorithm")).toBe("SHA1");
    expect(url.searchParams.get("digits")).toBe("6");
    expect(url.searchParams.get("period")).toBe("30");
  });
});
