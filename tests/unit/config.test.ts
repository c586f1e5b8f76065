// Boot configuration: precedence (flag > BURROW_* > default) and one clear error per bad value.

import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig, parseListen, parseSize } from "../../src/config.ts";
import { cidrContains, parseCidr, parseIp } from "../../src/net/ip.ts";
import { parseArgs } from "../../src/cli/args.ts";

describe("loadConfig", () => {
  test("defaults", () => {
    const c = loadConfig({}, {});
    expect(c.dir).toEndWith("/burrow_data");
    expect(c.http).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(c.publicUrl).toBeNull();
    expect(c.pushHttp).toBeNull();
    expect(c.bodyLimit).toBe(32 * 1024 * 1024);
    expect(c.infer).toBe(true);
    expect(c.admin).toBeNull();
  });

  test("flags win over environment variables, which win over defaults", () => {
    const env = { BURROW_HTTP: "0.0.0.0:9000", BURROW_BODY_LIMIT: "1mb", BURROW_NO_INFER: "true" };
    expect(loadConfig({}, env).http).toEqual({ host: "0.0.0.0", port: 9000 });
    expect(loadConfig({ "--http": "127.0.0.1:7000" }, env).http.port).toBe(7000);
    expect(loadConfig({}, env).bodyLimit).toBe(1024 * 1024);
    expect(loadConfig({}, env).infer).toBe(false);
    expect(loadConfig({ "--no-infer": true }, {}).infer).toBe(false);
    expect(loadConfig({ "--public-url": "https://api.example.com/" }, {}).publicUrl).toBe("https://api.example.com");
    expect(loadConfig({}, { BURROW_PUSH_HTTP: "0.0.0.0:8081" }).pushHttp).toEqual({ host: "0.0.0.0", port: 8081 });
  });

  test("invalid values are one clear line naming the option", () => {
    const cases: [Record<string, string>, Record<string, string>, string][] = [
      [{ "--http": "nowhere" }, {}, 'invalid --http "nowhere"'],
      [{ "--http": "1.2.3.4:70000" }, {}, "invalid --http"],
      [{}, { BURROW_HTTP: "x:y" }, "invalid --http"],
      [{ "--push-http": "1.2.3.4:70000" }, {}, 'invalid --push-http "1.2.3.4:70000"'],
      [{ "--push-http": "127.0.0.1:8080" }, {}, "it must differ from --http"],
      [{ "--body-limit": "lots" }, {}, 'invalid --body-limit "lots"'],
      [{ "--body-limit": "10" }, {}, "invalid --body-limit"],
      [{ "--public-url": "ftp://x" }, {}, "invalid --public-url"],
      [{ "--trusted-proxy": "10.0.0.0/33" }, {}, "invalid --trusted-proxy"],
      [{ "--log-level": "loud" }, {}, "invalid --log-level"],
      [{}, { BURROW_NO_INFER: "maybe" }, "invalid --no-infer"],
      [{}, { BURROW_ADMIN_EMAIL: "a@b.co" }, "must be set together"],
      [{}, { BURROW_ADMIN_EMAIL: "not-an-email", BURROW_ADMIN_PASSWORD: "longenough" }, "invalid BURROW_ADMIN_EMAIL"],
      [{}, { BURROW_ADMIN_EMAIL: "a@b.co", BURROW_ADMIN_PASSWORD: "short" }, "at least 8"],
      [{}, { BURROW_DEV_PUBLIC_KEY: "has space in it" }, "invalid BURROW_DEV_PUBLIC_KEY"],
      [{}, { BURROW_DEV_PUBLIC_KEY: "same-key-123", BURROW_PROD_PUBLIC_KEY: "same-key-123" }, "must all differ"],
    ];
    for (const [flags, env, msg] of cases) {
      let err: unknown;
      try {
        loadConfig(flags, env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain(msg);
      expect((err as Error).message).not.toContain("\n");
    }
  });

  test("--store: a libSQL server URL, its namespace prefix, admin API and token; files in --dir by default", () => {
    expect(loadConfig({ "--dir": "/tmp/x" }, {}).store).toEqual({
      dir: "/tmp/x",
      url: null,
      authToken: null,
      namespace: "burrow",
      adminUrl: null,
    });
    const c = loadConfig(
      { "--store": "http://127.0.0.1:8081", "--store-namespace": "shop_1" },
      { BURROW_STORE_ADMIN_URL: "http://127.0.0.1:8082", BURROW_STORE_AUTH_TOKEN: "jwt" },
    );
    expect(c.store).toMatchObject({
      url: "http://127.0.0.1:8081",
      namespace: "shop_1",
      adminUrl: "http://127.0.0.1:8082",
      authToken: "jwt",
    });
    expect(loadConfig({}, { BURROW_STORE: "libsql://db.example.com" }).store.url).toBe("libsql://db.example.com");
    for (const [flags, message] of [
      [{ "--store": "ftp://x" }, "--store"],
      [{ "--store": "not a url" }, "--store"],
      [{ "--store": "http://user:secret@127.0.0.1:8081" }, "BURROW_STORE_AUTH_TOKEN"],
      [{ "--store-namespace": "a.b" }, "--store-namespace"],
      [{ "--store-namespace": "" }, "--store-namespace"],
      [{ "--store-admin": "file:///x" }, "--store-admin"],
    ] as [Record<string, string>, string][]) {
      expect(() => loadConfig(flags, {})).toThrow(ConfigError);
      expect(() => loadConfig(flags, {})).toThrow(message);
    }
  });

  test("listen addresses and sizes", () => {
    expect(parseListen(":9000")).toEqual({ host: "127.0.0.1", port: 9000 });
    expect(parseListen("9000")).toEqual({ host: "127.0.0.1", port: 9000 });
    expect(parseListen("[::1]:0")).toEqual({ host: "::1", port: 0 });
    expect(parseListen("localhost:80")).toEqual({ host: "localhost", port: 80 });
    expect(parseListen("a b:1")).toBeNull();
    expect(parseSize("512kb")).toBe(512 * 1024);
    expect(parseSize("1.5m")).toBe(1.5 * 1024 * 1024);
    expect(parseSize("2048")).toBe(2048);
    expect(parseSize("1kb")).toBe(1024);
    expect(parseSize("5gb")).toBeNull();
  });
});

describe("ip and cidr", () => {
  test("parse and match v4 and v6", () => {
    expect(parseIp("10.1.2.3")).toEqual(new Uint8Array([10, 1, 2, 3]));
    expect(parseIp("256.1.1.1")).toBeNull();
    expect(parseIp("::1")?.[15]).toBe(1);
    expect(parseIp("fe80::1:2")).not.toBeNull();
    expect(parseIp("1::2::3")).toBeNull();
    const net = parseCidr("10.0.0.0/8")!;
    expect(cidrContains(net, "10.200.1.1")).toBe(true);
    expect(cidrContains(net, "11.0.0.1")).toBe(false);
    expect(cidrContains(net, "::ffff:10.0.0.1")).toBe(true);
    expect(cidrContains(parseCidr("::1")!, "::1")).toBe(true);
    expect(cidrContains(parseCidr("2001:db8::/32")!, "2001:db8:ffff::1")).toBe(true);
    expect(cidrContains(parseCidr("2001:db8::/32")!, "2001:db9::1")).toBe(false);
  });
});

describe("parseArgs", () => {
  test("values, booleans, = form, unknown options", () => {
    const a = parseArgs(["x", "--dir", "/d", "--http=:1", "--no-infer", "--force"], { booleans: ["--force"] });
    expect(a).toEqual({ positionals: ["x"], flags: { "--dir": "/d", "--http": ":1", "--no-infer": true, "--force": true } });
    expect(() => parseArgs(["--bogus"])).toThrow("unknown option --bogus");
    expect(() => parseArgs(["--dir"])).toThrow("--dir needs a value");
    expect(() => parseArgs(["--no-infer=1"])).toThrow("takes no value");
  });

  test("a repeatable flag keeps every value, joined with commas; others keep the last", () => {
    const own = { values: ["--schema", "--out"], repeatable: ["--schema"] };
    expect(parseArgs(["--schema", "a", "--schema=b", "--out", "x", "--out", "y"], own).flags).toEqual({ "--schema": "a,b", "--out": "y" });
  });
});
