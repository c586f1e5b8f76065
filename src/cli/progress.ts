// A progress bar for long CLI commands (backup, restore): redrawn in place on stderr when stderr is a terminal, at
// most ten times a second; nothing until the final line otherwise (logs and pipes get one plain line).

const WIDTH = 30;

/** "[=========>          ]  45%  1.2 GB / 2.6 GB  copying development.db". Pure. */
export function progressLine(done: number, total: number, phase: string, width = WIDTH): string {
  const frac = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.floor(frac * width);
  const bar = "=".repeat(filled) + (filled < width ? ">" + " ".repeat(width - filled - 1) : "");
  return `[${bar}] ${String(Math.floor(frac * 100)).padStart(3)}%  ${formatBytes(done)} / ${formatBytes(total)}  ${phase}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

export interface ProgressBar {
  update(done: number, total: number, phase: string): void;
  /** Ends the bar with one line (also the only line when stderr is not a terminal). */
  finish(line: string): void;
}

export function progressBar(stream: { isTTY?: boolean; write(s: string): unknown } = process.stderr, now = () => Date.now()): ProgressBar {
  const tty = stream.isTTY === true;
  let last = 0;
  let drawn = false;
  return {
    update(done, total, phase) {
      if (!tty) return;
      const t = now();
      if (t - last < 100 && done < total) return;
      last = t;
      const cols = (stream as { columns?: number }).columns || 100;
      stream.write(`\r${progressLine(done, total, phase).slice(0, Math.max(20, cols - 1))}\x1b[K`);
      drawn = true;
    },
    finish(line) {
      stream.write(`${tty && drawn ? "\r\x1b[K" : ""}${line}\n`);
    },
  };
}
