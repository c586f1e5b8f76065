// A thread's scheduling class read from /proc (src/os/thread-stat.ts): stat lines parsed (names with spaces and
// parentheses, policy and nice), and, on Linux, the threads of real processes: a Worker lowered to SCHED_IDLE that
// fetches first makes Bun's shared "HTTP Client" thread SCHED_IDLE too, unless startHttpClientThread()
// (src/os/http-client-thread.ts) made it on the main thread before.

import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCHED_IDLE, SCHED_OTHER, parseThreadStat, policyName, readThreads } from "../../src/os/thread-stat.ts";
import { tempDir } from "../helpers/app.ts";

const ROOT = join(import.meta.dir, "../..");
/** A real stat line's fields after the name (field 3 on), with nice (field 19) and policy (field 41) to fill in. */
const REST = (nice: number, policy: number) =>
  [
    "S 30684 30684 27528 0 -1 4194304 100 0 0 0 0 0 0 0 20",
    nice,
    "1 0 2400743 3133440 358 18446744073709551615 94895473876992 94895473896873 140730496470352 0 0 0 0 0 0 0 0 0 17 1 0",
    policy,
    "0 0 94895473912880 94895473914496 94896238297088 140730496477724 140730496477744 140730496477744 140730496479211 0",
  ].join(" ");

describe("parseThreadStat", () => {
  test("name, policy and nice", () => {
    expect(parseThreadStat(`30686 (HTTP Client) ${REST(0, 5)}\n`)).toEqual({ name: "HTTP Client", policy: 5, nice: 0 });
    expect(parseThreadStat(`7 (bun) ${REST(19, 0)}`)).toEqual({ name: "bun", policy: 0, nice: 19 });
    expect(parseThreadStat(`7 (w) ${REST(-5, 3)}`)).toEqual({ name: "w", policy: 3, nice: -5 });
  });

  test("a name holding spaces and parentheses: fields are counted from the last )", () => {
    expect(parseThreadStat(`8 (a) (b) c) ${REST(0, 5)}`)).toEqual({ name: "a) (b) c", policy: 5, nice: 0 });
  });

  test("anything else is null", () => {
    expect(parseThreadStat("")).toBeNull();
    expect(parseThreadStat("8 no name here")).toBeNull();
    expect(parseThreadStat("8 (short) S 1 2 3")).toBeNull();
    expect(parseThreadStat(`8 (x) ${REST(0, 5).replace(/ 5 0 0 /, " idle 0 0 ")}`)).toBeNull();
  });

  test("policy names", () => {
    expect([SCHED_OTHER, 3, SCHED_IDLE, 42].map(policyName)).toEqual(["SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "policy 42"]);
  });
});

describe.skipIf(process.platform !== "linux")("the threads of a process", () => {
  test("this process: its own thread among them, at SCHED_OTHER", () => {
    const threads = readThreads();
    expect(threads.find((t) => t.tid === process.pid)).toMatchObject({ policy: SCHED_OTHER });
    expect(readThreads(2 ** 22 + 1)).toEqual([]);
  });

  /** The HTTP Client thread's policy in a fresh process whose idle Worker fetches, with or without the warm-up. */
  async function httpClientPolicy(warmUp: boolean, env: Record<string, string> = {}): Promise<{ http: number; worker: number }> {
    const dir = tempDir("burrow-thread-stat-");
    try {
      writeFileSync(
        join(dir, "worker.ts"),
        `import { idleThreadPolicy } from ${JSON.stringify(join(ROOT, "src/os/thread-priority.ts"))};
         if (!idleThreadPolicy()) throw new Error("SCHED_IDLE refused");
         await fetch("http://localhost/", { unix: "/dev/null/x.sock" }).catch(() => {});
         postMessage(Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop()));`,
      );
      writeFileSync(
        join(dir, "main.ts"),
        `import { startHttpClientThread } from ${JSON.stringify(join(ROOT, "src/os/http-client-thread.ts"))};
         import { readThreads } from ${JSON.stringify(join(ROOT, "src/os/thread-stat.ts"))};
         if (${warmUp}) { await startHttpClientThread(); await startHttpClientThread(); }
         const w = new Worker(new URL("./worker.ts", import.meta.url).href);
         const tid = await new Promise((resolve) => { w.onmessage = (e) => resolve(e.data); });
         const threads = readThreads();
         console.log(JSON.stringify({ http: threads.find((t) => t.name === "HTTP Client")?.policy ?? -1, worker: threads.find((t) => t.tid === tid)?.policy ?? -1 }));
         process.exit(0);`,
      );
      const p = Bun.spawnSync([process.execPath, join(dir, "main.ts")], {
        env: { PATH: process.env.PATH ?? "", ...env },
        stdout: "pipe",
        stderr: "pipe",
        timeout: 20_000,
      });
      if (p.exitCode !== 0) throw new Error(`child failed: ${p.stderr.toString()}`);
      return JSON.parse(p.stdout.toString()) as { http: number; worker: number };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("an idle Worker that fetches first makes the HTTP Client thread idle; the warm-up keeps it normal", async () => {
    expect(await httpClientPolicy(false)).toEqual({ http: SCHED_IDLE, worker: SCHED_IDLE });
    expect(await httpClientPolicy(true)).toEqual({ http: SCHED_OTHER, worker: SCHED_IDLE });
    // The benchmark switch turns the warm-up off.
    expect(await httpClientPolicy(true, { BURROW_NO_HTTP_THREAD_WARMUP: "1" })).toEqual({ http: SCHED_IDLE, worker: SCHED_IDLE });
  }, 60_000);
});
