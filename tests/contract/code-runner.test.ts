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
    await runner.install(spec("r", `export const methods = [{ name: "spin", execute() { for (;;) {} } }, { name: "ok", execute() { return { body: 1 }; } }];`, { timeoutMs: 1500 }));
    const spinning = runner.call("r", "spin", JSON.stringify({}), async () => null).catch((e) => e);
    await Bun.sleep(300);
    expect(runner.stats()).toMatchObject({ demoted: 1, threads: 3 });
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) expect((await runner.call("r", "ok", JSON.stringify({}), async () => null)).body).toEqual({ kind: "json", text: JSON.stringify(1) });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect((await spinning).kind).toBe("timeout");
    await Bun.sleep(50);
    expect(runner.stats()).toMatchObject({ demoted: 0, threads: 2 });
  } finally {
    await runner.close();
  }
});
