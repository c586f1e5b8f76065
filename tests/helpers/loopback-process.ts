// Runs a throwaway helper server (sqld, s3rver, ...) as a child process on a free loopback port: its own temp
// directory and log file, a readiness probe polled until it answers, and a stop() that removes everything.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const START_TIMEOUT_MS = 15_000;

export interface LoopbackProcess {
  url: string;
  dir: string;
  stop(): Promise<void>;
  /** Signals the process at once (for process exit hooks, which cannot wait). */
  kill(): void;
  /** Ends the process with `signal` and waits for it, keeping its directory (an outage; restart() brings it back). */
  halt(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the process again on the same port and directory; resolves once it answers. */
  restart(): Promise<void>;
  /** Sends `signal` without waiting (SIGSTOP freezes the process: connections are accepted, never answered; SIGCONT thaws it). */
  signal(signal: NodeJS.Signals): void;
}

export async function startLoopbackProcess(opts: {
  name: string;
  /** The command line, given the chosen port and the process's temp directory. */
  argv(port: number, dir: string): string[];
  env?: Record<string, string | undefined>;
  /** Whether the server answers yet (throwing counts as no). */
  ready(url: string): Promise<boolean>;
}): Promise<LoopbackProcess> {
  const dir = mkdtempSync(join(tmpdir(), `burrow-${opts.name}-`));
  const logPath = join(dir, `${opts.name}.log`);
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawn = () => {
    const logFd = openSync(logPath, "a");
    const p = Bun.spawn(opts.argv(port, dir), { cwd: dir, env: opts.env, stdin: "ignore", stdout: logFd, stderr: logFd });
    closeSync(logFd);
    return p;
  };
  let proc = spawn();
  const stop = async () => {
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const fail = async (why: string): Promise<never> => {
    const log = readLog(logPath);
    await stop();
    throw new Error(`${opts.name} ${why}:\n${log}`);
  };
  const waitReady = async (): Promise<void> => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (true) {
      if (proc.exitCode !== null) return fail(`exited with code ${proc.exitCode} before it was ready`);
      if (await opts.ready(url).catch(() => false)) return;
      if (Date.now() > deadline) return fail(`did not answer ${url} within ${START_TIMEOUT_MS / 1000} s`);
      await Bun.sleep(50);
    }
  };
  await waitReady();
  return {
    url,
    dir,
    stop,
    kill: () => proc.kill(),
    async halt(signal = "SIGTERM") {
      proc.kill(signal);
      await proc.exited;
    },
    async restart() {
      proc = spawn();
      await waitReady();
    },
    signal: (signal) => proc.kill(signal),
  };
}

/** Asks the OS for a free port by binding port 0 on loopback, then releases it for the child. */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-4000);
  } catch {
    return "(no log)";
  }
}
