// Leveled logger writing one line per event to stderr. Callers never pass secrets. Lines are batched: the
// default writer collects them and writes once per turn of the event loop (and at exit), so a line per
// request costs a string, not a system call.

import { writeSync } from "node:fs";

export type Level = "error" | "warn" | "info" | "debug";
const ORDER: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  info(msg: string, data?: Record<string, unknown>): void;
  debug(msg: string, data?: Record<string, unknown>): void;
  /** Whether lines of this level are written. */
  enabled(level: Level): boolean;
}

/** A writer of whole lines to stderr that batches the lines of one event-loop turn into one write. */
export function batchedStderr(): (line: string) => void {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join("\n") + "\n";
    pending = [];
    try {
      writeSync(2, text);
    } catch {
      // stderr closed or full: logging must never take the server down.
    }
  };
  process.on("exit", flush);
  return (line) => {
    pending.push(line);
    if (pending.length >= 512) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

let stderrWriter: ((line: string) => void) | undefined;

export function createLogger(level: Level, write?: (line: string) => void): Logger {
  const out = write ?? (stderrWriter ??= batchedStderr());
  const emit = (lvl: Level) => (msg: string, data?: Record<string, unknown>) => {
    if (ORDER[lvl] > ORDER[level]) return;
    out(`${new Date().toISOString()} ${lvl.toUpperCase()} ${msg}${data ? " " + JSON.stringify(data) : ""}`);
  };
  return { error: emit("error"), warn: emit("warn"), info: emit("info"), debug: emit("debug"), enabled: (l) => ORDER[l] <= ORDER[level] };
}
