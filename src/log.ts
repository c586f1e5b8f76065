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
  /** How lines are written (text unless said otherwise). */
  readonly format?: LogFormat;
}

/** A writer of whole lines to stderr that batches the lines of one event-loop turn into one write. */
export function batchedStderr(): (line: string) => void {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = `${pending.join("\n")}\n`;
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

export type LogFormat = "text" | "json";

/**
 * A logger at `level`. Text lines are `<ISO time> <LEVEL> <msg> <fields as JSON>`; JSON lines are one object,
 * `{"time", "level", "msg", ...fields}` (fields never override those three).
 */
export function createLogger(level: Level, write?: (line: string) => void, format: LogFormat = "text"): Logger & { format: LogFormat } {
  const out = write ?? (stderrWriter ??= batchedStderr());
  const emit = (lvl: Level) =>
    format === "json"
      ? (msg: string, data?: Record<string, unknown>) => {
          if (ORDER[lvl] > ORDER[level]) return;
          out(JSON.stringify({ ...data, time: new Date().toISOString(), level: lvl, msg }));
        }
      : (msg: string, data?: Record<string, unknown>) => {
          if (ORDER[lvl] > ORDER[level]) return;
          out(`${new Date().toISOString()} ${lvl.toUpperCase()} ${msg}${data ? ` ${JSON.stringify(data)}` : ""}`);
        };
  return {
    error: emit("error"),
    warn: emit("warn"),
    info: emit("info"),
    debug: emit("debug"),
    enabled: (l) => ORDER[l] <= ORDER[level],
    format,
  };
}
