// The request observer (src/http/request-log.ts) on its own: a request is counted once, when its answer is ready -
// a promised answer when it resolves, a rejected one by the error rendering - and the log line says so.

import { describe, expect, test } from "bun:test";
import { requestObserver, type RequestSet } from "../../src/http/request-log.ts";
import { RequestStats } from "../../src/system/request-stats.ts";
import { RequestLogRing } from "../../src/system/request-log-ring.ts";
import { createLogger } from "../../src/log.ts";

function setup() {
  const stats = new RequestStats();
  const ring = new RequestLogRing(100);
  const observer = requestObserver({ log: createLogger("info", () => {}), stats, ring, environment: () => "development" });
  const request = (path: string) => new Request(`http://localhost${path}`);
  const counts = () => stats.summary(1).data;
  return { observer, ring, request, counts };
}

describe("request observer", () => {
  test("an answer ready at once is counted with its status", () => {
    const { observer, ring, request, counts } = setup();
    const set: RequestSet = { status: 200 };
    const r = request("/note/k1?secret=x");
    observer.start(set);
    observer.answered(r, set, new Response("{}", { status: 201 }), "/:schema/:id");
    expect(counts()).toMatchObject({ requests: 1, clientErrors: 0 });
    expect(ring.list({ limit: 10 }).map((e) => [e.path, e.status])).toEqual([["/note/k1?secret", 201]]);
  });

  test("a promised answer is counted when it resolves, with the status set meanwhile", async () => {
    const { observer, ring, request, counts } = setup();
    const set: RequestSet = { status: 200 };
    const r = request("/note");
    observer.start(set);
    const { promise, resolve } = Promise.withResolvers<unknown>();
    observer.answered(r, set, promise, "/:schema");
    expect(counts().requests).toBe(0);
    set.status = 206;
    resolve({ listed: true });
    await promise;
    await Bun.sleep(0);
    expect(counts().requests).toBe(1);
    expect(ring.list({ limit: 10 })[0]!.status).toBe(206);
  });

  test("a rejected answer is counted once, by the error rendering, with the error's status", async () => {
    const { observer, request, counts } = setup();
    const set: RequestSet = { status: 200 };
    const r = request("/note/missing");
    observer.start(set);
    const failed = Promise.reject(new Error("not found"));
    observer.answered(r, set, failed, "/:schema/:id");
    await failed.catch(() => {});
    await Bun.sleep(0);
    expect(counts().requests).toBe(0);
    observer.finish(r, set, 404, "/:schema/:id");
    observer.finish(r, set, 404, "/:schema/:id");
    expect(counts()).toMatchObject({ requests: 1, clientErrors: 1 });
  });

  test("a re-dispatched request is forgotten: only the request it became is counted", () => {
    const { observer, request, counts } = setup();
    const first: RequestSet = { status: 200 };
    const second: RequestSet = { status: 200 };
    observer.start(first);
    observer.start(second);
    observer.forget(first);
    observer.answered(request("/note"), first, new Response(null, { status: 204 }), "/:schema");
    observer.answered(request("/note"), second, new Response(null, { status: 204 }), "/:schema");
    expect(counts().requests).toBe(1);
  });
});
