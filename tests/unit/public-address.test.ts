// Public-address rules for outbound requests to user-supplied URLs, and the lookup that enforces them when a
// connection is made: every resolved address must be public unicast, literals are judged without resolving.

import { describe, expect, test } from "bun:test";
import type { LookupAddress } from "node:dns";
import { parseIp } from "../../src/net/ip.ts";
import { hostNotAllowed, isPrivateAddress, isPublicOnlyLookup, publicOnlyLookup } from "../../src/net/public-address.ts";

const ask = (lookup: ReturnType<typeof publicOnlyLookup>, host: string, all: boolean) =>
  new Promise<{ err: Error | null; args: unknown[] }>((resolve) =>
    lookup(host, { all }, (err: Error | null, ...args: unknown[]) => resolve({ err, args })),
  );

describe("public addresses", () => {
  test("private, loopback, link-local, CGNAT, documentation, multicast and embedded-IPv4 forms are not public", () => {
    for (const a of [
      "127.0.0.1",
      "10.9.8.7",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fd12::1",
      "fe80::1",
      "ff02::1",
      "::ffff:10.0.0.1",
      "64:ff9b::7f00:1",
      "2002:7f00:1::1",
      "2001:db8::1",
    ]) {
      expect([a, isPrivateAddress(parseIp(a)!)]).toEqual([a, true]);
    }
    for (const a of ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2a00:1450:4001::1", "::ffff:8.8.4.4"]) {
      expect([a, isPrivateAddress(parseIp(a)!)]).toEqual([a, false]);
    }
  });

  test("hosts judged from the URL alone", () => {
    expect(hostNotAllowed("localhost")).toBe("localhost");
    expect(hostNotAllowed("API.LOCALHOST.")).toBe("localhost");
    expect(hostNotAllowed("[::1]")).toBe("private address");
    expect(hostNotAllowed("10.0.0.1")).toBe("private address");
    expect(hostNotAllowed("push.example.com")).toBeNull(); // names are judged when resolved
    expect(hostNotAllowed("8.8.8.8")).toBeNull();
  });

  test("the lookup answers like node's for public names and fails with EADDRNOTPUBLIC otherwise", async () => {
    const table: Record<string, LookupAddress[]> = {
      "ok.test": [
        { address: "8.8.8.8", family: 4 },
        { address: "2a00:1450:4001::1", family: 6 },
      ],
      "bad.test": [
        { address: "8.8.8.8", family: 4 },
        { address: "fd00::5", family: 6 },
      ],
      "none.test": [],
    };
    let calls = 0;
    const lookup = publicOnlyLookup((host, cb) => {
      calls++;
      if (host === "fail.test") cb(Object.assign(new Error("getaddrinfo ENOTFOUND fail.test"), { code: "ENOTFOUND" }), []);
      else cb(null, table[host] ?? []);
    });
    expect(await ask(lookup, "ok.test", true)).toEqual({ err: null, args: [table["ok.test"]] });
    expect(await ask(lookup, "ok.test", false)).toEqual({ err: null, args: ["8.8.8.8", 4] });
    const bad = await ask(lookup, "bad.test", false);
    expect((bad.err as Error & { code: string }).code).toBe("EADDRNOTPUBLIC");
    expect(bad.err!.message).toBe("bad.test resolves to a private address (fd00::5)");
    expect(((await ask(lookup, "none.test", true)).err as Error & { code: string }).code).toBe("ENOTFOUND");
    expect(((await ask(lookup, "fail.test", true)).err as Error & { code: string }).code).toBe("ENOTFOUND");
    // Literals are judged without asking the resolver.
    const before = calls;
    expect((await ask(lookup, "127.0.0.1", false)).err!.message).toBe("127.0.0.1 resolves to a private address (127.0.0.1)");
    expect(await ask(lookup, "8.8.4.4", false)).toEqual({ err: null, args: ["8.8.4.4", 4] });
    expect(calls).toBe(before);
  });

  test("only lookups made by publicOnlyLookup count as public-only (what guarded requests accept)", () => {
    expect(isPublicOnlyLookup(publicOnlyLookup())).toBe(true);
    expect(
      isPublicOnlyLookup(
        publicOnlyLookup(
          (_h, cb) => cb(null, []),
          () => false,
        ),
      ),
    ).toBe(true);
    const plain = (_h: string, _o: unknown, cb: (...args: unknown[]) => void) => cb(null, "127.0.0.1", 4);
    expect(isPublicOnlyLookup(plain)).toBe(false);
    expect(isPublicOnlyLookup(undefined)).toBe(false);
  });
});
