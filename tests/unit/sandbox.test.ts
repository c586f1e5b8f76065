// The custom-code sandbox on its own: loading a bundle and listing its methods, calls with JSON, text and byte
// responses, services bridged through host promises, compile errors with their line, and the limits that must
// hold - infinite loops, awaits that never settle, memory bombs, deep recursion - plus what the guest can reach.

import { describe, expect, test } from "bun:test";
import { RawJson } from "../../src/code/raw-json.ts";
import { CodeError } from "../../src/code/code-error.ts";
import { Answered, type Dispatch, type MethodResponse, Sandbox } from "../../src/code/sandbox.ts";

const OPS = { data: ["read", "create"], log: ["info"] };
const LIMITS = { timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024, stackBytes: 256 * 1024 };
const noServices: Dispatch = async () => {
  throw new Error("no services in this test");
};

async function failure(p: Promise<unknown>): Promise<CodeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CodeError) return e;
    throw e;
  }
  throw new Error("expected a CodeError");
}

describe("bundles", () => {
  test("methods are listed with their params; calls answer JSON, text and bytes", async () => {
    const sb = await Sandbox.load(
      `export const methods = [
        { name: "hello", params: ["name"], async execute(req) { return { status: 201, headers: { "x-a": "1" }, body: { msg: "Hello, " + req.params.name, verb: req.verb } }; } },
        { name: "text", execute() { return { body: "plain" }; } },
        { name: "bytes", execute() { return { body: new Uint8Array([0, 1, 2, 255]) }; } },
        { name: "nothing", execute() {} },
      ];`,
      OPS,
      LIMITS,
    );
    expect(sb.info.methods).toEqual([
      { name: "hello", params: ["name"] },
      { name: "text", params: [] },
      { name: "bytes", params: [] },
      { name: "nothing", params: [] },
    ]);
    expect(await sb.call("hello", JSON.stringify({ verb: "GET", params: { name: "Ann" } }), noServices)).toEqual({
      status: 201,
      headers: { "x-a": "1" },
      body: { kind: "json", text: JSON.stringify({ msg: "Hello, Ann", verb: "GET" }) },
    });
    expect(await sb.call("text", JSON.stringify({}), noServices)).toEqual({
      status: 200,
      headers: {},
      body: { kind: "text", value: "plain" },
    });
    expect(await sb.call("bytes", JSON.stringify({}), noServices)).toEqual({
      status: 200,
      headers: {},
      body: { kind: "bytes", base64: Buffer.from([0, 1, 2, 255]).toString("base64") },
    });
    expect((await sb.call("nothing", JSON.stringify({}), noServices)).body).toEqual({ kind: "json", text: JSON.stringify({}) });
    sb.dispose();
  });

  test("a text body with NUL characters and any Unicode arrives whole", async () => {
    const sb = await Sandbox.load(
      `export const methods = [
        { name: "nul", execute() { return { body: "a\\u0000b\\u0000 é 😀" }; } },
        { name: "uni", execute() { return { body: "é ü 中文 😀", headers: { "x-a": "ü" } }; } },
      ];`,
      OPS,
      LIMITS,
    );
    expect((await sb.call("nul", "{}", noServices)).body).toEqual({ kind: "text", value: "a\u0000b\u0000 é 😀" });
    expect(await sb.call("uni", "{}", noServices)).toEqual({
      status: 200,
      headers: { "x-a": "ü" },
      body: { kind: "text", value: "é ü 中文 😀" },
    });
    sb.dispose();
  });

  test("compile errors say what and where; bad module shapes are refused", async () => {
    const syntax = await failure(Sandbox.load("export const methods = [\n  { name: 'a', execute() { return 1 +; } },\n];", OPS, LIMITS));
    expect(syntax.kind).toBe("compile");
    expect(syntax.line).toBe(2);
    expect((await failure(Sandbox.load("export const x = 1;", OPS, LIMITS))).message).toContain("must export `methods`");
    expect((await failure(Sandbox.load("export const methods = [{ name: 'Bad-Name', execute() {} }];", OPS, LIMITS))).message).toContain(
      "must match",
    );
    expect(
      (await failure(Sandbox.load("export const methods = [{ name: 'a', execute() {} }, { name: 'a', execute() {} }];", OPS, LIMITS)))
        .message,
    ).toContain("defined twice");
    expect((await failure(Sandbox.load("throw new Error('boom at load');", OPS, LIMITS))).message).toContain("boom at load");
  });
});

describe("services", () => {
  test("guest calls reach the dispatcher with their arguments, concurrently, and get JSON back; failures reject", async () => {
    const sb = await Sandbox.load(
      `export const methods = [{ name: "m", async execute(req, services) {
        const [a, b] = await Promise.all([services.data.read("things", "k1"), services.data.read("things", "k2")]);
        let caught = null;
        try { await services.data.create("things", { bad: true }); } catch (e) { caught = e.message; }
        services.log.info("done", { n: 2 });
        return { body: { a, b, caught } };
      } }];`,
      OPS,
      LIMITS,
    );
    const calls: unknown[] = [];
    const dispatch: Dispatch = async (service, op, args) => {
      calls.push([service, op, args]);
      if (op === "create") throw new Error("schema things has no field bad");
      await Bun.sleep(5);
      return { id: args[1] };
    };
    const r = await sb.call("m", JSON.stringify({}), dispatch);
    expect(r.body).toEqual({
      kind: "json",
      text: JSON.stringify({ a: { id: "k1" }, b: { id: "k2" }, caught: "schema things has no field bad" }),
    });
    expect(calls).toEqual([
      ["data", "read", ["things", "k1"]],
      ["data", "read", ["things", "k2"]],
      ["data", "create", ["things", { bad: true }]],
      ["log", "info", ["done", { n: 2 }]],
    ]);
    sb.dispose();
  });

  test("an answer given on the spot (Answered) settles the guest's promise at once: the call ends in the same turn", async () => {
    const sb = await Sandbox.load(
      `export const methods = [{ name: "m", async execute(req, services) {
        const a = await services.data.read("things", "k1");
        let caught = null;
        try { await services.data.read("things", "bad"); } catch (e) { caught = e.message; }
        const raw = await services.data.read("things", "raw");
        return { body: { a, caught, raw } };
      } }];`,
      OPS,
      LIMITS,
    );
    const dispatch: Dispatch = (_service, _op, args) => {
      if (args[1] === "bad") throw new Error("refused on the spot");
      return new Answered(args[1] === "raw" ? new RawJson('{"as":"text"}') : { id: args[1] });
    };
    const answer = sb.callNow("m", JSON.stringify({}), dispatch);
    expect(answer instanceof Promise).toBe(false);
    expect((answer as MethodResponse).body).toEqual({
      kind: "json",
      text: JSON.stringify({ a: { id: "k1" }, caught: "refused on the spot", raw: { as: "text" } }),
    });
    // Mixed: an on-the-spot answer after one that waited.
    const mixed: Dispatch = (_s, _o, args) => (args[1] === "k1" ? Promise.resolve({ id: "late" }) : new Answered({ id: args[1] }));
    expect((await sb.call("m", JSON.stringify({}), mixed)).body).toEqual({
      kind: "json",
      text: JSON.stringify({ a: { id: "late" }, caught: null, raw: { id: "raw" } }),
    });
    sb.dispose();
  });

  test("a method that throws is a 'thrown' error and the sandbox stays usable", async () => {
    const sb = await Sandbox.load(
      `export const methods = [{ name: "m", execute(req) { if (req.fail) throw new TypeError("nope"); return { body: "ok" }; } }];`,
      OPS,
      LIMITS,
    );
    const e = await failure(sb.call("m", JSON.stringify({ fail: true }), noServices));
    expect([e.kind, e.message]).toEqual(["thrown", "TypeError: nope"]);
    expect(sb.usable).toBe(true);
    expect((await sb.call("m", JSON.stringify({}), noServices)).body).toEqual({ kind: "text", value: "ok" });
    sb.dispose();
  });
});

describe("limits", () => {
  test("while(true) stops within the limit + 50 ms, also after an await; the sandbox is dropped", async () => {
    const sb = await Sandbox.load(
      `export const methods = [{ name: "spin", execute() { for (;;) {} } }, { name: "later", async execute(r, s) { await s.data.read("x", "y"); for (;;) {} } }];`,
      OPS,
      LIMITS,
    );
    let started = performance.now();
    const e = await failure(sb.call("spin", JSON.stringify({}), noServices));
    expect(e.kind).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(LIMITS.timeoutMs + 50);
    expect(sb.usable).toBe(false);
    const sb2 = await Sandbox.load(
      `export const methods = [{ name: "later", async execute(r, s) { await s.data.read("x", "y"); for (;;) {} } }];`,
      OPS,
      LIMITS,
    );
    started = performance.now();
    expect((await failure(sb2.call("later", JSON.stringify({}), async () => 1))).kind).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(LIMITS.timeoutMs + 50);
  });

  test("awaiting something that never settles times out", async () => {
    const sb = await Sandbox.load(`export const methods = [{ name: "m", async execute() { await new Promise(() => {}); } }];`, OPS, {
      ...LIMITS,
      timeoutMs: 300,
    });
    const started = performance.now();
    expect((await failure(sb.call("m", JSON.stringify({}), noServices))).kind).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(350);
  });

  test("a 200 MB memory bomb fails with 'memory' and the process grows by no more than the cap", async () => {
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    for (const bomb of [
      `const a = []; for (let i = 0; i < 1e7; i++) a.push("x".repeat(20) + i);`,
      `const a = []; for (let i = 0; i < 200; i++) a.push(new Uint8Array(1024 * 1024));`,
    ]) {
      const sb = await Sandbox.load(`export const methods = [{ name: "m", execute() { ${bomb} return { body: "survived" }; } }];`, OPS, {
        ...LIMITS,
        timeoutMs: 10_000,
      });
      const e = await failure(sb.call("m", JSON.stringify({}), noServices));
      expect(e.kind).toBe("memory");
      expect(sb.usable).toBe(false);
    }
    Bun.gc(true);
    const grown = (process.memoryUsage().rss - before) / 1024 / 1024;
    expect(grown).toBeLessThan(2 * 32 + 16); // two dropped 32 MB sandboxes at most, before their memory is collected
  });

  test("deep recursion is a stack error", async () => {
    const sb = await Sandbox.load(
      `export const methods = [{ name: "m", execute() { const f = (n) => f(n + 1) + 1; return { body: f(0) }; } }];`,
      OPS,
      LIMITS,
    );
    expect((await failure(sb.call("m", JSON.stringify({}), noServices))).kind).toBe("stack");
  });
});

describe("what the guest can reach", () => {
  test("no host objects, no bridge internals, no I/O; Function and eval stay inside; stacks name no host files", async () => {
    const sb = await Sandbox.load(
      `export const methods = [{ name: "m", execute() {
        const names = Object.getOwnPropertyNames(globalThis);
        const probe = {};
        for (const n of ["process", "require", "Bun", "fetch", "__host", "__done", "__serviceOps", "std", "os", "setTimeout", "WebAssembly", "import"]) probe[n] = typeof globalThis[n];
        probe.fnGlobal = typeof (new Function("return this"))().process;
        probe.evalGlobal = typeof eval("globalThis").Bun;
        probe.ctorProcess = ({}).constructor.constructor("return typeof process")();
        let stack = ""; try { null.x; } catch (e) { stack = String(e.stack); }
        probe.stack = stack;
        probe.burrowWritable = (() => { try { globalThis.__burrow = 1; return globalThis.__burrow === 1; } catch { return "threw"; } })();
        return { body: { names, probe } };
      } }];`,
      OPS,
      LIMITS,
    );
    const r = (await sb.call("m", JSON.stringify({}), noServices)).body as { kind: "json"; text: string };
    const { probe, names } = JSON.parse(r.text) as { names: string[]; probe: Record<string, unknown> };
    for (const n of ["process", "require", "Bun", "fetch", "__host", "__done", "__serviceOps", "std", "os", "setTimeout"])
      expect([n, probe[n]]).toEqual([n, "undefined"]);
    expect(probe.fnGlobal).toBe("undefined");
    expect(probe.evalGlobal).toBe("undefined");
    expect(probe.ctorProcess).toBe("undefined");
    expect(String(probe.stack)).not.toContain("/work/");
    expect(String(probe.stack)).not.toContain("src/code");
    expect(probe.burrowWritable).not.toBe(true);
    expect(names).not.toContain("__host");
    sb.dispose();
  });

  test("sandboxes share nothing: globals set by one call are not seen by another sandbox", async () => {
    const src = `export const methods = [{ name: "m", execute(req) { const before = globalThis.leak; globalThis.leak = req.v; return { body: { before: before ?? null } }; } }];`;
    const a = await Sandbox.load(src, OPS, LIMITS);
    const b = await Sandbox.load(src, OPS, LIMITS);
    expect((await a.call("m", JSON.stringify({ v: "secret" }), noServices)).body).toEqual({
      kind: "json",
      text: JSON.stringify({ before: null }),
    });
    expect((await b.call("m", JSON.stringify({ v: "other" }), noServices)).body).toEqual({
      kind: "json",
      text: JSON.stringify({ before: null }),
    });
    a.dispose();
    b.dispose();
  });
});
