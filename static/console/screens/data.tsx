// The data browser: one schema of the chosen environment as a grid. Filters are the API's operators, order
// is a click on a column (indexed fields first in the picker), pages come by Range and the exact total only when
// the "Count" button asks (a count of a big table is a full scan). Cells are edited in place with type checking:
// arrows move, Enter edits, Enter saves, Escape cancels; a refused save keeps what was typed. Objects are created
// in a form, deleted after a confirmation; binary fields upload a file and show image previews.

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiFailure, type Env, call, canWrite, del, describeError, enc, post, put } from "../api.ts";
import { schemasOf } from "../schemas-of.ts";
import { AUTO_FIELDS, FILTER_OPS, type FieldDef, type Filter, type SchemaDef, filtersToQuery, isImageUrl, parseInput, primaryKeyOf, showValue, totalOf, uploadValue } from "../values.ts";
import { Confirm, Dialog, ErrorBox, Loading, attempt, formatTime, inputType, useApp, useLoad } from "../ui.tsx";

type Obj = Record<string, unknown>;
const PAGE_SIZES = [25, 50, 100, 200];

/** Columns in schema order: the key, the fields, then the automatic ones. */
function columnsOf(def: SchemaDef): { name: string; field?: FieldDef; auto?: boolean }[] {
  const pk = primaryKeyOf(def);
  return [{ name: pk }, ...Object.entries(def.fields).filter(([n]) => n !== pk).map(([name, field]) => ({ name, field })), ...AUTO_FIELDS.map((name) => ({ name, auto: true }))];
}

function widthOf(c: { name: string; field?: FieldDef; auto?: boolean }, pk: string): number {
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

function readFile(file: File): Promise<string> {
  return file.arrayBuffer().then((b) => uploadValue(file.type, file.name, new Uint8Array(b)));
}

export function DataScreen({ schema, route = "data", only }: { schema?: string; route?: string; only?: (d: SchemaDef) => boolean }) {
  const app = useApp();
  const schemas = useLoad(() => schemasOf(app.env), [app.env]);
  const defs = (schemas.data?.defs ?? []).filter(only ?? (() => true));
  const def = defs.find((d) => d.name === schema);
  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>{route === "users" ? "Users" : "Data"}</h1>
        <select aria-label="Schema" value={schema ?? ""} onChange={(e) => (location.hash = `#/${route}/${enc(e.currentTarget.value)}`)}>
          <option value="" disabled>
            choose a schema
          </option>
          {defs.map((d) => (
            <option value={d.name}>{d.name}</option>
          ))}
        </select>
        <span class="badge">{app.env}{schemas.data?.version ? ` v${schemas.data.version}` : ""}</span>
      </div>
      <ErrorBox error={schemas.error} />
      <Loading when={schemas.loading && !schemas.data} />
      {schemas.data && app.env === "production" && schemas.data.version === null && <p class="muted">Production has no deployed version yet (Deploy).</p>}
      {schemas.data && !schema && defs.length > 0 && <p class="muted">Choose a schema.</p>}
      {schemas.data && schema && !def && <ErrorBox error={`There is no schema "${schema}" in ${app.env}.`} />}
      {def && <Browser key={`${app.env}/${def.name}`} def={def} env={app.env} version={schemas.data!.version} route={route} />}
    </div>
  );
}

interface Page {
  rows: Obj[];
  total: number | "unknown" | null;
  ms: number;
  /** Counts pages loaded: the grid shows it as data-page-seq, so a measurement knows when a new page is on screen. */
  seq: number;
}

let pageSeq = 0;

function Browser({ def, env, version, route }: { def: SchemaDef; env: Env; version: number | null; route: string }) {
  const app = useApp();
  const writable = canWrite(app.me);
  const pk = primaryKeyOf(def);
  const columns = useMemo(() => columnsOf(def), [def]);
  const [filters, setFilters] = useState<Filter[]>([]);
  const [applied, setApplied] = useState("");
  const [order, setOrder] = useState<{ field: string; desc: boolean } | null>(null);
  const [pageSize, setPageSize] = useState(50);
  const [start, setStart] = useState(0);
  const [count, setCount] = useState(false);
  const [select, setSelect] = useState("");
  const [expand, setExpand] = useState(0);
  const [focus, setFocus] = useState<[number, number]>([0, 0]);
  const [editing, setEditing] = useState<{ row: number; col: number; text: string; error: string | null } | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Obj | null>(null);
  const [rawQuery, setRawQuery] = useState("");
  const grid = useRef<HTMLDivElement>(null);
  const base = `/data/${env}/${enc(def.name)}`;
  const versionParam = env === "production" && version ? `_version=${version}` : "";

  const page = useLoad<Page>(async () => {
    const q = [applied, versionParam, count ? "_count=true" : ""].filter(Boolean).join("&");
    const headers: Record<string, string> = { range: `objects=${start}-${start + pageSize - 1}` };
    if (order) headers["x-service-orderby"] = `${order.field}:${order.desc ? "desc" : "asc"}`;
    if (select.trim()) headers["x-service-select"] = select.trim();
    if (expand) headers["x-service-expand"] = String(expand);
    const t0 = performance.now();
    const a = await call<Obj[]>("GET", `${base}${q ? `?${q}` : ""}`, { headers });
    // A short page ends the list, so its total is known without counting.
    const short = a.data.length > 0 && a.data.length < pageSize;
    const total = a.status === 200 || short ? start + a.data.length : totalOf(a.headers.get("content-range"));
    return { rows: a.data, total, ms: Math.round(performance.now() - t0), seq: ++pageSeq };
  }, [base, applied, order?.field, order?.desc, pageSize, start, count, select, expand]);

  const rows = page.data?.rows ?? [];
  const apply = () => {
    setStart(0);
    setApplied(rawQuery.trim() || filtersToQuery(filters));
  };
  const sortBy = (field: string) => {
    setStart(0);
    setOrder((o) => (o?.field !== field ? { field, desc: false } : o.desc ? null : { field, desc: true }));
  };

  const save = async (row: number, col: number, text: string) => {
    const c = columns[col]!;
    const obj = rows[row]!;
    const parsed = c.field ? parseInput(c.field, text) : { ok: false as const, error: `${c.name} is not editable` };
    if (!parsed.ok) return setEditing({ row, col, text, error: parsed.error });
    try {
      const updated = await put<Obj>(`${base}/${enc(String(obj[pk]))}${versionParam ? `?${versionParam}` : ""}`, { [c.name]: parsed.value });
      page.data!.rows[row] = updated;
      setEditing(null);
      grid.current?.focus();
    } catch (e) {
      setEditing({ row, col, text, error: describeError(e) });
    }
  };

  const upload = async (row: number, col: number, file: File) => {
    const c = columns[col]!;
    const obj = rows[row]!;
    await attempt(app, async () => {
      const updated = await put<Obj>(`${base}/${enc(String(obj[pk]))}${versionParam ? `?${versionParam}` : ""}`, { [c.name]: await readFile(file) });
      page.data!.rows[row] = updated;
      setEditing(null);
    }, `${file.name} uploaded`);
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
      case "ArrowDown": return move(r + 1, c);
      case "ArrowUp": return move(r - 1, c);
      case "ArrowRight": return move(r, c + 1);
      case "ArrowLeft": return move(r, c - 1);
      case "Home": return move(r, 0);
      case "End": return move(r, columns.length - 1);
      case "PageDown":
        e.preventDefault();
        if (rows.length === pageSize) setStart(start + pageSize);
        return;
      case "PageUp":
        e.preventDefault();
        setStart(Math.max(0, start - pageSize));
        return;
      case "Enter":
      case "F2":
        e.preventDefault();
        return startEdit(r, c);
      case "Delete":
        if (writable && rows[r]) {
          e.preventDefault();
          setDeleting(rows[r]!);
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
  const tbody = useMemo(() => (
    <tbody>
      {rows.map((obj, r) => (
        <tr>
          {leftPad > 0 && <td class="pad" />}
          {shown.map((ci) => {
            const c = columns[ci];
            if (!c) {
              return (
                <td>
                  <button class="small danger" aria-label={`Delete ${String(obj[pk])}`} onClick={() => setDeleting(obj)}>
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
                  <CellEditor field={c.field!} text={editing.text} error={editing.error}
                    onText={(text) => setEditing({ ...editing, text })}
                    onSave={() => save(r, ci, editing.text)}
                    onFile={(f) => upload(r, ci, f)}
                    onCancel={() => { setEditing(null); grid.current?.focus(); }} />
                </td>
              );
            }
            const text = c.auto && c.name !== "sm_owner" ? formatTime(v) : showValue(c.field, v);
            return (
              <td data-cell={`${r}-${ci}`} class={`${focused ? "focus" : ""} ${v === null || v === undefined ? "null" : ""}`} title={typeof v === "object" && v !== null ? JSON.stringify(v) : String(v ?? "null")}
                onClick={() => setFocus([r, ci])} onDblClick={() => startEdit(r, ci)}>
                {c.field?.type === "binary" && isImageUrl(v) ? (
                  <a href={v} target="_blank" rel="noreferrer"><img class="thumb" src={v} alt="" loading="lazy" /></a>
                ) : c.field?.type === "binary" && typeof v === "string" ? (
                  <a href={v} target="_blank" rel="noreferrer">{v.split("/").pop()}</a>
                ) : c.field?.type === "relationship" && typeof v === "string" && v ? (
                  <a href={`#/data/${enc(c.field.schema!)}`} title={`${c.field.schema} ${v}`}>{v}</a>
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
  ), [rows, columns, focus, editing, writable, first, last]);

  const total = page.data?.total;
  const shownTo = start + rows.length;
  const indexed = new Set(def.indexes.map((ix) => ix[0]));

  return (
    <div>
      <div class="filters panel">
        {filters.map((f, i) => (
          <div class="row">
            <select aria-label="Filter field" value={f.field} onChange={(e) => setFilters(filters.map((x, j) => (j === i ? { ...x, field: e.currentTarget.value } : x)))}>
              {columns.map((c) => (
                <option value={c.name}>{c.name}{indexed.has(c.name) ? " (indexed)" : ""}</option>
              ))}
            </select>
            <select aria-label="Filter operator" value={f.op} onChange={(e) => setFilters(filters.map((x, j) => (j === i ? { ...x, op: e.currentTarget.value } : x)))}>
              {FILTER_OPS.map((o) => (
                <option value={o.op}>{o.label}</option>
              ))}
            </select>
            {FILTER_OPS.find((o) => o.op === f.op)?.needsValue !== false && (
              <input aria-label="Filter value" value={f.value} onInput={(e) => setFilters(filters.map((x, j) => (j === i ? { ...x, value: e.currentTarget.value } : x)))} onKeyDown={(e) => e.key === "Enter" && apply()} />
            )}
            <button class="small" aria-label="Remove filter" onClick={() => setFilters(filters.filter((_, j) => j !== i))}>
              ✕
            </button>
          </div>
        ))}
        <div class="row">
          <button class="small" onClick={() => setFilters([...filters, { field: columns[1]?.name ?? pk, op: "eq", value: "" }])}>
            + Filter
          </button>
          <input aria-label="Query string" placeholder="or a query string: done=false&priority[gte]=2" style={{ flex: 1, minWidth: "200px" }} value={rawQuery} onInput={(e) => setRawQuery(e.currentTarget.value)} onKeyDown={(e) => e.key === "Enter" && apply()} />
          <button class="primary small" onClick={apply}>
            Apply
          </button>
        </div>
        <div class="row small">
          <label class="row">
            Fields
            <input aria-label="Select fields" placeholder="all (or title,done,owner.*)" value={select} onChange={(e) => { setStart(0); setSelect(e.currentTarget.value); }} />
          </label>
          <label class="row">
            Expand
            <select aria-label="Expand depth" value={expand} onChange={(e) => setExpand(Number(e.currentTarget.value))}>
              {[0, 1, 2, 3].map((n) => (
                <option value={n}>{n}</option>
              ))}
            </select>
          </label>
          <label class="row">
            Order
            <select aria-label="Order by" value={order ? `${order.field}:${order.desc ? "desc" : "asc"}` : ""} onChange={(e) => {
              const [field, dir] = e.currentTarget.value.split(":");
              setStart(0);
              setOrder(field ? { field, desc: dir === "desc" } : null);
            }}>
              <option value="">none</option>
              {columns.flatMap((c) => [
                <option value={`${c.name}:asc`}>{c.name} ↑{indexed.has(c.name) ? " (indexed)" : ""}</option>,
                <option value={`${c.name}:desc`}>{c.name} ↓{indexed.has(c.name) ? " (indexed)" : ""}</option>,
              ])}
            </select>
          </label>
          {writable && (
            <button class="small" onClick={() => setCreating(true)}>
              + New object
            </button>
          )}
        </div>
      </div>
      <ErrorBox error={page.error} />
      <div class="grid-wrap" ref={grid} tabIndex={0} onKeyDown={onGridKey} aria-label={`Objects of ${def.name}`} role="grid" data-page-seq={page.loading ? undefined : page.data?.seq} onScroll={measure}>
        <table class="grid" style={{ width: `${offsets[widths.length]}px` }}>
          <colgroup>
            {leftPad > 0 && <col style={{ width: `${leftPad}px` }} />}
            {shown.map((ci) => <col style={{ width: `${widths[ci]}px` }} />)}
            {rightPad > 0 && <col style={{ width: `${rightPad}px` }} />}
          </colgroup>
          <thead>
            <tr>
              {leftPad > 0 && <th class="pad" />}
              {shown.map((ci) => columns[ci]).map((c) => !c ? <th /> : (
                <th onClick={() => sortBy(c.name)} title={c.field ? c.field.type + (c.field.schema ? ` → ${c.field.schema}` : "") : c.auto ? "automatic" : "key"} aria-sort={order?.field === c.name ? (order.desc ? "descending" : "ascending") : "none"}>
                  {c.name}
                  {order?.field === c.name ? (order.desc ? " ↓" : " ↑") : ""}
                </th>
              ))}
              {rightPad > 0 && <th class="pad" />}
            </tr>
          </thead>
          {tbody}
        </table>
        {page.data && rows.length === 0 && <p class="muted" style={{ padding: "10px" }}>No objects{applied ? " match" : ""}.</p>}
      </div>
      <div class="pager">
        <button disabled={start === 0} onClick={() => setStart(Math.max(0, start - pageSize))}>
          ← Previous
        </button>
        <span data-testid="page-info">
          {rows.length ? `${start + 1}–${shownTo}` : "0"} of {typeof total === "number" ? total.toLocaleString() : "?"}
        </span>
        <button disabled={rows.length < pageSize || (typeof total === "number" && shownTo >= total)} onClick={() => setStart(start + pageSize)}>
          Next →
        </button>
        <select aria-label="Page size" value={pageSize} onChange={(e) => { setStart(0); setPageSize(Number(e.currentTarget.value)); }}>
          {PAGE_SIZES.map((n) => (
            <option value={n}>{n} per page</option>
          ))}
        </select>
        <button class="small" onClick={() => setCount(!count)} aria-pressed={count}>
          {count ? "Counting totals" : "Count"}
        </button>
        <button class="small" onClick={page.reload}>
          Refresh
        </button>
        <Loading when={page.loading} />
        {page.data && <span class="muted small">{page.data.ms} ms</span>}
        <span class="muted small hide-narrow">Arrows move · Enter edits · Delete deletes</span>
      </div>
      {creating && <CreateDialog def={def} base={base} versionParam={versionParam} onClose={() => setCreating(false)} onCreated={() => { setCreating(false); page.reload(); }} route={route} />}
      {deleting && (
        <Confirm title={`Delete ${def.name} "${String(deleting[pk])}"?`} confirm="Delete" danger onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            await del(`${base}/${enc(String(deleting[pk]))}${versionParam ? `?${versionParam}` : ""}`);
            setDeleting(null);
            app.toast(`Deleted ${String(deleting[pk])}`);
            page.reload();
          }}>
          <p>This cannot be undone. Relationships pointing at it are left as they are; its files are deleted.</p>
        </Confirm>
      )}
    </div>
  );
}

interface EditorProps {
  field: FieldDef;
  text: string;
  error: string | null;
  onText(t: string): void;
  onSave(): void;
  onFile(f: File): void;
  onCancel(): void;
}

function CellEditor({ field, text, error, onText, onSave, onFile, onCancel }: EditorProps) {
  const input = useRef<HTMLInputElement & HTMLSelectElement>(null);
  useEffect(() => input.current?.focus(), []);
  const keys = (e: KeyboardEvent) => {
    if (e.key === "Enter") { e.preventDefault(); onSave(); }
    if (e.key === "Escape") { e.preventDefault(); onCancel(); }
  };
  if (field.type === "binary") {
    return (
      <div class="row" onKeyDown={keys}>
        <input ref={input} type="file" aria-label="Upload a file" onChange={(e) => e.currentTarget.files?.[0] && onFile(e.currentTarget.files[0])} />
        <button class="small" onClick={onCancel}>Cancel</button>
      </div>
    );
  }
  return (
    <div>
      {field.type === "boolean" ? (
        <select ref={input} aria-label="Cell value" value={text} onChange={(e) => onText(e.currentTarget.value)} onKeyDown={keys}>
          <option value="true">true</option>
          <option value="false">false</option>
          <option value="">null</option>
        </select>
      ) : (
        <input ref={input} aria-label="Cell value" {...inputType(field.type === "password" ? "password" : "text")} value={text} onInput={(e) => onText(e.currentTarget.value)} onKeyDown={keys}
          placeholder={field.type === "geopoint" ? "lat, lon" : field.type === "array" || field.many ? "a, b, c" : ""} />
      )}
      {error && <div class="error small" role="alert">{error}</div>}
    </div>
  );
}

function CreateDialog({ def, base, versionParam, onClose, onCreated, route }: { def: SchemaDef; base: string; versionParam: string; onClose(): void; onCreated(): void; route: string }) {
  const pk = primaryKeyOf(def);
  const fields = Object.entries(def.fields).filter(([n]) => n !== pk);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [files, setFiles] = useState<Record<string, File>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: Obj = {};
    if (texts[pk]) body[pk] = texts[pk];
    for (const [name, f] of fields) {
      if (f.type === "binary") {
        if (files[name]) body[name] = await readFile(files[name]!);
        continue;
      }
      const text = texts[name];
      if (text === undefined || (text === "" && f.type !== "string")) continue;
      const p = parseInput(f, text);
      if (!p.ok) return setError(`${name}: ${p.error}`);
      body[name] = p.value;
    }
    setBusy(true);
    setError(null);
    try {
      await post(`${base}${versionParam ? `?${versionParam}` : ""}`, body);
      onCreated();
    } catch (err) {
      // The form keeps what was typed; the server's words say what to fix.
      setError(err instanceof ApiFailure ? `${err.status}: ${err.message}` : describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`New ${route === "users" ? "user" : "object"} in ${def.name}`} onClose={onClose}>
      <form onSubmit={submit} class="stack">
        <label class="field">
          <span>{pk}</span>
          <input name={pk} placeholder={def.user ? "required" : "automatic when empty"} value={texts[pk] ?? ""} onInput={(e) => setTexts({ ...texts, [pk]: e.currentTarget.value })} />
        </label>
        {fields.map(([name, f]) => (
          <label class="field">
            <span>
              {name} <span class="small">({f.type}{f.items ? ` of ${f.items}` : ""}{f.schema ? ` → ${f.schema}${f.many ? "[]" : ""}` : ""})</span>
            </span>
            {f.type === "binary" ? (
              <input name={name} type="file" onChange={(e) => e.currentTarget.files?.[0] && setFiles({ ...files, [name]: e.currentTarget.files[0] })} />
            ) : f.type === "boolean" ? (
              <select name={name} value={texts[name] ?? ""} onChange={(e) => setTexts({ ...texts, [name]: e.currentTarget.value })}>
                <option value="">(not set)</option>
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            ) : (
              <input name={name} {...inputType(f.type === "password" ? "password" : "text")} value={texts[name] ?? ""} onInput={(e) => setTexts({ ...texts, [name]: e.currentTarget.value })}
                placeholder={f.type === "geopoint" ? "lat, lon" : f.type === "array" || f.many ? "a, b, c" : ""} />
            )}
          </label>
        ))}
        <ErrorBox error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>Cancel</button>
          <button class="primary" type="submit" disabled={busy}>Create</button>
        </div>
      </form>
    </Dialog>
  );
}
