// The data browser: one schema of the chosen environment as a grid. Filters are the API's operators, order
// is a click on a column (indexed fields first in the picker), pages come by Range and the exact total only when
// the "Count" button asks (a count of a big table is a full scan). Cells are edited in place with type checking:
// arrows move, Enter edits, Enter saves, Escape cancels; a refused save keeps what was typed. Objects are created
// in a form, deleted after a confirmation; binary fields upload a file and show image previews.
// This file loads the page and writes; its parts: data-query-bar.tsx (filters, fields, expand, order),
// data-grid.tsx (the grid, its keyboard and in-place editing), data-pager.tsx, data-dialogs.tsx (the cell
// editor, the create form).

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Env, call, canWrite, del, enc, put } from "../api.ts";
import { schemasOf } from "../schemas-of.ts";
import { type SchemaDef, primaryKeyOf, totalOf } from "../values.ts";
import { Confirm, ErrorBox, Loading, useApp, useLoad } from "../ui.tsx";
import { CreateDialog } from "./data-dialogs.tsx";
import { Grid, type Obj, columnsOf } from "./data-grid.tsx";
import { Pager } from "./data-pager.tsx";
import { NO_QUERY, type Query, QueryBar } from "./data-query-bar.tsx";
import { type LiveChange, useLiveChanges } from "../live.ts";

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
        <span class="badge">
          {app.env}
          {schemas.data?.version ? ` v${schemas.data.version}` : ""}
        </span>
      </div>
      <ErrorBox error={schemas.error} />
      <Loading when={schemas.loading && !schemas.data} />
      {schemas.data && app.env === "production" && schemas.data.version === null && (
        <p class="muted">Production has no deployed version yet (Deploy).</p>
      )}
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
  const [query, setQuery] = useState<Query>(NO_QUERY);
  const [pageSize, setPageSize] = useState(50);
  const [start, setStart] = useState(0);
  const [count, setCount] = useState(false);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Obj | null>(null);
  const { filter, order, select, expand } = query;
  const base = `/data/${env}/${enc(def.name)}`;
  const versionParam = env === "production" && version ? `_version=${version}` : "";
  const objectPath = (obj: Obj) => `${base}/${enc(String(obj[pk]))}${versionParam ? `?${versionParam}` : ""}`;

  const page = useLoad<Page>(async () => {
    const q = [filter, versionParam, count ? "_count=true" : ""].filter(Boolean).join("&");
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
  }, [base, filter, order?.field, order?.desc, pageSize, start, count, select, expand]);

  // Changes by anyone, as they happen: an object on this page that changed is replaced in place (unless the page
  // selects or expands, which a change does not carry); anything else reloads the page, at most every 300 ms.
  const [patched, setPatched] = useState<ReadonlyMap<string, Obj>>(new Map());
  useEffect(() => setPatched(new Map()), [page.data?.seq]);
  const reloadTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // The reload of the query on screen when the timer fires (not of the one on screen when it was set).
  const reload = useRef(page.reload);
  reload.current = page.reload;
  const live = useLiveChanges(env, version, def.name, (c: LiveChange) => {
    const key = String(c.object[pk]);
    const onPage = (page.data?.rows ?? []).some((r) => String(r[pk]) === key);
    if (c.event === "update" && onPage && !select.trim() && !expand) setPatched((m) => new Map(m).set(key, c.object as Obj));
    else if (!reloadTimer.current)
      reloadTimer.current = setTimeout(() => {
        reloadTimer.current = null;
        reload.current();
      }, 300);
  });
  useEffect(() => () => void (reloadTimer.current && clearTimeout(reloadTimer.current)), []);
  const rows = (page.data?.rows ?? []).map((r) => patched.get(String(r[pk])) ?? r);
  // A new query starts again from the first page; a new expand depth changes no row, so the page stays.
  const requery = (q: Query) => {
    if (q.expand === expand) setStart(0);
    setQuery(q);
  };
  const sortBy = (field: string) => {
    setStart(0);
    setQuery((q) => ({ ...q, order: q.order?.field !== field ? { field, desc: false } : q.order.desc ? null : { field, desc: true } }));
  };
  // The server's answer takes the row's place; the grid shows it when its edit ends.
  const save = async (row: number, field: string, value: unknown) => {
    const updated = await put<Obj>(objectPath(rows[row]!), { [field]: value });
    const at = page.data!.rows.findIndex((r) => String(r[pk]) === String(updated[pk]));
    if (at >= 0) page.data!.rows[at] = updated;
    setPatched((m) => new Map(m).set(String(updated[pk]), updated));
  };
  const turn = (step: 1 | -1) => {
    if (step < 0) setStart(Math.max(0, start - pageSize));
    else if (rows.length === pageSize) setStart(start + pageSize);
  };

  return (
    <div>
      <QueryBar def={def} columns={columns} query={query} onQuery={requery} onCreate={writable ? () => setCreating(true) : undefined} />
      <ErrorBox error={page.error} />
      {live && (
        <span class="badge ok small" title="Changes by anyone appear as they happen">
          live
        </span>
      )}
      <Grid
        name={def.name}
        pk={pk}
        columns={columns}
        rows={rows}
        writable={writable}
        order={order}
        seq={page.loading ? undefined : page.data?.seq}
        onSort={sortBy}
        onSave={save}
        onDelete={setDeleting}
        onPage={turn}
      >
        {page.data && rows.length === 0 && (
          <p class="muted" style={{ padding: "10px" }}>
            No objects{filter ? " match" : ""}.
          </p>
        )}
      </Grid>
      <Pager
        start={start}
        pageSize={pageSize}
        rows={rows.length}
        total={page.data?.total}
        counting={count}
        loading={page.loading}
        ms={page.data?.ms}
        onStart={setStart}
        onPageSize={(n) => {
          setStart(0);
          setPageSize(n);
        }}
        onCounting={setCount}
        onRefresh={page.reload}
      />
      {creating && (
        <CreateDialog
          def={def}
          base={base}
          versionParam={versionParam}
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            page.reload();
          }}
          route={route}
        />
      )}
      {deleting && (
        <Confirm
          title={`Delete ${def.name} "${String(deleting[pk])}"?`}
          confirm="Delete"
          danger
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            await del(objectPath(deleting));
            setDeleting(null);
            app.toast(`Deleted ${String(deleting[pk])}`);
            page.reload();
          }}
        >
          <p>This cannot be undone. Relationships pointing at it are left as they are; its files are deleted.</p>
        </Confirm>
      )}
    </div>
  );
}
