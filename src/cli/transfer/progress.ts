// Progress of an import (bytes read of the input) or an export (rows of the total): the CLI's one progress bar
// (../progress.ts) with rows, rate and rejections after the percentage, and the elapsed time for the summary.

import { type ProgressBar, progressBar } from "../progress.ts";

export class Progress {
  private readonly started = performance.now();
  private readonly bar: ProgressBar;

  constructor(
    private readonly total: number,
    stream: { isTTY?: boolean; write(s: string): unknown } = process.stderr,
  ) {
    this.bar = progressBar(stream);
  }

  /** Redraw with the work done so far (bytes or rows, as the total) and the rows done (rate limited). */
  update(done: number, rows: number, rejected: number, label: string): void {
    const rate = rows / Math.max(0.001, (performance.now() - this.started) / 1000);
    this.bar.draw(
      done,
      this.total,
      `${rows.toLocaleString("en")} rows ${Math.round(rate).toLocaleString("en")}/s${rejected ? `, ${rejected} rejected` : ""} ${label}`,
    );
  }

  /** Clear the bar (the caller prints the summary). */
  finish(): void {
    this.bar.clear();
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }
}
