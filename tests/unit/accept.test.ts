// Accept header version parsing.

import { expect, test } from "bun:test";
import { parseAcceptVersion } from "../../src/http/accept.ts";

test("versions are read from the Accept header", () => {
  expect(parseAcceptVersion(null)).toBeNull();
  expect(parseAcceptVersion("application/json")).toBeNull();
  expect(parseAcceptVersion("application/vnd.service+json; version=0")).toBe(0);
  expect(parseAcceptVersion("application/vnd.service+json;version=12")).toBe(12);
  expect(parseAcceptVersion('application/vnd.service+json; version="3"')).toBe(3);
  expect(parseAcceptVersion("text/html, application/vnd.service+json; VERSION=2")).toBe(2);
  expect(parseAcceptVersion("applicaton/vnd.service+json; version=1")).toBe(1);
});

test("malformed versions are 400", () => {
  for (const v of ["x", "-1", "1.0", "", "99999999"]) {
    expect(() => parseAcceptVersion(`application/vnd.service+json; version=${v}`)).toThrow("invalid API version");
  }
});
