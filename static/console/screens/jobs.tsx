// Jobs: the custom code jobs of the environment shown (those of its current code), each with its schedule, time
// zone, timeout and next five runs, "Run now" (editors and owners), and its newest runs: when, trigger, status, how
// long, the error and the lines it logged. Refreshes itself while a run is under way.

import { useEffect, useState } from "preact/hooks";
import { call, canWrite, enc, get } from "../api.ts";
import { Dialog, ErrorBox, Loading, attempt, formatTime, useApp, useLoad } from "../ui.tsx";

interface Run {
  id: string;
  trigger: "schedule" | "manual" | "missed";
  status: "running" | "ok" | "failed" | "timeout" | "skipped" | "missed";
  occurrence: string;
  started: string | null;
  durationMs: number | null;
  error: string | null;
  log: string[];
}

interface Job {
  name: string;
  schedule: string;
  timezone: string;
  timeoutMs: number;
  next: string[];
  running: boolean;
  runs: Run[];
}

const BADGE: Record<Run["status"], string> = { ok: "ok", running: "warn", missed: "warn", skipped: "", failed: "bad", timeout: "bad" };

const took = (ms: number | null) => (ms === null ? "—" : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

function Runs({ job, onLog }: { job: Job; onLog(run: Run): void }) {
  if (job.runs.length === 0) return <p class="muted small">No runs yet.</p>;
  return (
    <div style={{ overflowX: "auto" }}>
      <table data-testid={`runs-${job.name}`}>
        <thead>
          <tr>
            <th>For</th>
            <th>Trigger</th>
            <th>Status</th>
            <th>Started</th>
            <th>Took</th>
            <th>Error</th>
            <th>Log</th>
          </tr>
        </thead>
        <tbody>
          {job.runs.map((r) => (
            <tr>
              <td class="small">{formatTime(r.occurrence)}</td>
              <td class="small">{r.trigger}</td>
              <td>
                <span class={`badge ${BADGE[r.status]}`}>{r.status}</span>
              </td>
              <td class="small">{r.started ? formatTime(r.started) : "—"}</td>
              <td class="small">{took(r.durationMs)}</td>
              <td class="small">{r.error ?? ""}</td>
              <td>
                {r.log.length > 0 && (
                  <button type="button" class="small link" onClick={() => onLog(r)}>
                    {r.log.length} {r.log.length === 1 ? "line" : "lines"}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Jobs() {
  const app = useApp();
  const list = useLoad(() => get<{ jobs: Job[] }>(`/jobs?env=${app.env}`), [app.env]);
  const [log, setLog] = useState<{ job: string; run: Run } | null>(null);
  const running = list.data?.jobs.some((j) => j.running) ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(list.reload, 1500);
    return () => clearInterval(timer);
  }, [running, list.reload]);

  const runNow = (name: string) =>
    attempt(
      app,
      async () => {
        await call("POST", `/jobs/${enc(name)}/run?env=${app.env}`);
        list.reload();
      },
      `Started ${name}`,
    );

  const jobs = list.data?.jobs;
  return (
    <div class="stack">
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Jobs</h1>
        <span class="grow" />
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Custom code exports them as <code>jobs</code>;{" "}
        {app.env === "production" ? "production runs its newest version's" : "development runs its upload's"}. Each occurrence runs on one
        node; one that comes while a run is under way is skipped.
      </p>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !jobs} />
      {jobs && jobs.length === 0 && <p class="muted">No jobs in {app.env}.</p>}
      {jobs?.map((j) => (
        <section class="panel stack" data-testid={`job-${j.name}`} aria-label={`Job ${j.name}`}>
          <div class="row">
            <h2 style={{ margin: 0 }}>{j.name}</h2>
            {j.running && <span class="badge warn">running</span>}
            <span style={{ flex: 1 }} />
            {canWrite(app.me) && (
              <button type="button" class="primary small" disabled={j.running} onClick={() => runNow(j.name)}>
                Run now
              </button>
            )}
          </div>
          <p class="muted small" style={{ margin: 0 }}>
            <code>{j.schedule}</code> in {j.timezone} · at most {took(j.timeoutMs)} a run
          </p>
          <p class="small" style={{ margin: 0 }} data-testid={`next-${j.name}`}>
            Next: {j.next.length ? j.next.map(formatTime).join(" · ") : "never"}
          </p>
          <Runs job={j} onLog={(run) => setLog({ job: j.name, run })} />
        </section>
      ))}
      {log && (
        <Dialog title={`${log.job}: ${formatTime(log.run.occurrence)}`} onClose={() => setLog(null)}>
          <p class="muted small">
            {log.run.trigger} · {log.run.status} · {took(log.run.durationMs)}
          </p>
          <pre data-testid="run-log">{log.run.log.join("\n")}</pre>
        </Dialog>
      )}
    </div>
  );
}
