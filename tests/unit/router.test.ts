// The router: static segments before parameters, backtracking, decoding, 405 with the allowed methods.

import { expect, test } from "bun:test";
import { Router, Routes } from "../../src/http/router.ts";

const ok = (name: string) => () => new Response(name);
const router = new Router([
  new Routes("/_admin/api").get("/keys", ok("keys")).get("/schemas/:name", ok("schema")),
  new Routes().get("/:schema", ok("list")).get("/:schema/:id", ok("get")).put("/:schema/:id", ok("put")).get("/_health", ok("health")),
]);

function find(method: string, path: string) {
  const m = router.find(method, path);
  if (!m || "allowed" in m) return m;
  return { name: "", params: m.params, handler: m.handler };
}

test("static routes win, parameters catch the rest", async () => {
  const keys = router.find("GET", "/_admin/api/keys");
  expect(keys && "handler" in keys && (await (await keys.handler({ request: new Request("http://x"), params: keys.params })).text())).toBe("keys");
  expect(find("GET", "/_health")).toMatchObject({ params: {} });
  expect(find("GET", "/todo/abc")).toMatchObject({ params: { schema: "todo", id: "abc" } });
  expect(find("GET", "/todo/")).toMatchObject({ params: { schema: "todo" } });
  expect(find("GET", "/_admin/api/schemas/user")).toMatchObject({ params: { name: "user" } });
});

test("parameters are percent-decoded; malformed encoding is a 400", () => {
  expect(find("GET", "/todo/a%20b%2Fc")).toMatchObject({ params: { id: "a b/c" } });
  expect(() => router.find("GET", "/todo/%zz")).toThrow("malformed percent-encoding");
});

test("unknown paths are null; a known path with another method lists the allowed ones", () => {
  expect(router.find("GET", "/a/b/c")).toBeNull();
  expect(router.find("GET", "/")).toBeNull();
  expect(router.find("GET", "//x")).toBeNull();
  expect(router.find("GET", "/_anything/x")).toBeNull();
  expect(router.find("DELETE", "/todo/x")).toEqual({ allowed: ["GET", "PUT"] });
});

test("conflicting declarations are refused", () => {
  expect(() => new Router([new Routes().get("/:a", ok("a")).get("/:b/x", ok("b"))])).toThrow("clashes");
  expect(() => new Router([new Routes().get("/x", ok("a")).get("/x", ok("b"))])).toThrow("declared twice");
});
