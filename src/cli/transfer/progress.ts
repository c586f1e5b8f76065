// Progress of an import (bytes read of the input) or export (rows of the total) on stderr: a bar redrawn at most
// ten times a second when stderr is a terminal; nothing until the final summary line otherwise.

export class Progress {
  private last = 0;
  private readonly started = performance.now();
  private drawn = false;

  constructor(
    private readonly total: number,
    private readonly tty = process.stderr.isTTY === true,
  ) {}

  /** Redraw with the work done so far (bytes or rows, as the total) and the rows done (rate limited). */
  update(done: number, rows: number, rejected: number, label: string): void {
    if (!this.tty) return;
    const now = performance.now();
    if (now - this.last < 100) return;
    this.last = now;
    const frac = this.total > 0 ? Math.min(1, done / this.total) : 0;
    const width = 24;
    const full = Math.round(frac * width);
    const rate = rows / Math.max(0.001, (now - this.started) / 1000);
    const bar = `[${"#".repeat(full)}${".".repeat(width - full)}] ${(frac * 100).toFixed(0).padStart(3)}% ${rows.toLocaleString("en")} rows ${Math.round(rate).toLocaleString("en")}/s${rejected ? `, ${rejected} rejected` : ""} ${label}`;
    process.stderr.write(`\r${bar.slice(0, (process.stderr.columns ?? 100) - 1)}\u001b[K`);
    this.drawn = true;
  }

  /** Clear the bar (the caller prints the summary). */
  finish(): void {
    if (this.drawn) process.stderr.write("\r\u001b[K");
    this.drawn = false;
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }
}
