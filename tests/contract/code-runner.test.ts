// Runs the CodeRunner contract against custom code on this thread and on worker threads.

import { expect, test } from "bun:test";
import { InlineRunner } from "../../src/code/code-runner.ts";
import { ThreadRunner } from "../../src/code/thread-runner.ts";
import { runnerContract, spec } from "./code-runner.contract.ts";

runnerContract("inline", () => new InlineRunner());
runnerContract("threads", () => new ThreadRunner({ threads: 2 }));

test("threads: a runaway method demotes its thread, which is replaced; other calls keep going on the others", async () => {
  const runner = new ThreadRunner({ threads: 2 });
  try {
    await runner.install(
      spec(
        "r",
        `export const methods = [{ name: "spin", execute() { for (;;) {} } }, { name: "ok", execute() { return { body: 1 }; } }];`,
        { timeoutMs: 1500 },
      ),
    );
    const spinning = runner.call("r", "spin", JSON.stringify({}), async () => null).catch((e) => e);
    await Bun.sleep(300);
    expect(runner.stats()).toMatchObject({ demoted: 1, threads: 3 });
    const t0 = performance.now();
    for (let i = 0; i < 20; i++)
      expect((await runner.call("r", "ok", JSON.stringify({}), async () => null)).body).toEqual({ kind: "json", text: JSON.stringify(1) });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect((await spinning).kind).toBe("timeout");
    // The demoted thread, at idle priority, is retired once it has stopped the call itself (later on a busy machine).
    for (let i = 0; i < 100 && runner.stats().demoted > 0; i++) await Bun.sleep(30);
    expect(runner.stats()).toMatchObject({ demoted: 0, threads: 2 });
  } finally {
    await runner.close();
  }
});

test("threads: a method busy past 100 ms pauses while the API answers requests, and runs on when it is quiet", async () => {
  const answered = new Int32Array(new SharedArrayBuffer(4));
  const runner = new ThreadRunner({ threads: 2, apiActivity: answered.buffer as SharedArrayBuffer });
  try {
    // A few hundred ms of work without pauses (measured below), well inside the 2 s limit.
    const work = `export const methods = [{ name: "work", execute() { let x = 0; for (let i = 0; i < 1e7; i++) x = (x + i) % 1000003; return { body: x }; } }];`;
    await runner.install(spec("w", work, { timeoutMs: 2000 }));
    const quiet = performance.now();
    expect((await runner.call("w", "work", JSON.stringify({}), async () => null)).status).toBe(200);
    const alone = performance.now() - quiet;
    expect(alone).toBeLessThan(1500);
    // The same call while requests are answered every millisecond: it pauses until its time limit.
    const busy = setInterval(() => Atomics.add(answered, 0, 1), 1);
    const started = performance.now();
    const e = await runner.call("w", "work", JSON.stringify({}), async () => null).catch((err) => err);
    clearInterval(busy);
    expect(e.kind).toBe("timeout");
    expect(performance.now() - started).toBeGreaterThan(1900);
    // Quiet again: the next call (on a fresh thread) runs on without pausing - it ends well inside its limit (a
    // paused one would run into it), however loaded the machine is.
    const again = performance.now();
    expect((await runner.call("w", "work", JSON.stringify({}), async () => null)).status).toBe(200);
    expect(performance.now() - again).toBeLessThan(Math.max(1500, alone * 2 + 300));
  } finally {
    await runner.close();
  }
}, 15_000);

test("inline: sandboxes made for a burst are dropped once idle past idleMs; the warm one stays and serves", async () => {
  const runner = new InlineRunner();
  try {
    const js = `export const methods = [{ name: "slow", async execute(req, s) { await s.data.read("wait", ""); return { body: 1 }; } }];`;
    await runner.install({ ...spec("burst", js), idleMs: 200 });
    const gates: (() => void)[] = [];
    const gated = async () => {
      await new Promise<void>((r) => gates.push(r));
      return null;
    };
    const calls = Array.from({ length: 6 }, () => runner.call("burst", "slow", JSON.stringify({}), gated));
    while (gates.length < 6) await Bun.sleep(5);
    expect(runner.sizes().burst).toBe(6);
    for (const g of gates) g();
    await Promise.all(calls);
    expect(runner.sizes().burst).toBe(6); // given back, idle for now
    const deadline = Date.now() + 3000;
    while (runner.sizes().burst! > 1 && Date.now() < deadline) await Bun.sleep(20);
    expect(runner.sizes().burst).toBe(1);
    expect((await runner.call("burst", "slow", JSON.stringify({}), async () => null)).body).toEqual({ kind: "json", text: "1" });
    expect(runner.sizes().burst).toBe(1);
  } finally {
    await runner.close();
  }
});

test("threads: a thread collects itself once its own heap grew by collectAfterBytes, and says so in its memory", async () => {
  // The default (2 MB) takes a minute of steady calls to reach; 256 KB takes a dozen calls.
  const runner = new ThreadRunner({ threads: 1, collectAfterBytes: 256 * 1024 });
  try {
    // Each call's answer carries 20,000 headers, made into objects on the thread: about 1 MB of garbage after it.
    const js = `export const methods = [{ name: "h", execute() {
      const headers = {}; for (let i = 0; i < 20000; i++) headers["x-h" + i] = "v" + i;
      return { body: 1, headers };
    } }];`;
    await runner.install(spec("g", js));
    expect(runner.memory().collections).toBe(0);
    for (let n = 0; n < 12; n++) {
      const r = await runner.call("g", "h", JSON.stringify({}), async () => null);
      expect(Object.keys(r.headers ?? {}).length).toBe(20000);
    }
    // The thread checks itself when it reports, every 5 s.
    for (let i = 0; i < 60 && runner.memory().collections === 0; i++) await Bun.sleep(100);
    const m = runner.memory();
    expect(m.collections).toBeGreaterThan(0);
    expect(m.heapBytes - m.externalBytes).toBeLessThan(2 * 1024 * 1024);
  } finally {
    await runner.close();
  }
}, 20_000);
