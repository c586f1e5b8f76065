// The Parse Server REST client of the live pull (src/cli/transfer/parse-rest.ts) against a loopback server that
// misbehaves on purpose: 503s and dropped connections are retried with backoff, a 4xx is one clear error at once,
// pages follow objectId order with `objectId > last`, counts are asked with a filter, and the master key is sent.

import { afterAll, expect, test } from "bun:test";
import { ParseRest } from "../../src/cli/transfer/parse-rest.ts";

const seen: { path: string; params: URLSearchParams; key: string | null }[] = [];
let failures = 0;
const OBJECTS = Array.from({ length: 5 }, (_, i) => ({ objectId: `o${i}` }));
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const url = new URL(req.url);
    seen.push({ path: url.pathname, params: url.searchParams, key: req.headers.get("x-parse-master-key") });
    if (url.pathname === "/parse/flaky" && failures-- > 0) return new Response("busy", { status: 503 });
    if (url.pathname === "/parse/flaky") return Response.json({ ok: true });
    if (url.pathname === "/parse/denied") return Response.json({ code: 119, error: "Permission denied" }, { status: 403 });
    if (url.pathname === "/parse/classes/Thing") {
      const where = JSON.parse(url.searchParams.get("where") ?? "{}");
      if (url.searchParams.get("count")) return Response.json({ results: [], count: OBJECTS.length });
      const after = where.objectId?.$gt ?? "";
      const limit = Number(url.searchParams.get("limit"));
      return Response.json({ results: OBJECTS.filter((o) => o.objectId > after).slice(0, limit) });
    }
    return new Response("Cannot GET", { status: 404 });
  },
});
afterAll(() => server.stop(true));

const slept: number[] = [];
const rest = new ParseRest(`http://127.0.0.1:${server.port}/parse/`, "app", "master", async (ms) => void slept.push(ms));

test("503s are retried with growing waits; the answer after them is returned", async () => {
  failures = 2;
  slept.length = 0;
  expect(await rest.get("/flaky")).toEqual({ ok: true });
  expect(slept).toEqual([500, 1000]);
});

test("a 4xx is an error naming the call and Parse's message, without retries", async () => {
  slept.length = 0;
  await expect(rest.get("/denied")).rejects.toThrow("Parse Server GET /denied: 403 Permission denied (code 119)");
  expect(slept).toEqual([]);
  await expect(rest.get("/elsewhere")).rejects.toThrow("404 Cannot GET (is http://127.0.0.1:");
});

test("a server that cannot be reached is retried, then one error", async () => {
  const gone = new ParseRest("http://127.0.0.1:1/parse", "app", "master", async () => {});
  await expect(gone.get("/schemas")).rejects.toThrow("Parse Server cannot reach http://127.0.0.1:1/parse");
});

test("pages in objectId order, each after the last; counts with a filter; the master key on every call", async () => {
  seen.length = 0;
  const pages: string[][] = [];
  for await (const rows of rest.pages("Thing", 2)) pages.push(rows.map((r) => String(r.objectId)));
  expect(pages).toEqual([["o0", "o1"], ["o2", "o3"], ["o4"]]);
  expect(seen.map((s) => s.params.get("where"))).toEqual([null, '{"objectId":{"$gt":"o1"}}', '{"objectId":{"$gt":"o3"}}']);
  expect(seen.every((s) => s.params.get("order") === "objectId" && s.key === "master")).toBe(true);
  expect(await rest.count("Thing")).toBe(5);
  expect(seen.at(-1)!.params.get("where")).toBe('{"objectId":{"$exists":true}}');
});

test("URLs that are not http(s) are refused before any call", () => {
  expect(() => new ParseRest("ftp://example.com/parse", "a", "k")).toThrow("--from-parse must be an http(s) URL");
  expect(() => new ParseRest("not a url", "a", "k")).toThrow("--from-parse must be the Parse Server's URL");
});
