// Run the CLI (from source or the built binary) as a real process, and start a server on a free port.

import { readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `bun src/main.ts <args>` with the given environment (a fresh env: nothing leaks from the test runner). */
export async function runCli(args: string[], env: Record<string, string> = {}, exe?: string): Promise<RunResult> {
  const cmd = exe ? [exe, ...args] : [process.execPath, join(ROOT, "src/main.ts"), ...args];
  const proc = Bun.spawn(cmd, {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(), 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface ServerProcess {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** Milliseconds from spawn to the first 200 from /_health. */
  readyMs: number;
  /** What the server printed on stdout up to the serving line (the banner). */
  banner: string;
  /** Everything printed so far on stdout (banner included) and stderr (the log); both are drained continuously. */
  output(): { stdout: string; stderr: string };
  stop(): Promise<number>;
}

/** Collect a stream's text in the background (the last 4 MB), so a chatty process never blocks on a full pipe. */
function drain(stream: ReadableStream<Uint8Array>, initial = ""): () => string {
  let text = initial;
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      if (text.length > 4_000_000) text = text.slice(-4_000_000);
    }
  })().catch(() => {});
  return () => text;
}

/** Start `serve` on 127.0.0.1 with a free port; resolves once /_health answers 200 (bounded to 20 s). */
export async function startServerProcess(
  cmd: string[],
  env: Record<string, string>,
  opts: { stderrFile?: string; serverDefaults?: boolean } = {},
): Promise<ServerProcess> {
  const started = performance.now();
  // Load shedding off unless the test asks for it: a busy CI machine is not an overloaded server. Benchmarks keep
  // the server's own defaults (serverDefaults).
  const testDefaults = opts.serverDefaults ? {} : { BURROW_SHED_TARGET_MS: "0" };
  const proc = Bun.spawn([...cmd, "serve", "--http", "127.0.0.1:0"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...testDefaults, ...env },
    stdout: "pipe",
    stderr: opts.stderrFile ? Bun.file(opts.stderrFile) : "pipe",
  });
  const stderr = opts.stderrFile ? () => readFileSync(opts.stderrFile!, "utf8") : drain(proc.stderr as ReadableStream<Uint8Array>);
  const reader = proc.stdout.getReader();
  let out = "";
  let url: string | null = null;
  const deadline = Date.now() + 20_000;
  while (!url) {
    const next = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null)]);
    if (!next || next.done) {
      proc.kill();
      await proc.exited;
      await Bun.sleep(20);
      throw new Error(`server did not start: ${out} ${stderr()}`);
    }
    out += new TextDecoder().decode(next.value);
    url = /serving (http:\/\/[^\s]+)/.exec(out)?.[1] ?? null;
  }
  // The banner is printed in one write; give the rest of it a moment to arrive.
  while (!out.includes("/_health")) {
    const next = await Promise.race([reader.read(), Bun.sleep(2000).then(() => null)]);
    if (!next || next.done) break;
    out += new TextDecoder().decode(next.value);
  }
  reader.releaseLock();
  const stdout = drain(proc.stdout, out);
  for (;;) {
    try {
      if ((await fetch(`${url}/_health`)).status === 200) break;
    } catch {}
    if (Date.now() > deadline) throw new Error("server never became healthy");
    await Bun.sleep(5);
  }
  const readyMs = performance.now() - started;
  return {
    url,
    proc,
    readyMs,
    banner: out,
    output: () => ({ stdout: stdout(), stderr: stderr() }),
    async stop() {
      proc.kill("SIGTERM");
      return await proc.exited;
    },
  };
}

/** Build the server binary (scripts/build.ts) into `exe`; `extra` are more build flags (e.g. --arm64). Throws with the build's output. */
export function buildBinary(exe: string, extra: string[] = []): void {
  const build = Bun.spawnSync([process.execPath, "run", "scripts/build.ts", ...extra, "--outfile", exe], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr}`);
}
