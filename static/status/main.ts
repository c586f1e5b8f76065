// The status page: the server's figures from /_status/data every 5 seconds, as cards, tables and uPlot charts of
// the last hour (requests per minute by area, p95 latency by area, server errors). The console's token of this tab
// is sent when there is one: object counts come to admins only, and with --status-admin-only every figure does.

import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

interface AreaFigures {
  requests: number;
  rate: number;
  serverErrors: number;
  clientErrors: number;
  errorRate: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}
interface Minute {
  t: number;
  requests: number[];
  serverErrors: number[];
  p95: (number | null)[];
}
interface Figures {
  version: string;
  uptimeSeconds: number;
  /** Only for an admin (the console's token). */
  environments?: Record<string, { total: number; schemas: number; latestVersion?: number | null }>;
  areas: string[];
  requests: Record<string, AreaFigures>;
  series: Minute[];
  stores: Record<string, { db: number; wal: number }>;
  push: Record<
    string,
    {
      depth: number;
      oldestAgeMs: number | null;
      retrying: number;
      leased: number;
      deliveredPerMinute: number;
      lastHour: { notifications: number; sent: number; failed: number };
    }
  >;
  code: { running: boolean; bundles: number; calls: number; failures: number; inFlight: number };
  live: { streams: number; subscriptions: number; delivered: number; eventsPerSecond: number; lagMs: number };
  process: { rssBytes: number; heapUsedBytes: number };
  lastBackup: { created: string; size: number } | null;
  /** Operating conditions (src/system/operations.ts): load shedding, the data directory's disk, the store. */
  operations?: {
    shedding?: { enabled: boolean; admitted: number; shed: number; admitFraction: number; queueMs: number; inFlight: number };
    disk: { freeBytes: number | null; totalBytes: number | null; full: boolean; refusedWrites: number };
    store?: { remote: boolean; reachable: boolean; failures: number; lastFailureAt: string | null; lastError: string | null };
  };
}

const root = document.getElementById("status")!;
const COLORS = ["#2d5bd7", "#1f9d55", "#b7791f", "#c2352b", "#6b46c1", "#0e7490", "#6b7280", "#be185d"];
const charts = new Map<string, uPlot>();

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
const bytes = (n: number) =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;
const ms = (v: number | null) => (v === null ? "—" : v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${v} ms`);
const uptime = (s: number) =>
  s >= 86400
    ? `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`
    : s >= 3600
      ? `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
      : `${Math.floor(s / 60)} min ${s % 60} s`;

async function load(): Promise<Figures> {
  const token = sessionStorage.getItem("burrow.console.token");
  const r = await fetch("/_status/data", { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error((body as { error?: string } | null)?.error ?? `${r.status} ${r.statusText}`);
  return body as Figures;
}

function card(label: string, value: string, note = "", cls = ""): string {
  return `<div class="card"><div class="muted small">${esc(label)}</div><div class="big ${cls}">${esc(value)}</div><div class="muted small">${esc(note)}</div></div>`;
}

/** The data directory's free space; while a write is refused for lack of space, that instead (in red). */
function diskCard(d: NonNullable<Figures["operations"]>["disk"]): string {
  const free = d.freeBytes === null ? "—" : bytes(d.freeBytes);
  if (d.full) return card("Disk", "disk full: writes refused", `${free} free · ${d.refusedWrites} refused`, "bad");
  const low = d.freeBytes !== null && d.totalBytes ? d.freeBytes / d.totalBytes < 0.05 : false;
  return card("Disk free", free, d.totalBytes ? `of ${bytes(d.totalBytes)}` : "on the libSQL server", low ? "warn" : "");
}

/** Load shedding: requests refused since start, and while overloaded the share admitted and the event loop's lag. */
function sheddingCard(sh: NonNullable<NonNullable<Figures["operations"]>["shedding"]>): string {
  if (!sh.enabled) return card("Load shedding", "off", "--shed-target-ms 0");
  const overloaded = sh.admitFraction < 1;
  const note = `${overloaded ? `admitting ${Math.round(sh.admitFraction * 100)}% · ` : ""}lag ${ms(sh.queueMs)} · ${sh.inFlight} in flight`;
  return card("Shed (503)", sh.shed.toLocaleString(), note, overloaded ? "bad" : sh.shed ? "warn" : "");
}

function render(f: Figures): void {
  const all = Object.values(f.requests);
  const total = all.reduce((n, a) => n + a.requests, 0);
  const rate = all.reduce((n, a) => n + a.rate, 0);
  const errors = all.reduce((n, a) => n + a.serverErrors, 0);
  const depth = Object.values(f.push).reduce((n, p) => n + p.depth, 0);
  const dbs = Object.values(f.stores).reduce((n, s) => n + s.db, 0);
  const wals = Object.values(f.stores).reduce((n, s) => n + s.wal, 0);
  const errorShare = total ? errors / total : 0;
  root.innerHTML = `
    <div class="head"><h1>Burrow status</h1><span class="muted">version ${esc(f.version)} · up ${uptime(f.uptimeSeconds)} · updated ${new Date().toLocaleTimeString()}</span></div>
    <div class="cards">
      ${card("Requests, last hour", total.toLocaleString(), `${rate.toFixed(2)} per second`)}
      ${card("Data p95", ms(f.requests.data?.p95 ?? null), `p50 ${ms(f.requests.data?.p50 ?? null)} · p99 ${ms(f.requests.data?.p99 ?? null)}`)}
      ${card("Server errors", errors.toLocaleString(), `${(errorShare * 100).toFixed(2)}% of requests`, errors ? "bad" : "ok")}
      ${card(
        "Push queue",
        depth.toLocaleString(),
        `${Object.entries(f.push)
          .map(([e, p]) => `${e} ${p.deliveredPerMinute}/min`)
          .join(" · ")}`,
        depth > 10000 ? "warn" : "",
      )}
      ${card("Custom code calls", f.code.calls.toLocaleString(), `${f.code.running ? "running" : "not started"} · ${f.code.failures} failed`)}
      ${card("Live streams", f.live.streams.toLocaleString(), `${f.live.subscriptions} subscriptions · ${f.live.eventsPerSecond} events/s · lag ${ms(f.live.lagMs)}`)}
      ${card("Stores", bytes(dbs), `WAL ${bytes(wals)}`)}
      ${f.operations?.shedding ? sheddingCard(f.operations.shedding) : ""}
      ${f.operations ? diskCard(f.operations.disk) : ""}
      ${f.operations?.store && !f.operations.store.reachable ? card("Store", "store unreachable", `${f.operations.store.lastError ?? ""} · ${f.operations.store.failures} refused`, "bad") : ""}
      ${card("Memory", bytes(f.process.rssBytes), `heap ${bytes(f.process.heapUsedBytes)}`)}
      ${card("Last backup", f.lastBackup ? new Date(f.lastBackup.created).toLocaleString() : "none", f.lastBackup ? bytes(f.lastBackup.size) : "burrow backup", f.lastBackup ? "" : "warn")}
    </div>
    <h2>Last hour by area</h2>
    <table data-testid="areas"><thead><tr><th>Area</th><th>Requests</th><th>per s</th><th>p50</th><th>p95</th><th>p99</th><th>5xx</th><th>4xx</th></tr></thead><tbody>
      ${f.areas
        .map((a) => {
          const r = f.requests[a]!;
          return `<tr><td>${esc(a)}</td><td>${r.requests.toLocaleString()}</td><td>${r.rate}</td><td>${ms(r.p50)}</td><td>${ms(r.p95)}</td><td>${ms(r.p99)}</td><td class="${r.serverErrors ? "bad" : ""}">${r.serverErrors}</td><td>${r.clientErrors}</td></tr>`;
        })
        .join("")}
    </tbody></table>
    <h2>Charts</h2>
    <div class="charts"><div class="chart" id="c-requests"><h3>Requests per minute</h3></div><div class="chart" id="c-p95"><h3>p95 latency, ms</h3></div><div class="chart" id="c-errors"><h3>Server errors per minute</h3></div></div>
    <h2>Stores</h2>
    <table><thead><tr><th>Database</th><th>File</th><th>WAL</th></tr></thead><tbody>
      ${Object.entries(f.stores)
        .map(([n, s]) => `<tr><td>${esc(n)}</td><td>${bytes(s.db)}</td><td>${bytes(s.wal)}</td></tr>`)
        .join("")}
    </tbody></table>
    <h2>Push</h2>
    <table><thead><tr><th>Environment</th><th>Waiting</th><th>Oldest</th><th>Retrying</th><th>Sent, last hour</th><th>Failed, last hour</th></tr></thead><tbody>
      ${Object.entries(f.push)
        .map(
          ([e, p]) =>
            `<tr><td>${esc(e)}</td><td>${p.depth}</td><td>${p.oldestAgeMs === null ? "—" : `${Math.round(p.oldestAgeMs / 1000)} s`}</td><td>${p.retrying}</td><td>${p.lastHour.sent}</td><td>${p.lastHour.failed}</td></tr>`,
        )
        .join("")}
    </tbody></table>
    <h2>Objects</h2>
    ${
      f.environments
        ? `<table data-testid="objects"><thead><tr><th>Environment</th><th>Schemas</th><th>Objects</th></tr></thead><tbody>
      ${Object.entries(f.environments)
        .map(
          ([e, v]) =>
            `<tr><td>${esc(e)}${v.latestVersion ? ` (v${v.latestVersion})` : ""}</td><td>${v.schemas}</td><td>${v.total.toLocaleString()}</td></tr>`,
        )
        .join("")}
    </tbody></table>`
        : `<p class="muted" data-testid="objects-hidden">Object counts are shown to admins: <a href="/_admin/">sign in to the console</a> in this tab.</p>`
    }`;
  drawCharts(f);
}

function drawCharts(f: Figures): void {
  for (const c of charts.values()) c.destroy();
  charts.clear();
  // One point per minute of the last hour, zero where a minute saw no requests.
  const now = Math.floor(Date.now() / 60_000) * 60_000;
  const minutes = Array.from({ length: 60 }, (_, i) => now - (59 - i) * 60_000);
  const byT = new Map(f.series.map((m) => [m.t, m]));
  const xs = minutes.map((t) => t / 1000);
  const pick = (get: (m: Minute, a: number) => number | null, empty: number | null) =>
    f.areas.map((_, a) =>
      minutes.map((t) => {
        const m = byT.get(t);
        return m ? get(m, a) : empty;
      }),
    );
  const draw = (id: string, data: (number | null)[][]) => {
    const el = document.getElementById(id)!;
    const width = Math.max(300, el.clientWidth - 16);
    const series = [{}, ...f.areas.map((a, i) => ({ label: a, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false }))];
    charts.set(
      id,
      new uPlot(
        { width, height: 200, series, axes: [{ stroke: "#888" }, { stroke: "#888" }], legend: { show: true } },
        [xs, ...data] as uPlot.AlignedData,
        el,
      ),
    );
  };
  draw(
    "c-requests",
    pick((m, a) => m.requests[a] ?? 0, 0),
  );
  draw(
    "c-p95",
    pick((m, a) => (m.requests[a] ? (m.p95[a] ?? null) : null), null),
  );
  draw(
    "c-errors",
    pick((m, a) => m.serverErrors[a] ?? 0, 0),
  );
}

let timer = 0;
async function refresh(): Promise<void> {
  try {
    render(await load());
    document.body.dataset.loaded = String(Date.now());
  } catch (e) {
    root.innerHTML = `<div class="head"><h1>Burrow status</h1></div><div class="error" role="alert">${esc((e as Error).message)} <a href="/_admin/">Sign in</a></div>`;
  }
  clearTimeout(timer);
  timer = window.setTimeout(refresh, 5000);
}
void refresh();
