// Push payloads and tokens (pure): validation, the size rule, the iOS/Android/web shapes, token types and
// canonical tokens, and the queue's retry rule.

import { describe, expect, test } from "bun:test";
import { checkPayload, platformsFor, shapeFor } from "../../src/push/payload.ts";
import { normalizeToken, parseTokenType } from "../../src/push/tokens.ts";
import { MAX_ATTEMPTS, outcomeOf, retryDelay } from "../../src/push/push-service.ts";

describe("payloads", () => {
  test("badge must be an integer, alert/message/sound strings; not an object is 400", () => {
    for (const bad of [null, [], "x", 5]) expect(() => checkPayload(bad)).toThrow("payload must be a JSON object");
    expect(() => checkPayload({ badge: 1.5 })).toThrow("payload.badge must be an integer");
    expect(() => checkPayload({ badge: "1" })).toThrow("payload.badge must be an integer");
    for (const k of ["alert", "message", "sound"]) expect(() => checkPayload({ [k]: { a: 1 } })).toThrow(`payload.${k} must be a string`);
    expect(checkPayload({ badge: 3, alert: "hi", custom: { a: [1] } }).bytes).toBe(
      Buffer.byteLength('{"badge":3,"alert":"hi","custom":{"a":[1]}}'),
    );
  });

  test("size rule: up to 256 bytes every platform, 257-1024 Android and web, 1025+ is 400 (bytes, not characters)", () => {
    const sized = (n: number) => ({ m: "x".repeat(n - 8) }); // {"m":""} is 8 bytes
    expect(checkPayload(sized(256)).bytes).toBe(256);
    expect(platformsFor(256)).toEqual(["ios", "android", "web"]);
    expect(platformsFor(257)).toEqual(["android", "web"]);
    expect(checkPayload(sized(1024)).bytes).toBe(1024);
    expect(() => checkPayload(sized(1025))).toThrow("the payload is 1025 bytes; at most 1024 bytes");
    // 300 characters of 4-byte UTF-8 is 1208 bytes.
    expect(() => checkPayload({ m: "😀".repeat(300) })).toThrow("at most 1024 bytes");
  });

  test("iOS: badge, sound and message (or alert) go into aps; other keys stay top level", () => {
    expect(shapeFor("ios", { badge: 2, sound: "ping.caf", message: "hello", alert: "ignored", id: 7, extra: { a: 1 } })).toEqual({
      aps: { alert: "hello", badge: 2, sound: "ping.caf" },
      id: 7,
      extra: { a: 1 },
    });
    expect(shapeFor("ios", { alert: "only alert" })).toEqual({ aps: { alert: "only alert" } });
    expect(shapeFor("ios", { data: "silent" })).toEqual({ aps: {}, data: "silent" });
  });

  test("Android gets a flat map of strings; the web gets the payload as sent", () => {
    expect(shapeFor("android", { message: "hi", badge: 2, nested: { a: [1, "b"] }, flag: true })).toEqual({
      message: "hi",
      badge: "2",
      nested: '{"a":[1,"b"]}',
      flag: "true",
    });
    const p = { message: "hi", badge: 2 };
    expect(shapeFor("web", p)).toEqual(p);
  });
});

describe("tokens", () => {
  test("types are case-insensitive; android is androidgcm; anything else is 400", () => {
    expect(parseTokenType("iOS")).toBe("ios");
    expect(parseTokenType("androidGCM")).toBe("androidgcm");
    expect(parseTokenType("android")).toBe("androidgcm");
    expect(parseTokenType("WEB")).toBe("web");
    for (const bad of ["windows", "", undefined, 5]) expect(() => parseTokenType(bad)).toThrow("unknown token type");
  });

  test("iOS tokens lose spaces, < and > and must be hex; Android tokens are printable without spaces", () => {
    expect(normalizeToken("ios", "<ABCD1234 5678abcd 00ff00ff 00ff00ff>")).toBe("abcd12345678abcd00ff00ff00ff00ff");
    for (const bad of ["xyz", "abc", "", "<>", "a".repeat(202)]) expect(() => normalizeToken("ios", bad)).toThrow();
    expect(normalizeToken("androidgcm", "APA91b:x_y-z")).toBe("APA91b:x_y-z");
    for (const bad of ["has space", "", "\u00e9t\u00e9", "a".repeat(4097)]) expect(() => normalizeToken("androidgcm", bad)).toThrow();
  });
});

describe("retries", () => {
  test("exponential backoff with jitter, capped at an hour; Retry-After wins; permanent outcomes are final", () => {
    expect(retryDelay(1, undefined, () => 0.5)).toBe(1000);
    expect(retryDelay(4, undefined, () => 0.5)).toBe(8000);
    expect(retryDelay(4, undefined, () => 0)).toBe(6400);
    expect(retryDelay(4, undefined, () => 1)).toBe(9600);
    expect(retryDelay(40, undefined, () => 0.5)).toBe(3_600_000);
    expect(retryDelay(3, 30_000)).toBe(30_000);
    const now = 1_000_000;
    expect(outcomeOf({ kind: "retry", reason: "503", afterMs: 5000 }, 1, now)).toEqual({ kind: "retry", reason: "503", due: now + 5000 });
    expect(outcomeOf({ kind: "retry", reason: "503" }, MAX_ATTEMPTS, now)).toEqual({
      kind: "failed",
      reason: `gave up after ${MAX_ATTEMPTS} attempts: 503`,
    });
    expect(outcomeOf({ kind: "invalid-token", reason: "Unregistered" }, 1, now)).toEqual({ kind: "expired", reason: "Unregistered" });
    expect(outcomeOf({ kind: "failed", reason: "PayloadTooLarge" }, 1, now)).toEqual({ kind: "failed", reason: "PayloadTooLarge" });
    expect(outcomeOf({ kind: "sent" }, 3, now)).toEqual({ kind: "sent" });
  });
});
