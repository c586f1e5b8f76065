// OAuth 1.0 (RFC 5849) HMAC-SHA1: the RFC's own examples, and two-legged vectors computed independently with openssl.

import { describe, expect, test } from "bun:test";
import {
  OAUTH1_WINDOW_SECONDS,
  baseStringUri,
  collectParameters,
  hmacSha1Signature,
  normalizeParameters,
  parseOAuthHeader,
  percentEncode,
  signOAuth1,
  signatureBaseString,
  verifyOAuth1,
} from "../../src/auth/oauth1.ts";

describe("RFC 5849 examples", () => {
  test("§3.4.1.1: the signature base string of the POST /request example", () => {
    const header = parseOAuthHeader(
      'OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a", oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D"',
    )!;
    const params = collectParameters({ query: "b5=%3D%253D&a3=a&c%40=&a2=r%20b", oauth: header, formBody: "c2&a3=2+q" });
    const normalized = normalizeParameters(params);
    expect(normalized).toBe(
      "a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2&oauth_nonce=7d8f3e4a&oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201&oauth_token=kkk9d7dh3k39sjv7",
    );
    expect(
      signatureBaseString("POST", baseStringUri(new URL("http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b")), normalized),
    ).toBe(
      "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7",
    );
  });

  test("§1.2: the photos request signs to MdpQcU8iPSUjWoN/UDMsK2sui9I=", () => {
    // Independently: printf '%s' 'GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DchapoH%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal' | openssl dgst -sha1 -hmac 'kd94hf93k423kf44&pfkkdhi9sl3r4s00' -binary | base64
    // → MdpQcU8iPSUjWoN/UDMsK2sui9I= (agrees with the RFC).
    const header = parseOAuthHeader(
      'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_token="nnch734d00sl2jdk", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131202", oauth_nonce="chapoH", oauth_signature="MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D"',
    )!;
    expect(header.oauth_signature).toBe("MdpQcU8iPSUjWoN/UDMsK2sui9I=");
    const url = new URL("http://photos.example.net/photos?file=vacation.jpg&size=original");
    const base = signatureBaseString(
      "GET",
      baseStringUri(url),
      normalizeParameters(collectParameters({ query: url.search.slice(1), oauth: header })),
    );
    expect(base).toBe(
      "GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DchapoH%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal",
    );
    expect(hmacSha1Signature(base, "kd94hf93k423kf44", "pfkkdhi9sl3r4s00")).toBe("MdpQcU8iPSUjWoN/UDMsK2sui9I=");
  });
});

describe("percentEncode", () => {
  test("§3.6: unreserved as is, everything else as uppercase UTF-8 escapes", () => {
    expect(percentEncode("a b")).toBe("a%20b");
    expect(percentEncode("*")).toBe("%2A");
    expect(percentEncode("~-._AZaz09")).toBe("~-._AZaz09");
    expect(percentEncode("é")).toBe("%C3%A9");
    expect(percentEncode("!'()+/=&%")).toBe("%21%27%28%29%2B%2F%3D%26%25");
    expect(percentEncode("😀")).toBe("%F0%9F%98%80");
    expect(percentEncode("")).toBe("");
  });
});

describe("baseStringUri", () => {
  test("§3.4.1.2: lowercase scheme and host, default ports dropped, path as sent, no query", () => {
    expect(baseStringUri(new URL("HTTP://EXAMPLE.COM:80/r"))).toBe("http://example.com/r");
    expect(baseStringUri(new URL("https://Example.com:443/a/b?q=1"))).toBe("https://example.com/a/b");
    expect(baseStringUri(new URL("http://example.com:8080/"))).toBe("http://example.com:8080/");
    expect(baseStringUri(new URL("https://www.example.net:8080/?q=1"))).toBe("https://www.example.net:8080/");
    expect(baseStringUri(new URL("http://example.com:443/x"))).toBe("http://example.com:443/x");
  });

  test("from request parts (path kept exactly as received)", () => {
    expect(baseStringUri({ scheme: "HTTP", host: "EXAMPLE.COM", port: 80, path: "/r%20v/X" })).toBe("http://example.com/r%20v/X");
    expect(baseStringUri({ scheme: "https", host: "api.example.com", port: 443, path: "/user" })).toBe("https://api.example.com/user");
    expect(baseStringUri({ scheme: "https", host: "api.example.com", port: 8443, path: "/push" })).toBe(
      "https://api.example.com:8443/push",
    );
    expect(baseStringUri({ scheme: "http", host: "h", port: null, path: "" })).toBe("http://h/");
  });
});

describe("parseOAuthHeader", () => {
  test("decodes values, drops realm, tolerates spacing and case of the scheme", () => {
    expect(
      parseOAuthHeader('OAuth realm="http://api.example.com/user",oauth_consumer_key="k%20y",oauth_nonce="n",oauth_signature="a%2Fb%3D"'),
    ).toEqual({
      oauth_consumer_key: "k y",
      oauth_nonce: "n",
      oauth_signature: "a/b=",
    });
    expect(parseOAuthHeader('oauth  oauth_nonce = "n" ,  oauth_consumer_key="k"')).toEqual({ oauth_nonce: "n", oauth_consumer_key: "k" });
    expect(parseOAuthHeader('OAuth oauth_token=""')).toEqual({ oauth_token: "" });
  });

  test("refuses duplicates, bad escapes, unquoted values, other schemes, junk", () => {
    expect(parseOAuthHeader('OAuth oauth_nonce="a",oauth_nonce="b"')).toBeNull();
    expect(parseOAuthHeader('OAuth realm="a",realm="b",oauth_nonce="n"')).toBeNull();
    expect(parseOAuthHeader('OAuth oauth_nonce="%zz"')).toBeNull();
    expect(parseOAuthHeader('OAuth oauth_nonce="%C3"')).toBeNull();
    expect(parseOAuthHeader("OAuth oauth_nonce=n")).toBeNull();
    expect(parseOAuthHeader('OAuth oauth_nonce="n",')).toBeNull();
    expect(parseOAuthHeader('OAuth oauth_nonce="n" oauth_token="t"')).toBeNull();
    expect(parseOAuthHeader('MAC oauth_nonce="n"')).toBeNull();
    expect(parseOAuthHeader('OAuthoauth_nonce="n"')).toBeNull();
    expect(parseOAuthHeader("OAuth")).toBeNull();
  });

  test("caps the header at 4 KB", () => {
    const fits = `OAuth oauth_nonce="${"n".repeat(4096 - 'OAuth oauth_nonce=""'.length)}"`;
    expect(fits).toHaveLength(4096);
    expect(parseOAuthHeader(fits)).not.toBeNull();
    expect(parseOAuthHeader(`${fits.slice(0, -1)}n"`)).toBeNull();
  });
});

describe("collectParameters / normalizeParameters", () => {
  test("+ is a space in the query and the form body; valueless names get empty values; the signature is excluded", () => {
    const params = collectParameters({ query: "a=1+2&b&&c=%2B", oauth: { oauth_nonce: "n", oauth_signature: "s" }, formBody: "d=x+y" });
    expect(params).toEqual([
      ["a", "1 2"],
      ["b", ""],
      ["c", "+"],
      ["d", "x y"],
      ["oauth_nonce", "n"],
    ]);
  });

  test("sorts by encoded name, then encoded value, byte order", () => {
    expect(
      normalizeParameters([
        ["b", "2"],
        ["a", "z"],
        ["a", "Z"],
        ["B", "1"],
        ["a_", ""],
        ["a", " "],
      ]),
    ).toBe("B=1&a=%20&a=Z&a=z&a_=&b=2");
  });
});

// Two-legged vectors: consumer secret "secret", empty token secret, so the HMAC key is "secret&".
const GET_VECTOR = {
  // printf '%s' 'GET&http%3A%2F%2Fapi.example.com%2Fuser&age%255Bgt%255D%3D20%26name%3DJ%25C3%25BCrgen%2520X%26oauth_consumer_key%3Dpubkey-123%26oauth_nonce%3D6b1a2c3d-0000-4000-8000-abcdefabcdef%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1336363200%26oauth_version%3D1.0' | openssl dgst -sha1 -hmac 'secret&' -binary | base64
  signature: "i3Y/bqWxynR3F9+r3T48x9y1HMU=",
  url: "http://api.example.com/user?age%5Bgt%5D=20&name=J%C3%BCrgen+X",
  header:
    'OAuth realm="http://api.example.com/user",oauth_signature_method="HMAC-SHA1",oauth_version="1.0",oauth_consumer_key="pubkey-123",oauth_timestamp="1336363200",oauth_nonce="6b1a2c3d-0000-4000-8000-abcdefabcdef",oauth_signature="i3Y%2FbqWxynR3F9%2Br3T48x9y1HMU%3D"',
  now: 1336363200_000,
};
const POST_VECTOR = {
  // printf '%s' 'POST&https%3A%2F%2Fapi.example.com%3A8443%2Fpush&oauth_consumer_key%3Dpubkey-123%26oauth_nonce%3Dn2%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1336363300%26oauth_version%3D1.0%26payload%3Dhi%2520there%26token%3Da%252Fb%26x%3D1' | openssl dgst -sha1 -hmac 'secret&' -binary | base64
  signature: "KBjS9o1aHFQL27xUEiVjI/nAuJM=",
  url: "https://api.example.com:8443/push?x=1",
  formBody: "payload=hi+there&token=a%2Fb",
  header:
    'OAuth oauth_signature_method="HMAC-SHA1",oauth_version="1.0",oauth_consumer_key="pubkey-123",oauth_timestamp="1336363300",oauth_nonce="n2",oauth_signature="KBjS9o1aHFQL27xUEiVjI%2FnAuJM%3D"',
  now: 1336363300_000,
};

/** The verifier's arguments for a vector as signed, with `over` changed. */
function argsOf(
  v: { url: string; header: string; now: number; formBody?: string },
  method: string,
  over: Partial<Parameters<typeof verifyOAuth1>[0]>,
) {
  const url = new URL(v.url);
  return {
    header: parseOAuthHeader(v.header)!,
    consumerSecret: "secret",
    methods: [method],
    baseUris: [baseStringUri(url)],
    query: url.search.slice(1),
    ...(v.formBody === undefined ? {} : { formBody: v.formBody }),
    now: v.now,
    windowSeconds: OAUTH1_WINDOW_SECONDS,
    ...over,
  };
}
const getArgs = (over: Partial<Parameters<typeof verifyOAuth1>[0]> = {}) => argsOf(GET_VECTOR, "GET", over);
const postArgs = (over: Partial<Parameters<typeof verifyOAuth1>[0]> = {}) => argsOf(POST_VECTOR, "POST", over);

describe("verifyOAuth1", () => {
  test("accepts the independently computed two-legged vectors", () => {
    expect(verifyOAuth1(getArgs())).toEqual({ ok: true });
    expect(verifyOAuth1(postArgs())).toEqual({ ok: true });
  });

  test("rejects a tampered query, form body, header parameter, method, uri or secret", () => {
    const bad = { ok: false, reason: "signature" } as const;
    expect(verifyOAuth1(getArgs({ query: "age%5Bgt%5D=21&name=J%C3%BCrgen+X" }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ query: "age%5Bgt%5D=20&name=J%C3%BCrgen+X&extra=1" }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ header: { ...getArgs().header, oauth_nonce: "other" } }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ header: { ...getArgs().header, oauth_consumer_key: "pubkey-124" } }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ methods: ["POST"] }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ baseUris: ["http://api.example.com/users"] }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ baseUris: ["https://api.example.com/user"] }))).toEqual(bad);
    expect(verifyOAuth1(getArgs({ consumerSecret: "secret2" }))).toEqual(bad);
    expect(verifyOAuth1(postArgs({ formBody: "payload=hi+there&token=a%2Fc" }))).toEqual(bad);
    expect(verifyOAuth1(postArgs({ formBody: undefined }))).toEqual(bad);
    expect(verifyOAuth1(postArgs({ baseUris: ["https://api.example.com/push"] }))).toEqual(bad);
  });

  test("a second method and base URI are tried; no more than two of each", () => {
    expect(
      verifyOAuth1(getArgs({ methods: ["POST", "GET"], baseUris: ["https://api.example.com/user", "http://api.example.com/user"] })),
    ).toEqual({ ok: true });
    expect(verifyOAuth1(getArgs({ methods: ["POST", "PUT", "GET"] }))).toEqual({ ok: false, reason: "signature" });
    expect(verifyOAuth1(getArgs({ baseUris: ["a", "b", "http://api.example.com/user"] }))).toEqual({ ok: false, reason: "signature" });
  });

  test("timestamp window ±300 s inclusive; digits only; required", () => {
    expect(verifyOAuth1(getArgs({ now: GET_VECTOR.now + 300_000 }))).toEqual({ ok: true });
    expect(verifyOAuth1(getArgs({ now: GET_VECTOR.now - 300_000 }))).toEqual({ ok: true });
    expect(verifyOAuth1(getArgs({ now: GET_VECTOR.now + 301_000 }))).toEqual({ ok: false, reason: "timestamp" });
    expect(verifyOAuth1(getArgs({ now: GET_VECTOR.now - 301_000 }))).toEqual({ ok: false, reason: "timestamp" });
    expect(verifyOAuth1(getArgs({ now: GET_VECTOR.now + 5000_000 }))).toEqual({ ok: false, reason: "timestamp" });
    const { oauth_timestamp: _, ...noTs } = getArgs().header;
    expect(verifyOAuth1(getArgs({ header: noTs }))).toEqual({ ok: false, reason: "timestamp" });
    expect(verifyOAuth1(getArgs({ header: { ...getArgs().header, oauth_timestamp: "1336363200.5" } }))).toEqual({
      ok: false,
      reason: "timestamp",
    });
  });

  test("signature method must be HMAC-SHA1 (any case), version absent or 1.0", () => {
    const h = getArgs().header;
    expect(verifyOAuth1(getArgs({ header: { ...h, oauth_signature_method: "PLAINTEXT" } }))).toEqual({ ok: false, reason: "method" });
    expect(verifyOAuth1(getArgs({ header: { ...h, oauth_signature_method: "RSA-SHA1" } }))).toEqual({ ok: false, reason: "method" });
    const { oauth_signature_method: _m, ...noMethod } = h;
    expect(verifyOAuth1(getArgs({ header: noMethod }))).toEqual({ ok: false, reason: "method" });
    expect(verifyOAuth1(getArgs({ header: { ...h, oauth_version: "2.0" } }))).toEqual({ ok: false, reason: "version" });
    // Lower case passes the method check; the value as sent is what is signed.
    const lower = { ...h, oauth_signature_method: "hmac-sha1" };
    const base = signatureBaseString(
      "GET",
      "http://api.example.com/user",
      normalizeParameters(collectParameters({ query: getArgs().query, oauth: lower })),
    );
    expect(verifyOAuth1(getArgs({ header: { ...lower, oauth_signature: hmacSha1Signature(base, "secret") } }))).toEqual({ ok: true });
    expect(verifyOAuth1(getArgs({ header: { ...h, oauth_signature_method: "hmac-sha1" } }))).toEqual({ ok: false, reason: "signature" });
  });

  test("a missing, short or malformed signature fails without throwing", () => {
    const h = getArgs().header;
    const { oauth_signature: _s, ...unsigned } = h;
    expect(verifyOAuth1(getArgs({ header: unsigned }))).toEqual({ ok: false, reason: "signature" });
    for (const s of ["", "i3Y/bqWxynR3F9+r3T48x9y1HMU", "i3Y/bqWx", "####", "i3Y_bqWxynR3F9-r3T48x9y1HMU="]) {
      expect(verifyOAuth1(getArgs({ header: { ...h, oauth_signature: s } }))).toEqual({ ok: false, reason: "signature" });
    }
  });
});

describe("signOAuth1", () => {
  test("reproduces the openssl vectors", () => {
    const get = signOAuth1({
      method: "GET",
      url: GET_VECTOR.url,
      consumerKey: "pubkey-123",
      consumerSecret: "secret",
      timestamp: 1336363200,
      nonce: "6b1a2c3d-0000-4000-8000-abcdefabcdef",
    });
    expect(parseOAuthHeader(get)!.oauth_signature).toBe(GET_VECTOR.signature);
    expect(get).toBe(
      'OAuth oauth_signature_method="HMAC-SHA1",oauth_version="1.0",oauth_consumer_key="pubkey-123",oauth_timestamp="1336363200",oauth_nonce="6b1a2c3d-0000-4000-8000-abcdefabcdef",oauth_signature="i3Y%2FbqWxynR3F9%2Br3T48x9y1HMU%3D"',
    );
    const post = signOAuth1({
      method: "post",
      url: new URL(POST_VECTOR.url),
      consumerKey: "pubkey-123",
      consumerSecret: "secret",
      timestamp: "1336363300",
      nonce: "n2",
      formBody: POST_VECTOR.formBody,
    });
    expect(parseOAuthHeader(post)!.oauth_signature).toBe(POST_VECTOR.signature);
  });

  test("round trip with verifyOAuth1, including awkward keys, secrets and query values", () => {
    const url = new URL("https://API.example.com/Items/a%20b?sort=name+desc&q=caf%C3%A9&tag=x&tag=a&empty=");
    const header = signOAuth1({
      method: "DELETE",
      url,
      consumerKey: "pub key/é",
      consumerSecret: "s3cr&t=é+",
      timestamp: 1700000000,
      nonce: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    });
    const parsed = parseOAuthHeader(header)!;
    expect(parsed.oauth_consumer_key).toBe("pub key/é");
    const args = {
      header: parsed,
      consumerSecret: "s3cr&t=é+",
      methods: ["DELETE"],
      baseUris: ["https://api.example.com/Items/a%20b"],
      query: url.search.slice(1),
      now: 1700000100_000,
      windowSeconds: OAUTH1_WINDOW_SECONDS,
    };
    expect(verifyOAuth1(args)).toEqual({ ok: true });
    expect(verifyOAuth1({ ...args, consumerSecret: "s3cr&t=é" })).toEqual({ ok: false, reason: "signature" });
    expect(verifyOAuth1({ ...args, query: "sort=name+desc&q=caf%C3%A9&tag=x&empty=" })).toEqual({ ok: false, reason: "signature" });
  });
});
