// The data screen's pager: where the page is in the list ("26–50 of 1,234", or "of ?" until counted), previous and
// next, the page size, the "Count" switch (the exact total is a full scan, so only when asked), refresh and the
// last load's time. The screen keeps the range and the counting, since the page's request is made of them.

import { Loading } from "../ui.tsx";

const PAGE_SIZES = [25, 50, 100, 200];

interface Props {
  start: number;
  pageSize: number;
  /** Rows on the page. */
  rows: number;
  /** The list's length when known. */
  total: number | "unknown" | null | undefined;
  counting: boolean;
  loading: boolean;
  /** How long the last page took, once one is loaded. */
  ms: number | undefined;
  onStart(start: number): void;
  onPageSize(size: number): void;
  onCounting(on: boolean): void;
  onRefresh(): void;
}

export function Pager({ start, pageSize, rows, total, counting, loading, ms, onStart, onPageSize, onCounting, onRefresh }: Props) {
  const shownTo = start + rows;
  return (
    <div class="pager">
      <button type="button" disabled={start === 0} onClick={() => onStart(Math.max(0, start - pageSize))}>
        ← Previous
      </button>
      <span data-testid="page-info">
        {rows ? `${start + 1}–${shownTo}` : "0"} of {typeof total === "number" ? total.toLocaleString() : "?"}
      </span>
      <button
        type="button"
        disabled={rows < pageSize || (typeof total === "number" && shownTo >= total)}
        onClick={() => onStart(start + pageSize)}
      >
        Next →
      </button>
      <select aria-label="Page size" value={pageSize} onChange={(e) => onPageSize(Number(e.currentTarget.value))}>
        {PAGE_SIZES.map((n) => (
          <option value={n}>{n} per page</option>
        ))}
      </select>
      <button type="button" class="small" onClick={() => onCounting(!counting)} aria-pressed={counting}>
        {counting ? "Counting totals" : "Count"}
      </button>
      <button type="button" class="small" onClick={onRefresh}>
        Refresh
      </button>
      <Loading when={loading} />
      {ms !== undefined && <span class="muted small">{ms} ms</span>}
      <span class="muted small hide-narrow">Arrows move · Enter edits · Delete deletes</span>
    </div>
  );
}
