// Minimal leveled logger writing one line per event to stderr. Callers never pass secrets.

type Level = "error" | "warn" | "info" | "debug";
const ORDER: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  info(msg: string, data?: Record<string, unknown>): void;
  debug(msg: string, data?: Record<string, unknown>): void;
}

export function createLogger(level: Level, write: (line: string) => void = (l) => process.stderr.write(l + "\n")): Logger {
  const emit = (lvl: Level) => (msg: string, data?: Record<string, unknown>) => {
    if (ORDER[lvl] > ORDER[level]) return;
    write(`${new Date().toISOString()} ${lvl.toUpperCase()} ${msg}${data ? " " + JSON.stringify(data) : ""}`);
  };
  return { error: emit("error"), warn: emit("warn"), info: emit("info"), debug: emit("debug") };
}
