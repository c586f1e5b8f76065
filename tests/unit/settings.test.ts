// Settings documents: defaults per environment, validated merges, write-only secrets.

import { expect, test } from "bun:test";
import { mergeSettings, redactSettings, resolveSettings } from "../../src/system/settings.ts";

test("defaults per environment", () => {
  expect((resolveSettings("development", {}).cors as any).origins).toEqual(["*"]);
  expect((resolveSettings("production", {}).push as any).clientSend).toBe(false);
});

test("merge validates and null resets", () => {
  const s = mergeSettings({}, { smtp: { host: "h", port: 25 } });
  expect(s).toEqual({ smtp: { host: "h", port: 25 } });
  expect(mergeSettings(s, { smtp: { port: null } })).toEqual({ smtp: { host: "h" } });
  expect(() => mergeSettings({}, { smtp: { port: 0 } })).toThrow('"smtp.port" must be an integer');
  expect(() => mergeSettings({}, { smtp: "x" })).toThrow('"smtp" must be a JSON object');
  expect(() => mergeSettings({}, { toString: 1 })).toThrow('unknown setting "toString"');
});

test("secrets read back as set/unset and survive a round trip", () => {
  const stored = mergeSettings({}, { smtp: { password: "p" } });
  const shown = redactSettings(resolveSettings("development", stored));
  expect((shown.smtp as any).password).toEqual({ set: true });
  expect(mergeSettings(stored, shown)).toMatchObject({ smtp: { password: "p" } });
});
