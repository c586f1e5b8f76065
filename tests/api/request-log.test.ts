// The request log: one line per request at info (method, path with query names only, status, ms, environment),
// the reason of a 4xx at debug (for a bad MAC: host, port and the normalized string, never the key), nothing
// below info; passwords, tokens, keys and bodies never appear.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, makeTestApp, type TestApp } from "../helpers/app.ts";
import { macAuth } from "../helpers/sign.ts";

const LINE = /^\S+Z INFO (\S+) (\S+) (\d{3}) \d+\.\dms (\S+)(?:: (.*))?$/;

/** The request lines logged while `fn` runs, parsed. */
async function logged(t: TestApp, fn: () => Promise<unknown>) {
  // A line is written after its response, on a later turn of the event loop (refusals before routing at once).
  await Bun.sleep(5);
  const from = t.logs.length;
  await fn();
  await Bun.sleep(5);
  return t.logs
    .slice(from)
    .map((l) => LINE.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ method: m[1], target: m[2], status: Number(m[3]), env: m[4], reason: m[5] }));
}

describe("at debug", () => {
  let t: TestApp;
  let creds: { access_token: string; mac_key: string };
  beforeAll(async () => {
    t = await makeTestApp({ logLevel: "debug" });
    expect((await t.request("POST", "/user", { body: { username: "ann", password: "ann-password-1" } })).status).toBe(201);
    creds = (await t.request("POST", "/user/accessToken", { body: { username: "ann", password: "ann-password-1" } })).body;
  });
  afterAll(() => t.close());

  test("one line per request, with the environment of the key and the query's names but not its values", async () => {
    const lines = await logged(t, async () => {
      await t.request("POST", "/todo", { body: { title: "secret title" } });
      await t.request("GET", "/todo?title=hidden-value&_expand=2");
      await t.request("GET", "/todo", { version: 1, key: KEYS.prodPublic });
      await t.request("GET", "/_health");
    });
    expect(lines).toEqual([
      { method: "POST", target: "/todo", status: 201, env: "development", reason: undefined },
      { method: "GET", target: "/todo?title&_expand", status: 200, env: "development", reason: undefined },
      { method: "GET", target: "/todo", status: 404, env: "production", reason: "API version 1 is not deployed" },
      { method: "GET", target: "/_health", status: 200, env: "development", reason: undefined },
    ]);
    const text = t.logs.join("\n");
    for (const secret of ["secret title", "hidden-value", "ann-password-1", creds.access_token, creds.mac_key])
      expect(text).not.toContain(secret);
  });

  test("each 4xx carries its reason; routing refusals, overrides and preflights are logged once each", async () => {
    const lines = await logged(t, async () => {
      await t.request("GET", "/todo/missing");
      await t.request("PATCH", "/todo");
      await t.request("POST", "/todo", { raw: "{not json" });
      await t.request("POST", "/todo", { headers: { "x-http-method-override": "DELETE" } });
      await t.request("GET", "/todo/missing", { headers: { "x-http-method-override": "DELETE" } });
      await t.request("OPTIONS", "/todo", { headers: { origin: "http://app.example", "access-control-request-method": "GET" } });
    });
    // Refusals before routing (the bad override, the preflight) are written at once, the others when the answer is ready.
    const seen = lines.map((l) => `${l.method} ${l.target} ${l.status}: ${l.reason ?? "-"}`).sort();
    expect(seen).toHaveLength(6);
    expect(seen[0]).toBe("DELETE /todo/missing 404: This object does not exist");
    expect(seen[1]).toBe("GET /todo/missing 404: object instance does not exist");
    expect(seen[2]).toBe("OPTIONS /todo 204: -");
    expect(seen[3]).toBe("PATCH /todo 405: PATCH is not allowed here");
    expect(seen.slice(4).join("\n")).toContain("POST /todo 400: malformed JSON");
    expect(seen.slice(4).join("\n")).toContain("POST /todo 400: X-HTTP-Method-Override cannot turn POST into DELETE");
  });

  test("a bad MAC logs the host, port and normalized string the server expected, never a key", async () => {
    const auth = macAuth({ access_token: creds.access_token, mac_key: "not-the-key" }, "GET", "/todo", { nonce: "nonce-1" });
    const [line] = await logged(t, () => t.request("GET", "/todo", { headers: { authorization: auth } }));
    expect(line!.status).toBe(401);
    expect(line!.reason).toStartWith("invalid MAC signature (host localhost, port 80");
    const ts = /ts="(\d+)"/.exec(auth)![1];
    expect(line!.reason).toContain(JSON.stringify(`${ts}\nnonce-1\nGET\n/todo\nlocalhost\n80\n\n`));
    expect(t.logs.join("\n")).not.toContain(creds.mac_key);
    expect(t.logs.join("\n")).not.toContain("not-the-key");
  });
});

describe("other levels", () => {
  test("at info the lines carry no reasons; at warn there are none", async () => {
    const info = await makeTestApp({ logLevel: "info" });
    const warn = await makeTestApp({ logLevel: "warn" });
    try {
      const [line] = await logged(info, () => info.request("GET", "/todo/missing"));
      expect(line).toEqual({ method: "GET", target: "/todo/missing", status: 404, env: "development", reason: undefined });
      expect(await logged(warn, () => warn.request("GET", "/todo/missing"))).toEqual([]);
    } finally {
      await info.close();
      await warn.close();
    }
  });
});
