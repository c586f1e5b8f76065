// The CodeRunner contract: what every place custom code can run (this thread, worker threads) must do.

import { afterAll, describe, expect, test } from "bun:test";
import type { BundleSpec, CodeRunner } from "../../src/code/code-runner.ts";
import { CodeError } from "../../src/code/code-error.ts";
import { DEFAULT_LIMITS, type Dispatch } from "../../src/code/sandbox.ts";

const OPS = { data: ["read"], log: ["info"] };

export function spec(key: string, js: string, limits: Partial<typeof DEFAULT_LIMITS> = {}): BundleSpec {
  return { key, js, ops: OPS, limits: { ...DEFAULT_LIMITS, timeoutMs: 2_000, ...limits }, warm: 1, max: 8 };
}

const BUNDLE = `
export const methods = [
  { name: "echo", params: ["x"], async execute(req) { return { body: { x: req.params.x, user: req.loggedInUser } }; } },
  { name: "reads", async execute(req, s) { const a = await s.data.read("thing", req.params.id); return { body: { got: a } }; } },
  { name: "slow", async execute(req, s) { await s.data.read("wait", ""); return { body: { user: req.loggedInUser } }; } },
  { name: "version", execute() { return { body: "v1" }; } },
];`;

const noServices: Dispatch = async () => {
  throw new Error("no services here");
};

export function runnerContract(name: string, make: () => CodeRunner) {
  describe(`CodeRunner contract: ${name}`, () => {
    const runner = make();
    afterAll(() => runner.close());

    test("install answers the methods; calls run with their own request", async () => {
      expect((await runner.install(spec("a", BUNDLE))).methods).toEqual([
        { name: "echo", params: ["x"] },
        { name: "reads", params: [] },
        { name: "slow", params: [] },
        { name: "version", params: [] },
      ]);
      const r = await runner.call("a", "echo", JSON.stringify({ params: { x: "1" }, loggedInUser: "ann" }), noServices);
      expect(r).toEqual({ status: 200, headers: {}, body: { kind: "json", text: JSON.stringify({ x: "1", user: "ann" }) } });
    });

    test("services are dispatched per call, values come back", async () => {
      const seen: unknown[] = [];
      const r = await runner.call("a", "reads", JSON.stringify({ params: { id: "k1" } }), async (svc, op, args) => {
        seen.push([svc, op, args]);
        return { id: args[1], n: 7 };
      });
      expect(seen).toEqual([["data", "read", ["thing", "k1"]]]);
      expect(r.body).toEqual({ kind: "json", text: JSON.stringify({ got: { id: "k1", n: 7 } }) });
    });

    test("a service failure rejects inside the guest (uncaught: the call fails with the message)", async () => {
      const e = await runner.call("a", "reads", JSON.stringify({ params: { id: "x" } }), noServices).catch((x) => x);
      expect(e).toBeInstanceOf(CodeError);
      expect([e.kind, e.message]).toEqual(["thrown", "no services here"]);
    });

    test("concurrent calls never see each other's request or services", async () => {
      const gates: (() => void)[] = [];
      const dispatch =
        (user: string): Dispatch =>
        async () => {
          await new Promise<void>((r) => gates.push(r));
          return user;
        };
      const calls = Array.from({ length: 6 }, (_, i) =>
        runner.call("a", "slow", JSON.stringify({ loggedInUser: `u${i}` }), dispatch(`u${i}`)),
      );
      while (gates.length < 6) await Bun.sleep(5);
      for (const g of gates.reverse()) g();
      const out = await Promise.all(calls);
      expect(out.map((r) => JSON.parse((r.body as { text: string }).text).user)).toEqual(["u0", "u1", "u2", "u3", "u4", "u5"]);
    });

    test("a compile error is CodeError compile with the line; the key is not installed", async () => {
      const e = await runner.install(spec("bad", "export const methods = [];\nthrow new Error('boom at load');")).catch((x) => x);
      expect(e).toBeInstanceOf(CodeError);
      expect([e.kind, e.message, e.line]).toEqual(["compile", "boom at load", 2]);
      expect((await runner.call("bad", "x", JSON.stringify({}), noServices).catch((x) => x)).message).toContain("not loaded");
    });

    test("a busy loop stops at the time limit; the pool goes on", async () => {
      await runner.install(
        spec(
          "loop",
          `export const methods = [{ name: "spin", execute() { for (;;) {} } }, { name: "ok", execute() { return { body: 1 }; } }];`,
          { timeoutMs: 300 },
        ),
      );
      const t0 = performance.now();
      const e = await runner.call("loop", "spin", JSON.stringify({}), noServices).catch((x) => x);
      expect([e.kind, e.message]).toEqual(["timeout", "the method ran longer than 300 ms"]);
      expect(performance.now() - t0).toBeLessThan(300 + 300);
      expect((await runner.call("loop", "ok", JSON.stringify({}), noServices)).body).toEqual({ kind: "json", text: JSON.stringify(1) });
    });

    test("new code replaces a pool without dropping the call in flight", async () => {
      let release!: () => void;
      const inFlight = runner.call(
        "a",
        "slow",
        JSON.stringify({ loggedInUser: "old" }),
        () => new Promise((r) => (release = () => r(null))),
      );
      while (!release) await Bun.sleep(5);
      await runner.install(spec("a2", BUNDLE.replace('"v1"', '"v2"')));
      runner.drop("a");
      release();
      expect(JSON.parse(((await inFlight).body as { text: string }).text).user).toBe("old");
      expect((await runner.call("a2", "version", JSON.stringify({}), noServices)).body).toEqual({ kind: "text", value: "v2" });
      expect((await runner.call("a", "version", JSON.stringify({}), noServices).catch((x) => x)).message).toContain("not loaded");
    });
  });
}
