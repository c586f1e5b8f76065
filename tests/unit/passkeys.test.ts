// The pure parts of passkeys (src/auth/passkeys.ts): the relying party from settings or the request, decoy
// credential ids, labels, and reading the browser's responses before the library checks them.

import { describe, expect, test } from "bun:test";
import { assertionOf, decoyCredentialId, passkeyName, registrationOf, relyingParty, signedChallenge } from "../../src/auth/passkeys.ts";

const b64u = (s: string) => Buffer.from(s).toString("base64url");

describe("passkeys", () => {
  test("the relying party: the settings' id and origins, else the request's host and origin", () => {
    const place = { host: "api.example.com", origin: "https://api.example.com:8443" };
    expect(relyingParty({ rpId: "", origins: [] }, place)).toEqual({ id: "api.example.com", origins: ["https://api.example.com:8443"] });
    expect(relyingParty({ rpId: "example.com", origins: ["https://app.example.com", "android:apk-key-hash:abc"] }, place)).toEqual({
      id: "example.com",
      origins: ["https://app.example.com", "android:apk-key-hash:abc"],
    });
  });

  test("a decoy credential id is stable per secret, schema and username, and says nothing of them", () => {
    const a = decoyCredentialId("secret", "user", "ann");
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(decoyCredentialId("secret", "user", "ann")).toBe(a);
    expect(
      new Set([
        a,
        decoyCredentialId("secret", "user", "bob"),
        decoyCredentialId("other", "user", "ann"),
        decoyCredentialId("secret", "member", "ann"),
      ]).size,
    ).toBe(4);
  });

  test("a label is trimmed, at most 64 characters, 'Passkey' when absent", () => {
    expect(passkeyName(undefined)).toBe("Passkey");
    expect(passkeyName(" Laptop ")).toBe("Laptop");
    for (const bad of ["", "   ", 7, "x".repeat(65)]) expect(() => passkeyName(bad)).toThrow("name must be");
  });

  test("a registration body is the credential JSON, with name set aside", () => {
    const body = { id: "abc", rawId: "abc", type: "public-key", response: { clientDataJSON: "x", attestationObject: "y" }, name: "Key" };
    const r = registrationOf(body);
    expect(r).toEqual({
      id: "abc",
      rawId: "abc",
      type: "public-key",
      response: { clientDataJSON: "x", attestationObject: "y" },
      clientExtensionResults: {},
    } as never);
    for (const bad of [{}, { ...body, type: "password" }, { ...body, response: { clientDataJSON: "x" } }, { ...body, id: 5 }])
      expect(() => registrationOf(bad)).toThrow("registration response");
  });

  test("an assertion comes as JSON text with its challenge id; anything else is invalid_request", () => {
    const assertion = {
      id: "c",
      rawId: "c",
      type: "public-key",
      response: { clientDataJSON: "a", authenticatorData: "b", signature: "s" },
    };
    const ok = assertionOf({ assertion: JSON.stringify(assertion), challenge_id: "ch" });
    expect(ok.challengeId).toBe("ch");
    expect(ok.response.response.signature).toBe("s");
    for (const params of [
      {},
      { assertion: JSON.stringify(assertion) },
      { assertion: "{", challenge_id: "ch" },
      { assertion: "[]", challenge_id: "ch" },
      { assertion: JSON.stringify({ ...assertion, response: {} }), challenge_id: "ch" },
      { assertion: JSON.stringify(assertion), challenge_id: "x".repeat(65) },
    ])
      expect(() => assertionOf(params as Record<string, string>)).toThrow("invalid_request");
  });

  test("the signed challenge is read from clientDataJSON", () => {
    expect(signedChallenge(b64u(JSON.stringify({ type: "webauthn.get", challenge: "abc", origin: "x" })))).toBe("abc");
    expect(signedChallenge(b64u("not json"))).toBeNull();
    expect(signedChallenge(b64u(JSON.stringify({ challenge: 5 })))).toBeNull();
  });
});
