// The data screen's grid: one page of objects, a column per field in schema order with fixed widths by type, and
// only the columns in view rendered. It owns the focused cell (arrows, Home, End; PageUp/PageDown ask for
// another page), the cell being edited (Enter, F2 or a double click; Enter saves with type checking, Escape
// cancels, a refused save keeps what was typed) and the Delete key; the screen writes and deletes.

import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { describeError, enc } from "../api.ts";
import { AUTO_FIELDS, type FieldDef, type SchemaDef, isImageUrl, parseInput, primaryKeyOf, showValue } from "../values.ts";
import { attempt, formatTime, useApp } from "../ui.tsx";
import { CellEditor, readFile } from "./data-dialogs.tsx";
import type { Order } from "./data-query-bar.tsx";

export type Obj = Record<string, unknown>;
export type Column = { name: string; field?: FieldDef; auto?: boolean };

/** Columns in schema order: the key, the fields, then the automatic ones. */
export function columnsOf(def: SchemaDef): Column[] {
  const pk = primaryKeyOf(def);
  return [
    { name: pk },
    ...Object.entries(def.fields)
      .filter(([n]) => n !== pk)
      .map(([name, field]) => ({ name, field })),
    ...AUTO_FIELDS.map((name) => ({ name, auto: true })),
  ];
}

function widthOf(c: Column, pk: string): number {
  if (c.name === pk) return 220;
  if (c.auto) return c.name === "sm_owner" ? 140 : 170;
  switch (c.field?.type) {
    case "boolean":
      return 80;
    case "integer":
    case "float":
      return 110;
    case "geopoint":
      return 160;
    default:
      return 180;
  }
}

interface Props {
  /** The schema's name, for the grid's label. */
  name: string;
  pk: string;
  columns: Column[];
  rows: Obj[];
  /** Cells are editable and rows deletable (a last column of Delete buttons). */
  writable: boolean;
  order: Order;
  /** The page's number, shown as data-page-seq; undefined while a page loads. */
  seq: number | undefined;
  /** A click on a column's header. */
  onSort(field: string): void;
  /** Writes one field of a row: a typed value or an uploaded file's. Rejects with the server's refusal. */
  onSave(row: number, field: string, value: unknown): Promise<void>;
  /** Asks to delete a row (the Delete key or its button). */
  onDelete(obj: Obj): void;
  /** PageDown (1) or PageUp (-1). */
  onPage(step: 1 | -1): void;
  /** Shown under the table: the line saying there are no objects. */
  children?: ComponentChildren;
}

export function Grid({ name, pk, columns, rows, writable, order, seq, onSort, onSave, onDelete, onPage, children }: Props) {
  const app = useApp();
  const [focus, setFocus] = useState<[number, number]>([0, 0]);
  const [editing, setEditing] = useState<{ row: number; col: number; text: string; error: string | null } | null>(null);
  const grid = useRef<HTMLDivElement>(null);

  const save = async (row: number, col: number, text: string) => {
    const c = columns[col]!;
    const parsed = c.field ? parseInput(c.field, text) : { ok: false as const, error: `${c.name} is not editable` };
    if (!parsed.ok) return setEditing({ row, col, text, error: parsed.error });
    try {
      await onSave(row, c.name, parsed.value);
      setEditing(null);
      grid.current?.focus();
    } catch (e) {
      setEditing({ row, col, text, error: describeError(e) });
    }
  };

  const upload = async (row: number, col: number, file: File) => {
    await attempt(
      app,
      async () => {
        await onSave(row, columns[col]!.name, await readFile(file));
        setEditing(null);
      },
      `${file.name} uploaded`,
    );
  };

  const editable = (col: number) => {
    const c = columns[col];
    return writable && !!c?.field && c.name !== pk;
  };

  const startEdit = (row: number, col: number) => {
    if (!editable(col) || !rows[row]) return;
    const c = columns[col]!;
    setEditing({ row, col, text: c.field!.type === "password" ? "" : showValue(c.field, rows[row]![c.name]), error: null });
  };

  const onGridKey = (e: KeyboardEvent) => {
    if (editing) return;
    const [r, c] = focus;
    const move = (nr: number, nc: number) => {
      e.preventDefault();
      setFocus([Math.max(0, Math.min(rows.length - 1, nr)), Math.max(0, Math.min(columns.length - 1, nc))]);
    };
    switch (e.key) {
      case "ArrowDown":
        return move(r + 1, c);
      case "ArrowUp":
        return move(r - 1, c);
      case "ArrowRight":
        return move(r, c + 1);
      case "ArrowLeft":
        return move(r, c - 1);
      case "Home":
        return move(r, 0);
      case "End":
        return move(r, columns.length - 1);
      case "PageDown":
        e.preventDefault();
        return onPage(1);
      case "PageUp":
        e.preventDefault();
        return onPage(-1);
      case "Enter":
      case "F2":
        e.preventDefault();
        return startEdit(r, c);
      case "Delete":
        if (writable && rows[r]) {
          e.preventDefault();
          onDelete(rows[r]!);
        }
    }
  };

  // Fixed column widths by type: the browser lays the grid out without measuring every cell.
  const widths = useMemo(() => [...columns.map((c) => widthOf(c, pk)), ...(writable ? [80] : [])], [columns, writable]);
  const offsets = useMemo(() => widths.reduce((o, w) => (o.push(o[o.length - 1]! + w), o), [0]), [widths]);
  // Only the columns in view (and 400 px either side) are rendered: a wide schema costs what a narrow one does.
  // Measured on 50 fields, laying out and painting every cell took longer than the query.
  const [view, setView] = useState({ left: 0, width: 1600 });
  const frame = useRef(0);
  const measure = () => {
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      const el = grid.current;
      if (el && (el.scrollLeft !== view.left || el.clientWidth !== view.width)) setView({ left: el.scrollLeft, width: el.clientWidth });
    });
  };
  useEffect(() => {
    const ro = new ResizeObserver(measure);
    if (grid.current) ro.observe(grid.current);
    return () => ro.disconnect();
  }, []);
  let first = 0;
  while (first < widths.length - 1 && offsets[first + 1]! < view.left - 400) first++;
  let last = first;
  while (last < widths.length - 1 && offsets[last + 1]! < view.left + view.width + 400) last++;
  const shown = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const leftPad = offsets[first]!;
  const rightPad = offsets[widths.length]! - offsets[last + 1]!;

  useEffect(() => {
    const el = grid.current;
    if (!el) return;
    const [r, c] = focus;
    if (offsets[c]! < el.scrollLeft) el.scrollLeft = offsets[c]!;
    else if (offsets[c + 1]! > el.scrollLeft + el.clientWidth) el.scrollLeft = offsets[c + 1]! - el.clientWidth;
    el.querySelector<HTMLElement>(`td[data-cell="${r}-${c}"]`)?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [focus]);

  // The page's cells are rendered again only when the page, the focus or the edited cell changes (not when a
  // load starts or a filter is typed): 50 rows of 50 fields are 2,500 cells.
  const tbody = useMemo(
    () => (
      <tbody>
        {rows.map((obj, r) => (
          <tr>
            {leftPad > 0 && <td class="pad" />}
            {shown.map((ci) => {
              const c = columns[ci];
              if (!c) {
                return (
                  <td>
                    <button type="button" class="small danger" aria-label={`Delete ${String(obj[pk])}`} onClick={() => onDelete(obj)}>
                      Delete
                    </button>
                  </td>
                );
              }
              const v = obj[c.name];
              const focused = focus[0] === r && focus[1] === ci;
              if (editing && editing.row === r && editing.col === ci) {
                return (
                  <td class="focus" data-cell={`${r}-${ci}`} style={{ overflow: "visible" }}>
                    <CellEditor
                      field={c.field!}
                      text={editing.text}
                      error={editing.error}
                      onText={(text) => setEditing({ ...editing, text })}
                      onSave={() => save(r, ci, editing.text)}
                      onFile={(f) => upload(r, ci, f)}
                      onCancel={() => {
                        setEditing(null);
                        grid.current?.focus();
                      }}
                    />
                  </td>
                );
              }
              const text = c.auto && c.name !== "sm_owner" ? formatTime(v) : showValue(c.field, v);
              return (
                <td
                  data-cell={`${r}-${ci}`}
                  class={`${focused ? "focus" : ""} ${v === null || v === undefined ? "null" : ""}`}
                  title={typeof v === "object" && v !== null ? JSON.stringify(v) : String(v ?? "null")}
                  onClick={() => setFocus([r, ci])}
                  onDblClick={() => startEdit(r, ci)}
                >
                  {c.field?.type === "binary" && isImageUrl(v) ? (
                    <a href={v} target="_blank" rel="noreferrer">
                      <img class="thumb" src={v} alt="" loading="lazy" />
                    </a>
                  ) : c.field?.type === "binary" && typeof v === "string" ? (
                    <a href={v} target="_blank" rel="noreferrer">
                      {v.split("/").pop()}
                    </a>
                  ) : c.field?.type === "relationship" && typeof v === "string" && v ? (
                    <a href={`#/data/${enc(c.field.schema!)}`} title={`${c.field.schema} ${v}`}>
                      {v}
                    </a>
                  ) : v === null || v === undefined ? (
                    "null"
                  ) : (
                    text
                  )}
                </td>
              );
            })}
            {rightPad > 0 && <td class="pad" />}
          </tr>
        ))}
      </tbody>
    ),
    [rows, columns, focus, editing, writable, first, last],
  );

  return (
    <div
      class="grid-wrap"
      ref={grid}
      tabIndex={0}
      onKeyDown={onGridKey}
      aria-label={`Objects of ${name}`}
      role="grid"
      data-page-seq={seq}
      onScroll={measure}
    >
      <table class="grid" style={{ width: `${offsets[widths.length]}px` }}>
        <colgroup>
          {leftPad > 0 && <col style={{ width: `${leftPad}px` }} />}
          {shown.map((ci) => (
            <col style={{ width: `${widths[ci]}px` }} />
          ))}
          {rightPad > 0 && <col style={{ width: `${rightPad}px` }} />}
        </colgroup>
        <thead>
          <tr>
            {leftPad > 0 && <th class="pad" />}
            {shown
              .map((ci) => columns[ci])
              .map((c) =>
                !c ? (
                  <th />
                ) : (
                  <th
                    onClick={() => onSort(c.name)}
                    title={c.field ? c.field.type + (c.field.schema ? ` → ${c.field.schema}` : "") : c.auto ? "automatic" : "key"}
                    aria-sort={order?.field === c.name ? (order.desc ? "descending" : "ascending") : "none"}
                  >
                    {c.name}
                    {order?.field === c.name ? (order.desc ? " ↓" : " ↑") : ""}
                  </th>
                ),
              )}
            {rightPad > 0 && <th class="pad" />}
          </tr>
        </thead>
        {tbody}
      </table>
      {children}
    </div>
  );
}
