// The raw-socket SSE clients of the live benchmarks (scripts/bench/live-clients.ts) as a second process, and a
// request/answer over its stdin/stdout (one JSON line each way).

import { join } from "node:path";
import { ROOT } from "./env.ts";

export function startClients() {
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench/live-clients.ts")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let buffered = "";
  const ask = async (msg: unknown): Promise<any> => {
    proc.stdin.write(`${JSON.stringify(msg)}\n`);
    proc.stdin.flush();
    for (;;) {
      const nl = buffered.indexOf("\n");
      if (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        return JSON.parse(line);
      }
      const r = await reader.read();
      if (r.done) throw new Error("the client process ended");
      buffered += new TextDecoder().decode(r.value);
    }
  };
  return { proc, ask, stop: () => proc.kill() };
}
