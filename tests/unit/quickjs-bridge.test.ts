// The sandbox's FFI bridge into QuickJS on its own: strings in and out (ASCII, multi-byte, the scratch buffer's
// edge, longer ones, after the memory grew), calls that answer or throw, pending jobs that run or fail, host
// functions answered on the FFI next to the library's own, and a clear error when the library's internals moved.

import { describe, expect, test } from "bun:test";
import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { QuickJSBridge } from "../../src/code/quickjs-bridge.ts";
import { newEngine } from "../../src/code/quickjs-engine.ts";

async function setup(): Promise<{
  engine: QuickJSWASMModule;
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  bridge: QuickJSBridge;
  memory: WebAssembly.Memory;
}> {
  const { engine, memory } = await newEngine(64 * 1024 * 1024);
  const rt = engine.newRuntime();
  const ctx = rt.newContext();
  return { engine, rt, ctx, bridge: new QuickJSBridge(engine, rt, ctx), memory };
}

/** Evaluate guest code and answer its value as an owned pointer (the handle's own reference is freed). */
function evalPtr(ctx: QuickJSContext, bridge: QuickJSBridge, code: string): number {
  const h = ctx.unwrapResult(ctx.evalCode(code));
  const p = bridge.dup(h.value);
  h.dispose();
  return p;
}

describe("strings", () => {
  test("round trips: empty, ASCII, multi-byte, the scratch buffer's edge, past it", async () => {
    const { bridge, ctx } = await setup();
    const cases = [
      "",
      "plain ascii",
      "é ü ß 中文 😀 \u2028",
      "中".repeat(21845),
      "中".repeat(21846),
      "x".repeat(300_000),
      JSON.stringify({ a: "😀".repeat(5000) }),
    ];
    const length = evalPtr(ctx, bridge, "(s) => s.length");
    for (const s of cases) {
      const p = bridge.newString(s);
      expect(bridge.getString(p)).toBe(s);
      // The guest sees the same string (its length in UTF-16 units).
      const r = bridge.call2(length, p, p);
      expect(r.error).toBe(0);
      expect(bridge.getNumber(r.value)).toBe(s.length);
      bridge.free(r.value);
      bridge.free(p);
    }
    bridge.free(length);
  });

  test("still right after the guest grew the memory (the host's views are renewed)", async () => {
    const { bridge, ctx, memory } = await setup();
    const before = memory.buffer.byteLength;
    const big = evalPtr(ctx, bridge, "globalThis.big = 'y'.repeat(24 * 1024 * 1024); big.length");
    expect(memory.buffer.byteLength).toBeGreaterThan(before);
    expect(bridge.getNumber(big)).toBe(24 * 1024 * 1024);
    const concat = evalPtr(ctx, bridge, "(a, b) => a + '|' + b");
    const a = bridge.newString("é left");
    const b = bridge.newString("right 😀");
    const r = bridge.call2(concat, a, b);
    expect(bridge.getString(r.value)).toBe("é left|right 😀");
    for (const p of [big, concat, a, b, r.value]) bridge.free(p);
  });

  test("a value that is not a string is converted as the guest would (ToString)", async () => {
    const { bridge, ctx } = await setup();
    const n = evalPtr(ctx, bridge, "12.5");
    const o = evalPtr(ctx, bridge, "({ toString() { return 'made' } })");
    expect(bridge.getString(n)).toBe("12.5");
    expect(bridge.getString(o)).toBe("made");
    bridge.free(n);
    bridge.free(o);
  });
});

describe("calls and jobs", () => {
  test("a call answers its value, or the exception it threw", async () => {
    const { bridge, ctx } = await setup();
    const f = evalPtr(ctx, bridge, "(a, b) => { if (a === 'boom') throw new TypeError('bad ' + b); return a + b; }");
    const ok = bridge.call2(f, bridge.newString("a"), bridge.newString("b"));
    expect(ok.error).toBe(0);
    expect(bridge.getString(ok.value)).toBe("ab");
    const failed = bridge.call2(f, bridge.newString("boom"), bridge.newString("input"));
    expect(failed.value).toBe(0);
    const h = bridge.handle(failed.error);
    expect(ctx.dump(h)).toMatchObject({ name: "TypeError", message: "bad input" });
    h.dispose();
  });

  test("pending jobs run (none pending costs one check); a job stopped by the interrupt rejects its promise", async () => {
    const { bridge, ctx, rt } = await setup();
    expect(bridge.executePendingJobs()).toBe(0);
    bridge.free(evalPtr(ctx, bridge, "globalThis.n = 0; Promise.resolve().then(() => n++).then(() => n++); 0"));
    expect(bridge.executePendingJobs()).toBe(0);
    const n = evalPtr(ctx, bridge, "n");
    expect(bridge.getNumber(n)).toBe(2);
    bridge.free(n);
    // QuickJS turns a job's exception, even an interruption, into its promise's rejection (as the library sees it).
    let stop = false;
    rt.setInterruptHandler(() => stop);
    bridge.free(evalPtr(ctx, bridge, "Promise.resolve().then(() => { for (;;) {} }).catch((e) => { globalThis.why = e.message; }); 0"));
    stop = true;
    expect(bridge.executePendingJobs()).toBe(0);
    stop = false;
    expect(bridge.executePendingJobs()).toBe(0);
    const why = evalPtr(ctx, bridge, "why");
    expect(bridge.getString(why)).toBe("interrupted");
    bridge.free(why);
  });
});

describe("host functions", () => {
  test("answered on the FFI with their arguments (undefined past those given), next to a library function", async () => {
    const { bridge, ctx } = await setup();
    const seen: unknown[][] = [];
    const raw = bridge.newFunction("raw", (b, argc, argv) => {
      seen.push([argc, b.getNumber(b.arg(argc, argv, 0)), b.getString(b.arg(argc, argv, 1)), b.getString(b.arg(argc, argv, 2))]);
      return argc === 0 ? 0 : b.newString(`got ${argc}`);
    });
    const lib = ctx.newFunction("lib", (x) => ctx.newString(`lib ${ctx.getString(x)}`));
    ctx.setProp(ctx.global, "raw", raw);
    ctx.setProp(ctx.global, "lib", lib);
    raw.dispose();
    lib.dispose();
    const out = evalPtr(ctx, bridge, "JSON.stringify([raw(7, 'é'), raw(), raw(1, 'a', 'b', 'extra'), lib('x')])");
    expect(JSON.parse(bridge.getString(out))).toEqual(["got 2", null, "got 4", "lib x"]);
    expect(seen).toEqual([
      [2, 7, "é", "undefined"],
      [0, Number.NaN, "undefined", "undefined"],
      [4, 1, "a", "b"],
    ]);
    bridge.free(out);
  });

  test("a host function that throws raises the error in the guest, which catches it and goes on", async () => {
    const { bridge, ctx } = await setup();
    const raw = bridge.newFunction("raw", () => {
      throw new RangeError("host side failed");
    });
    ctx.setProp(ctx.global, "raw", raw);
    raw.dispose();
    const out = evalPtr(ctx, bridge, "let m; try { raw(); } catch (e) { m = e.message; } m + ' / still running'");
    expect(bridge.getString(out)).toBe("host side failed / still running");
    bridge.free(out);
  });

  test("one bridge per module instance (a second would answer the first one's host calls)", async () => {
    const { engine, rt, ctx } = await setup();
    expect(() => new QuickJSBridge(engine, rt, ctx)).toThrow(/already has a bridge/);
  });

  test("a library whose internals moved is refused at once, with what moved", async () => {
    const { engine, rt, ctx } = await setup();
    const moved = Object.create(engine) as QuickJSWASMModule;
    Object.defineProperty(moved, "ffi", { value: undefined });
    expect(() => new QuickJSBridge(moved, rt, ctx)).toThrow(/quickjs-emscripten changed: .*ffi/);
  });
});
