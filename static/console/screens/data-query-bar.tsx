// The data screen's query bar: filter rows (field, the API's operator, value; indexed fields marked) or a raw
// query string, edited as drafts until Apply or Enter; the fields to select, the expand depth and the order,
// which apply as soon as they change. It reports the applied query to the screen, which loads the page.

import { useState } from "preact/hooks";
import { FILTER_OPS, type Filter, type SchemaDef, filtersToQuery, primaryKeyOf } from "../values.ts";
import type { Column } from "./data-grid.tsx";

export type Order = { field: string; desc: boolean } | null;

/** What a page is loaded with (besides its range and counting). */
export interface Query {
  /** The query string: the raw one as typed, or the filter rows'. */
  filter: string;
  order: Order;
  /** x-service-select as typed: empty for every field. */
  select: string;
  expand: number;
}

export const NO_QUERY: Query = { filter: "", order: null, select: "", expand: 0 };

interface Props {
  def: SchemaDef;
  columns: Column[];
  query: Query;
  onQuery(q: Query): void;
  /** Opens the create dialog; no "+ New object" button without it. */
  onCreate?: () => void;
}

export function QueryBar({ def, columns, query, onQuery, onCreate }: Props) {
  const pk = primaryKeyOf(def);
  const [filters, setFilters] = useState<Filter[]>([]);
  const [rawQuery, setRawQuery] = useState("");
  const { order, select, expand } = query;
  const indexed = new Set(def.indexes.map((ix) => ix[0]));
  const apply = () => onQuery({ ...query, filter: rawQuery.trim() || filtersToQuery(filters) });
  const change = (i: number, part: Partial<Filter>) => setFilters(filters.map((x, j) => (j === i ? { ...x, ...part } : x)));

  return (
    <div class="filters panel">
      {filters.map((f, i) => (
        <div class="row">
          <select aria-label="Filter field" value={f.field} onChange={(e) => change(i, { field: e.currentTarget.value })}>
            {columns.map((c) => (
              <option value={c.name}>
                {c.name}
                {indexed.has(c.name) ? " (indexed)" : ""}
              </option>
            ))}
          </select>
          <select aria-label="Filter operator" value={f.op} onChange={(e) => change(i, { op: e.currentTarget.value })}>
            {FILTER_OPS.map((o) => (
              <option value={o.op}>{o.label}</option>
            ))}
          </select>
          {FILTER_OPS.find((o) => o.op === f.op)?.needsValue !== false && (
            <input
              aria-label="Filter value"
              value={f.value}
              onInput={(e) => change(i, { value: e.currentTarget.value })}
              onKeyDown={(e) => e.key === "Enter" && apply()}
            />
          )}
          <button type="button" class="small" aria-label="Remove filter" onClick={() => setFilters(filters.filter((_, j) => j !== i))}>
            ✕
          </button>
        </div>
      ))}
      <div class="row">
        <button
          type="button"
          class="small"
          onClick={() => setFilters([...filters, { field: columns[1]?.name ?? pk, op: "eq", value: "" }])}
        >
          + Filter
        </button>
        <input
          aria-label="Query string"
          placeholder="or a query string: done=false&priority[gte]=2"
          style={{ flex: 1, minWidth: "200px" }}
          value={rawQuery}
          onInput={(e) => setRawQuery(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && apply()}
        />
        <button type="button" class="primary small" onClick={apply}>
          Apply
        </button>
      </div>
      <div class="row small">
        <label class="row">
          Fields
          <input
            aria-label="Select fields"
            placeholder="all (or title,done,owner.*)"
            value={select}
            onChange={(e) => onQuery({ ...query, select: e.currentTarget.value })}
          />
        </label>
        <label class="row">
          Expand
          <select aria-label="Expand depth" value={expand} onChange={(e) => onQuery({ ...query, expand: Number(e.currentTarget.value) })}>
            {[0, 1, 2, 3].map((n) => (
              <option value={n}>{n}</option>
            ))}
          </select>
        </label>
        <label class="row">
          Order
          <select
            aria-label="Order by"
            value={order ? `${order.field}:${order.desc ? "desc" : "asc"}` : ""}
            onChange={(e) => {
              const [field, dir] = e.currentTarget.value.split(":");
              onQuery({ ...query, order: field ? { field, desc: dir === "desc" } : null });
            }}
          >
            <option value="">none</option>
            {columns.flatMap((c) => [
              <option value={`${c.name}:asc`}>
                {c.name} ↑{indexed.has(c.name) ? " (indexed)" : ""}
              </option>,
              <option value={`${c.name}:desc`}>
                {c.name} ↓{indexed.has(c.name) ? " (indexed)" : ""}
              </option>,
            ])}
          </select>
        </label>
        {onCreate && (
          <button type="button" class="small" onClick={onCreate}>
            + New object
          </button>
        )}
      </div>
    </div>
  );
}
