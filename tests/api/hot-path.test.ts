// The hot route stays cheap: Elysia compiles each route from what its hooks use, and a hook that takes the
// whole context (instead of destructuring it) makes every route parse headers, query and cookies. This pins
// the compiled GET by key (with and without the request log) so such a hook is caught here, not in a benchmark.

import { expect, test } from "bun:test";
import { makeTestApp } from "../helpers/app.ts";

for (const logLevel of ["warn", "debug"] as const) {
  test(`GET /<schema>/<id> at log level ${logLevel} parses no headers, query or cookies`, async () => {
    const t = await makeTestApp({ logLevel });
    try {
      const route = (t.app.routes as unknown as { method: string; path: string; compile(): unknown }[]).find(
        (r) => r.method === "GET" && r.path === "/:schema/:id",
      )!;
      const compiled = String(route.compile());
      for (const costly of ["parseCookie", "headers.toJSON", "parseQuery"])
        expect([costly, compiled.includes(costly)]).toEqual([costly, false]);
      // And it still answers.
      const c = await t.request("POST", "/todo", { body: { title: "x" } });
      expect((await t.request("GET", `/todo/${c.body.todo_id}`)).body.title).toBe("x");
    } finally {
      await t.close();
    }
  });
}
