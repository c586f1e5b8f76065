// OAuth 2.0 MAC signing and verification against vectors computed independently with openssl.

import { describe, expect, test } from "bun:test";
import {
  MAC_WINDOW_SECONDS,
  MAX_DECODED_TARGET,
  type MacHeader,
  macSignature,
  normalizedString,
  parseMacHeader,
  timestampFault,
  uriForms,
  verifyMac,
} from "../../src/auth/mac.ts";

interface Vector {
  name: string;
  key: string;
  ts: string;
  nonce: string;
  method: string;
  /** What the client signed. */
  uri: string;
  /** What arrives on the wire (differs from `uri` for iOS and decoded forms). */
  rawTarget: string;
  host: string;
  port: number;
  mac: string;
}

const VECTORS: Vector[] = [
  // printf '1336363200\ndj83hs9s\nGET\n/resource/1?b=1&a=2\nexample.com\n80\n\n' | openssl dgst -sha1 -hmac 'hmac-key' -binary | base64
  {
    name: "GET with a query on port 80",
    key: "hmac-key",
    ts: "1336363200",
    nonce: "dj83hs9s",
    method: "GET",
    uri: "/resource/1?b=1&a=2",
    rawTarget: "/resource/1?b=1&a=2",
    host: "example.com",
    port: 80,
    mac: "6o8/xzSmDDMXCSHBp5oSAzqXDs4=",
  },
  // printf '1336363201\nn4821\nPOST\n/user\napi.example.com\n443\n\n' | openssl dgst -sha1 -hmac 'Xk3mZ9qL2pR7vT1wY5bN8cD4fG6hJ0aS' -binary | base64
  {
    name: "POST on https port 443",
    key: "Xk3mZ9qL2pR7vT1wY5bN8cD4fG6hJ0aS",
    ts: "1336363201",
    nonce: "n4821",
    method: "POST",
    uri: "/user",
    rawTarget: "/user",
    host: "api.example.com",
    port: 443,
    mac: "RInepMw/BOMpnv/ZnDkqqbkXJcU=",
  },
  // printf '1336363202\nn77\nPUT\n/todo/abc123\nlocalhost\n8080\n\n' | openssl dgst -sha1 -hmac 'hmac-key' -binary | base64
  {
    name: "PUT on explicit port 8080",
    key: "hmac-key",
    ts: "1336363202",
    nonce: "n77",
    method: "PUT",
    uri: "/todo/abc123",
    rawTarget: "/todo/abc123",
    host: "localhost",
    port: 8080,
    mac: "W3QO0qn9JIhJmqSVWQVpBovkFyA=",
  },
  // iOS form: %20 and %2F stay escaped, %5B%5D are decoded.
  // printf '1336363203\nn9999\nGET\n/search?q=a%%20b%%2Fc[1]\nexample.com\n80\n\n' | openssl dgst -sha1 -hmac 'hmac-key' -binary | base64
  {
    name: "iOS partially decoded query",
    key: "hmac-key",
    ts: "1336363203",
    nonce: "n9999",
    method: "GET",
    uri: "/search?q=a%20b%2Fc[1]",
    rawTarget: "/search?q=a%20b%2Fc%5B1%5D",
    host: "example.com",
    port: 80,
    mac: "IxlS/9X40kVFTcFWzsZEthYl7qA=",
  },
  // Fully decoded form of the same target.
  // printf '%s\n' 1336363205 n6 GET '/search?q=a b/c[1]' example.com 80 '' | openssl dgst -sha1 -hmac 'hmac-key' -binary | base64
  {
    name: "fully decoded query",
    key: "hmac-key",
    ts: "1336363205",
    nonce: "n6",
    method: "GET",
    uri: "/search?q=a b/c[1]",
    rawTarget: "/search?q=a%20b%2Fc%5B1%5D",
    host: "example.com",
    port: 80,
    mac: "Rq6683GrEjn/iL8h92kFF0Z0Ucw=",
  },
  // Non-ASCII path signed decoded (UTF-8 bytes), received escaped; the key is non-ASCII too ("clé").
  // printf '1336363204\nn5\nGET\n/caf\303\251/\303\274ber?x=1\nexample.com\n80\n\n' | openssl dgst -sha1 -hmac "$(printf 'cl\303\251')" -binary | base64
  {
    name: "non-ASCII path and key",
    key: "clé",
    ts: "1336363204",
    nonce: "n5",
    method: "GET",
    uri: "/café/über?x=1",
    rawTarget: "/caf%C3%A9/%C3%BCber?x=1",
    host: "example.com",
    port: 80,
    mac: "ylw35QbALiQL23W5WVJwTg4rUlY=",
  },
];

const header = (v: Vector, over: Partial<MacHeader> = {}): MacHeader => ({ id: "token-1", ts: v.ts, nonce: v.nonce, mac: v.mac, ...over });
const nowFor = (v: Vector) => Number(v.ts) * 1000;
const verifyArgs = (v: Vector) => ({
  header: header(v),
  key: v.key,
  methods: [v.method],
  rawTarget: v.rawTarget,
  host: v.host,
  ports: [v.port],
  now: nowFor(v),
  windowSeconds: MAC_WINDOW_SECONDS,
});
const v0 = VECTORS[0]!;

describe("macSignature / normalizedString", () => {
  for (const v of VECTORS) {
    test(v.name, () => {
      const n = normalizedString({ ts: v.ts, nonce: v.nonce, method: v.method.toLowerCase(), uri: v.uri, host: v.host, port: v.port });
      expect(macSignature(v.key, n)).toBe(v.mac);
    });
  }

  test("layout: empty ext gives a trailing blank line; ext is included when present", () => {
    expect(normalizedString({ ts: "1", nonce: "n", method: "get", uri: "/a", host: "h", port: "80" })).toBe("1\nn\nGET\n/a\nh\n80\n\n");
    expect(normalizedString({ ts: "1", nonce: "n", method: "GET", uri: "/a", host: "h", port: 443, ext: "x" })).toBe(
      "1\nn\nGET\n/a\nh\n443\nx\n",
    );
  });
});

describe("parseMacHeader", () => {
  const good = { id: "tok", ts: "1336363200", nonce: "n42", mac: "6o8/xzSmDDMXCSHBp5oSAzqXDs4=" };

  test("the SDK form", () => {
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42",mac="6o8/xzSmDDMXCSHBp5oSAzqXDs4="')).toEqual(good);
  });

  test("spaces after commas and around =, any order, lower-case scheme, optional ext", () => {
    expect(parseMacHeader('mac  mac = "6o8/xzSmDDMXCSHBp5oSAzqXDs4=", nonce ="n42",  ts= "1336363200" ,id="tok"')).toEqual(good);
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42",ext="a b,c",mac="6o8/xzSmDDMXCSHBp5oSAzqXDs4="')).toEqual({
      ...good,
      ext: "a b,c",
    });
  });

  test("refuses missing, duplicate, unknown, unquoted or empty attributes", () => {
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42"')).toBeNull();
    expect(parseMacHeader('MAC id="tok",id="tok",ts="1336363200",nonce="n42",mac="x"')).toBeNull();
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42",mac="x",foo="1"')).toBeNull();
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42",mac="x",constructor="1"')).toBeNull();
    expect(parseMacHeader('MAC id=tok,ts="1336363200",nonce="n42",mac="x"')).toBeNull();
    expect(parseMacHeader('MAC id="",ts="1336363200",nonce="n42",mac="x"')).toBeNull();
  });

  test("refuses bad separators", () => {
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42",mac="x",')).toBeNull();
    expect(parseMacHeader('MAC id="tok" ts="1336363200",nonce="n42",mac="x"')).toBeNull();
    expect(parseMacHeader('MAC id="tok",,ts="1336363200",nonce="n42",mac="x"')).toBeNull();
    expect(parseMacHeader('MAC id="tok",ts="1336363200",nonce="n42",mac="x')).toBeNull();
  });

  test("refuses other schemes", () => {
    expect(parseMacHeader('Bearer id="tok",ts="1",nonce="n",mac="x"')).toBeNull();
    expect(parseMacHeader('MACid="tok",ts="1",nonce="n",mac="x"')).toBeNull();
    expect(parseMacHeader('OAuth id="tok",ts="1",nonce="n",mac="x"')).toBeNull();
    expect(parseMacHeader("MAC")).toBeNull();
    expect(parseMacHeader("")).toBeNull();
  });

  test("caps: id/nonce 256, mac 128, ts 20", () => {
    const h = (o: Record<string, string>) => {
      const a = { id: "tok", ts: "1", nonce: "n", mac: "x", ...o };
      return parseMacHeader(`MAC id="${a.id}",ts="${a.ts}",nonce="${a.nonce}",mac="${a.mac}"`);
    };
    expect(h({ id: "i".repeat(256), nonce: "n".repeat(256), mac: "m".repeat(128), ts: "9".repeat(20) })).not.toBeNull();
    expect(h({ id: "i".repeat(257) })).toBeNull();
    expect(h({ nonce: "n".repeat(257) })).toBeNull();
    expect(h({ mac: "m".repeat(129) })).toBeNull();
    expect(h({ ts: "9".repeat(21) })).toBeNull();
  });
});

describe("uriForms", () => {
  test("raw, iOS (keeps escapes of the reserved list in their original case) and fully decoded", () => {
    expect(uriForms("/search?q=a%20b%2Fc%5B1%5D")).toEqual(["/search?q=a%20b%2Fc%5B1%5D", "/search?q=a%20b%2Fc[1]", "/search?q=a b/c[1]"]);
    expect(uriForms("/s?q=%2f%3a%2e%3F%26%3D%3B%2B%21%40%23%24%28%29%7E%20")).toEqual([
      "/s?q=%2f%3a%2e%3F%26%3D%3B%2B%21%40%23%24%28%29%7E%20",
      "/s?q=/:.?&=;+!@#$()~ ",
    ]);
    expect(uriForms("/s?k%5Bgt%5D=%2a%2C%25")).toEqual(["/s?k%5Bgt%5D=%2a%2C%25", "/s?k[gt]=*,%"]);
  });

  test("multi-byte UTF-8 escapes decode together, also between kept escapes", () => {
    expect(uriForms("/caf%C3%A9")).toEqual(["/caf%C3%A9", "/café"]);
    expect(uriForms("/x?%C3%A9%20%C3%BC")).toEqual(["/x?%C3%A9%20%C3%BC", "/x?é%20ü", "/x?é ü"]);
  });

  test("unchanged targets give one form", () => {
    expect(uriForms("/resource/1?b=1&a=2")).toEqual(["/resource/1?b=1&a=2"]);
  });

  test("malformed escapes are left alone and the full decoding is skipped", () => {
    expect(uriForms("/a%zz%5B%4")).toEqual(["/a%zz%5B%4", "/a%zz[%4"]);
    expect(uriForms("/a%FF%5B")).toEqual(["/a%FF%5B", "/a%FF["]);
  });

  test("targets over 8 KB are only taken as received", () => {
    const long = `/x?q=${"%5B".repeat(Math.ceil(MAX_DECODED_TARGET / 3))}`;
    expect(uriForms(long)).toEqual([long]);
    const fits = `/x?q=${"a".repeat(MAX_DECODED_TARGET - 8)}%5B`;
    expect(uriForms(fits)).toHaveLength(2);
  });
});

describe("verifyMac", () => {
  for (const v of VECTORS) {
    test(`accepts: ${v.name}`, () => {
      expect(verifyMac(verifyArgs(v))).toEqual({ ok: true });
    });
  }

  test("rejects a changed method, port, host, uri, nonce, ts or key", () => {
    const bad = { ok: false, reason: "signature" } as const;
    expect(verifyMac({ ...verifyArgs(v0), methods: ["POST"] })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), ports: [443] })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), host: "example.org" })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), rawTarget: "/resource/1?a=2&b=1" })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), rawTarget: "/resource/1" })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), header: header(v0, { nonce: "other" }) })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), header: header(v0, { ts: "1336363201" }) })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), header: header(v0, { ext: "x" }) })).toEqual(bad);
    expect(verifyMac({ ...verifyArgs(v0), key: "hmac-key2" })).toEqual(bad);
  });

  test("the method override is tried second; the second port is tried too", () => {
    expect(verifyMac({ ...verifyArgs(v0), methods: ["POST", "GET"] })).toEqual({ ok: true });
    expect(verifyMac({ ...verifyArgs(v0), ports: [443, 80] })).toEqual({ ok: true });
  });

  test("at most two methods and two ports are tried", () => {
    expect(verifyMac({ ...verifyArgs(v0), methods: ["POST", "PUT", "GET"] })).toEqual({ ok: false, reason: "signature" });
    expect(verifyMac({ ...verifyArgs(v0), methods: ["POST", "POST", "GET"] })).toEqual({ ok: true });
    expect(verifyMac({ ...verifyArgs(v0), ports: [443, 8080, 80] })).toEqual({ ok: false, reason: "signature" });
  });

  test("the iOS and decoded vectors do not verify against a form the client did not send", () => {
    const v = VECTORS[3]!;
    expect(verifyMac({ ...verifyArgs(v), rawTarget: "/search?q=a%20b%2Fc%5B2%5D" })).toEqual({ ok: false, reason: "signature" });
  });

  test("timestamp window: inclusive at ±600 s, rejected beyond on both sides", () => {
    const ms = nowFor(v0);
    expect(verifyMac({ ...verifyArgs(v0), now: ms + 600_000 })).toEqual({ ok: true });
    expect(verifyMac({ ...verifyArgs(v0), now: ms - 600_000 })).toEqual({ ok: true });
    expect(verifyMac({ ...verifyArgs(v0), now: ms + 601_000 })).toEqual({ ok: false, reason: "timestamp" });
    expect(verifyMac({ ...verifyArgs(v0), now: ms - 601_000 })).toEqual({ ok: false, reason: "timestamp" });
  });

  test("non-digit timestamps are refused before any signature work", () => {
    for (const ts of ["1336363200.0", "-1336363200", "1.3e9", " 1336363200", "", "0x4fa8"]) {
      expect(verifyMac({ ...verifyArgs(v0), header: header(v0, { ts }) })).toEqual({ ok: false, reason: "timestamp" });
    }
  });

  test("a refused timestamp is classified: milliseconds from 1e11 on, else the window; non-digits are the format", () => {
    const ms = nowFor(v0);
    expect(verifyMac({ ...verifyArgs(v0), header: header(v0, { ts: String(ms) }), now: ms })).toEqual({ ok: false, reason: "timestamp" });
    expect(timestampFault(String(ms))).toBe("milliseconds");
    expect(timestampFault("100000000000")).toBe("milliseconds");
    expect(timestampFault("99999999999")).toBe("window");
    expect(timestampFault(String(Math.floor(ms / 1000) - 700))).toBe("window");
    expect(timestampFault("0")).toBe("window");
    for (const ts of ["1336363200.0", "-1336363200", "1.3e9", "", "abc", "1".repeat(21)])
      expect([ts, timestampFault(ts)]).toEqual([ts, "format"]);
  });

  test("a mac of the wrong length or bad base64 fails without throwing", () => {
    for (const mac of [
      "",
      "6o8/xzSmDDMXCSHBp5oSAzqXDs4",
      "6o8/xzSmDDMXCSHBp5oSAzqXDs4=AAAA",
      "6o8/xzSm",
      "!!!!",
      "6o8/xzSmDDMXCSHBp5oSAzqXDs4=!",
      "6o8_xzSmDDMXCSHBp5oSAzqXDs4=",
    ]) {
      expect(verifyMac({ ...verifyArgs(v0), header: header(v0, { mac }) })).toEqual({ ok: false, reason: "signature" });
    }
  });

  test("round trip through parseMacHeader", () => {
    const parsed = parseMacHeader(`MAC id="token-1",ts="${v0.ts}",nonce="${v0.nonce}",mac="${v0.mac}"`);
    expect(parsed).not.toBeNull();
    expect(verifyMac({ ...verifyArgs(v0), header: parsed! })).toEqual({ ok: true });
  });
});
