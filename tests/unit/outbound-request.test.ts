// Outbound requests on loopback: guarded requests (only public addresses) and unguarded ones (private addresses
// allowed) never share a keep-alive connection, every new guarded connection is resolved and checked again, IP
// literals (IPv6 and IPv4-mapped forms too) are refused before connecting, a Host header does not choose where a
// request connects, and a guarded request accepts only a lookup that checks addresses. Test resolvers route
// names to 127.0.0.1 (private) and 127.0.0.2 (treated as public by the tests' own public-only lookups).

import { afterAll, describe, expect, test } from "bun:test";
import http from "node:http";
import type { LookupAddress } from "node:dns";
import { type Lookup, type OutboundInit, outboundPoolSettings, outboundRequest } from "../../src/net/outbound-request.ts";
import { isPrivateAddress, publicOnlyLookup } from "../../src/net/public-address.ts";

/** A loopback HTTP server that counts the connections it accepted and the requests it answered. */
interface Counter {
  port: number;
  connections: number;
  /** Connections open now. */
  open: number;
  /** "<Host header> <path>" of every request answered. */
  requests: string[];
  stop(): Promise<void>;
}

const servers: Counter[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

/** Listen on host:port (0: a free one); answers 200 "<host>", and closes the connection after /close. */
async function listen(host: string, port = 0): Promise<Counter> {
  const server = http.createServer((req, res) => {
    counter.requests.push(`${req.headers.host} ${req.url}`);
    if (req.url === "/close") res.setHeader("connection", "close");
    res.end(host);
  });
  server.keepAliveTimeout = 30_000;
  const counter: Counter = { port: 0, connections: 0, open: 0, requests: [], stop: async () => {} };
  server.on("connection", (socket) => {
    counter.connections++;
    counter.open++;
    socket.on("close", () => counter.open--);
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  counter.port = (server.address() as { port: number }).port;
  counter.stop = () => new Promise((r) => (server.closeAllConnections(), server.close(() => r())));
  servers.push(counter);
  return counter;
}

/** Servers on 127.0.0.2 and 127.0.0.1 with the same port (a few tries: the port must be free on both). */
async function pair(): Promise<{ pub: Counter; priv: Counter }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pub = await listen("127.0.0.2");
    try {
      return { pub, priv: await listen("127.0.0.1", pub.port) };
    } catch {
      await pub.stop();
      servers.splice(servers.indexOf(pub), 1);
    }
  }
  throw new Error("no port free on both 127.0.0.1 and 127.0.0.2");
}

type Table = Record<string, string | string[]>;
/** A resolver answering from a table; a list is answered one entry per call (the last one repeats). */
function resolver(table: Table, asked: string[] = []) {
  const calls = new Map<string, number>();
  return (host: string, cb: (err: Error | null, addresses: LookupAddress[]) => void) => {
    asked.push(host);
    const entry = table[host];
    if (entry === undefined) return cb(Object.assign(new Error(`${host} is not in the test table`), { code: "ENOTFOUND" }), []);
    const n = calls.get(host) ?? 0;
    calls.set(host, n + 1);
    const address = Array.isArray(entry) ? entry[Math.min(n, entry.length - 1)]! : entry;
    cb(null, [{ address, family: 4 }]);
  };
}

/** 127.0.0.2 stands for a public address; every other address is judged as in production. */
const loopback2IsPublic = (bytes: Uint8Array) =>
  !(bytes.length === 4 && bytes[0] === 127 && bytes[1] === 0 && bytes[2] === 0 && bytes[3] === 2) && isPrivateAddress(bytes);

/** A lookup that checks nothing, as an unguarded caller's test resolver. */
function plainLookup(table: Table, asked: string[] = []): Lookup {
  const resolve = resolver(table, asked);
  return (host, options, cb) =>
    resolve(host, (err, addresses) => {
      if (err) return cb(err);
      if (typeof options === "object" && options?.all) cb(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    });
}

const base = (extra: Partial<OutboundInit> = {}): OutboundInit => ({
  method: "GET",
  headers: {},
  timeoutMs: 5000,
  maxBody: 1024,
  ...extra,
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: "answered", message: "" }),
    (e: Error & { code?: string }) => ({ code: e.code ?? e.name, message: e.message }),
  );

describe("guarded and unguarded requests never share a connection", () => {
  test("a connection an unguarded caller opened to a name resolving to loopback does not carry a guarded request", async () => {
    const idp = await listen("127.0.0.1");
    const url = `http://idp.test:${idp.port}/admin`;
    // A social provider's base URL, set by the administrator, resolving to a private address.
    const unguarded = await outboundRequest(url, base({ allowPrivate: true, unguardedLookup: plainLookup({ "idp.test": "127.0.0.1" }) }));
    expect([unguarded.status, unguarded.body]).toEqual([200, "127.0.0.1"]);
    expect([idp.connections, idp.requests.length]).toEqual([1, 1]);
    // Custom code asks for the same host and port: refused when its own connection is looked up, not served
    // over the pooled one.
    const asked: string[] = [];
    const guarded = publicOnlyLookup(resolver({ "idp.test": "127.0.0.1" }, asked));
    expect(await failure(outboundRequest(url, base({ lookup: guarded })))).toEqual({
      code: "EADDRNOTPUBLIC",
      message: "idp.test resolves to a private address (127.0.0.1)",
    });
    expect(asked).toEqual(["idp.test"]);
    // The production guard (the system resolver, which does not know idp.test) does not reach it either.
    expect((await failure(outboundRequest(url, base({ timeoutMs: 3000 })))).code).not.toBe("answered");
    expect([idp.connections, idp.requests]).toEqual([1, [`idp.test:${idp.port} /admin`]]);
  });

  test("nor does a guarded connection carry an unguarded request, and each lookup has its own connections", async () => {
    const pub = await listen("127.0.0.2");
    const url = `http://pub.test:${pub.port}/`;
    const table = { "pub.test": "127.0.0.2" };
    const guarded = publicOnlyLookup(resolver(table), loopback2IsPublic);
    expect((await outboundRequest(url, base({ lookup: guarded }))).status).toBe(200);
    expect((await outboundRequest(url, base({ lookup: guarded }))).status).toBe(200);
    expect(pub.connections).toBe(1); // kept alive and reused by the same guard
    expect((await outboundRequest(url, base({ allowPrivate: true, unguardedLookup: plainLookup(table) }))).status).toBe(200);
    expect(pub.connections).toBe(2);
    // Another guarded lookup that judges 127.0.0.2 as production does: its own connection, refused.
    const strict = publicOnlyLookup(resolver(table));
    expect((await failure(outboundRequest(url, base({ lookup: strict })))).code).toBe("EADDRNOTPUBLIC");
    expect([pub.connections, pub.requests.length]).toEqual([2, 3]);
  });

  test("a guarded request takes only a lookup that checks every address", async () => {
    const idp = await listen("127.0.0.1");
    const r = await failure(outboundRequest(`http://idp.test:${idp.port}/`, base({ lookup: plainLookup({ "idp.test": "127.0.0.1" }) })));
    expect(r.message).toBe("a guarded request resolves names only through a lookup made by publicOnlyLookup");
    expect(idp.connections).toBe(0);
  });
});

describe("every new guarded connection is checked", () => {
  test("a name that resolved to a public address and now resolves to a private one is refused on the next connection", async () => {
    const { pub, priv } = await pair();
    const asked: string[] = [];
    const lookup = publicOnlyLookup(resolver({ "rebind.test": ["127.0.0.2", "127.0.0.1"] }, asked), loopback2IsPublic);
    const url = (path: string) => `http://rebind.test:${pub.port}${path}`;
    expect((await outboundRequest(url("/"), base({ lookup }))).body).toBe("127.0.0.2");
    // The kept-alive connection goes on to the address checked when it was opened, without a new lookup.
    expect((await outboundRequest(url("/close"), base({ lookup }))).body).toBe("127.0.0.2");
    expect([asked.length, pub.connections]).toEqual([1, 1]);
    // That connection is closed now: the next one is looked up again, and refused.
    expect(await failure(outboundRequest(url("/"), base({ lookup })))).toEqual({
      code: "EADDRNOTPUBLIC",
      message: "rebind.test resolves to a private address (127.0.0.1)",
    });
    expect(asked).toEqual(["rebind.test", "rebind.test"]);
    expect([pub.connections, pub.requests.length, priv.connections, priv.requests.length]).toEqual([1, 2, 0, 0]);
  });

  test("IP literals are refused before connecting, in every spelling, whatever the pools hold", async () => {
    const target = await listen("127.0.0.1");
    const p = target.port;
    // An unguarded caller keeps a connection to the literal open.
    expect((await outboundRequest(`http://127.0.0.1:${p}/`, base({ allowPrivate: true }))).status).toBe(200);
    const permissive = publicOnlyLookup(resolver({}), () => false);
    const spellings = [
      `http://127.0.0.1:${p}/`,
      `http://127.0.0.1.:${p}/`,
      `http://2130706433:${p}/`,
      `http://0x7f.0.0.1:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[0:0:0:0:0:ffff:7f00:1]:${p}/`,
      `http://[::127.0.0.1]:${p}/`,
      `http://[64:ff9b::127.0.0.1]:${p}/`,
      `http://[2002:7f00:1::1]:${p}/`,
      `http://localhost:${p}/`,
      `http://LOCALHOST.:${p}/`,
      `http://idp.localhost:${p}/`,
    ];
    for (const url of spellings) {
      // With the production guard and with a test lookup that would call every address public alike.
      for (const lookup of [undefined, permissive])
        expect([url, (await failure(outboundRequest(url, base({ lookup })))).code]).toEqual([url, "EADDRNOTPUBLIC"]);
    }
    expect([target.connections, target.requests.length]).toEqual([1, 1]);
  });

  test("a Host header does not choose where a guarded request connects", async () => {
    const idp = await listen("127.0.0.1");
    const pub = await listen("127.0.0.2");
    const table = { "idp.test": "127.0.0.1", "pub.test": "127.0.0.2" };
    expect(
      (await outboundRequest(`http://idp.test:${idp.port}/`, base({ allowPrivate: true, unguardedLookup: plainLookup(table) }))).status,
    ).toBe(200);
    const lookup = publicOnlyLookup(resolver(table), loopback2IsPublic);
    // Naming the private host in the Host header: still connects to the URL's (public) host.
    const r = await outboundRequest(`http://pub.test:${pub.port}/x`, base({ lookup, headers: { host: `idp.test:${idp.port}` } }));
    expect(r.body).toBe("127.0.0.2");
    expect(pub.requests).toEqual([`idp.test:${idp.port} /x`]);
    // Naming the public host in the Host header of a request to the private one: refused.
    expect(
      (await failure(outboundRequest(`http://idp.test:${idp.port}/y`, base({ lookup, headers: { host: `pub.test:${pub.port}` } })))).code,
    ).toBe("EADDRNOTPUBLIC");
    expect([idp.connections, idp.requests.length]).toEqual([1, 1]);
  });
});

describe("pooled connections", () => {
  test("are reused while busy and closed once idle past the pool's idle time", async () => {
    const server = await listen("127.0.0.1");
    const before = outboundPoolSettings.idleSocketMs;
    outboundPoolSettings.idleSocketMs = 300; // read when the pool is made: a new lookup makes a new pool
    try {
      const lookup = plainLookup({ "burst.test": "127.0.0.1" });
      const url = `http://burst.test:${server.port}/`;
      const burst = await Promise.all(
        Array.from({ length: 8 }, () => outboundRequest(url, base({ allowPrivate: true, unguardedLookup: lookup }))),
      );
      expect(burst.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(server.open).toBe(8);
      // Within the idle time a connection is reused, not opened anew.
      expect((await outboundRequest(url, base({ allowPrivate: true, unguardedLookup: lookup }))).status).toBe(200);
      expect(server.connections).toBe(8);
      const deadline = Date.now() + 3000;
      while (server.open > 0 && Date.now() < deadline) await Bun.sleep(50);
      expect(server.open).toBe(0);
      // A request after that opens a new connection and succeeds.
      expect((await outboundRequest(url, base({ allowPrivate: true, unguardedLookup: lookup }))).status).toBe(200);
      expect(server.connections).toBe(9);
    } finally {
      outboundPoolSettings.idleSocketMs = before;
    }
  });
});
