// The one progress bar of long CLI commands (backup, restore, import, export): redrawn in place on stderr when
// stderr is a terminal, at most ten times a second; nothing until the final line otherwise (logs and pipes get
// one plain line).

const WIDTH = 30;

/** "[=========>          ]  45%  <detail>". Pure. */
export function barLine(done: number, total: number, detail: string, width = WIDTH): string {
  const frac = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.floor(frac * width);
  const bar = "=".repeat(filled) + (filled < width ? `>${" ".repeat(width - filled - 1)}` : "");
  return `[${bar}] ${String(Math.floor(frac * 100)).padStart(3)}%  ${detail}`;
}

/** "[=========>          ]  45%  1.2 GB / 2.6 GB  copying development.db". Pure. */
export function progressLine(done: number, total: number, phase: string, width = WIDTH): string {
  return barLine(done, total, `${formatBytes(done)} / ${formatBytes(total)}  ${phase}`, width);
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
  /** Bytes done of a total, in a phase ("copying development.db"). */
  update(done: number, total: number, phase: string): void;
  /** Any unit: the text after the percentage is the caller's. */
  draw(done: number, total: number, detail: string): void;
  /** Wipe the bar without a line (the caller prints its own summary). */
  clear(): void;
  /** Ends the bar with one line (also the only line when stderr is not a terminal). */
  finish(line: string): void;
}

export function progressBar(stream: { isTTY?: boolean; write(s: string): unknown } = process.stderr, now = () => Date.now()): ProgressBar {
  const tty = stream.isTTY === true;
  let last = 0;
  let drawn = false;
  const bar: ProgressBar = {
    update(done, total, phase) {
      bar.draw(done, total, `${formatBytes(done)} / ${formatBytes(total)}  ${phase}`);
    },
    draw(done, total, detail) {
      if (!tty) return;
      const t = now();
      if (t - last < 100 && done < total) return;
      last = t;
      const cols = (stream as { columns?: number }).columns || 100;
      stream.write(`\r${barLine(done, total, detail).slice(0, Math.max(20, cols - 1))}\x1b[K`);
      drawn = true;
    },
    clear() {
      if (tty && drawn) stream.write("\r\x1b[K");
      drawn = false;
    },
    finish(line) {
      stream.write(`${tty && drawn ? "\r\x1b[K" : ""}${line}\n`);
      drawn = false;
    },
  };
  return bar;
}
