// Hooks: the hooks each schema has in the environment's current code, the after-hook queue (changes waiting and the
// oldest one's age), and the dead-letter list - changes whose after-hook failed every try - each with its change,
// caller, source, tries and last error, to try again or remove (editors and owners).

import { useState } from "preact/hooks";
import { call, canWrite, get } from "../api.ts";
import { Dialog, ErrorBox, Loading, attempt, formatTime, useApp, useLoad } from "../ui.tsx";

interface Overview {
  env: string;
  version: number;
  hooks: Record<string, string[]>;
  queue: { queued: number; oldestMs: number; dead: number };
}

interface Dead {
  id: number;
  at: string;
  failedAt: string;
  schema: string;
  event: string;
  key: string;
  object: unknown;
  previous: unknown;
  user: string | null;
  auth: string;
  source: string;
  version: number;
  attempts: number;
  error: string;
}

export function Hooks() {
  const app = useApp();
  const overview = useLoad(() => get<Overview>(`/hooks?env=${app.env}`), [app.env]);
  const dead = useLoad(() => get<{ dead: Dead[] }>(`/hooks/dead?env=${app.env}`), [app.env]);
  const [shown, setShown] = useState<Dead | null>(null);
  const reload = () => {
    overview.reload();
    dead.reload();
  };
  const act = (d: Dead, how: "retry" | "remove") =>
    attempt(
      app,
      async () => {
        if (how === "retry") await call("POST", `/hooks/dead/${d.id}/retry?env=${app.env}`);
        else await call("DELETE", `/hooks/dead/${d.id}?env=${app.env}`);
        reload();
      },
      how === "retry" ? `Change ${d.id} is queued again` : `Change ${d.id} removed`,
    );

  const o = overview.data;
  const schemas = o ? Object.entries(o.hooks) : [];
  return (
    <div class="stack">
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Hooks</h1>
        <span class="grow" />
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Custom code exports them as <code>hooks</code>; before-hooks run before a write, after-hooks after its commit from a queue (each
        change at least once, tried again with a growing delay, then listed here).
      </p>
      <ErrorBox error={overview.error ?? dead.error} />
      <Loading when={overview.loading && !o} />
      {o && (
        <section class="panel stack" aria-label="Hooks per schema">
          <p class="small" style={{ margin: 0 }} data-testid="hook-queue">
            Queue: {o.queue.queued} waiting{o.queue.queued ? ` (oldest ${Math.round(o.queue.oldestMs / 1000)} s)` : ""} · {o.queue.dead}{" "}
            dead
          </p>
          {schemas.length === 0 ? (
            <p class="muted small">No hooks in {app.env}.</p>
          ) : (
            <table data-testid="hooks">
              <thead>
                <tr>
                  <th>Schema</th>
                  <th>Hooks</th>
                </tr>
              </thead>
              <tbody>
                {schemas.map(([schema, events]) => (
                  <tr>
                    <td>{schema}</td>
                    <td class="small">{events.join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      <section class="panel stack" aria-label="Dead after-hooks">
        <h2 style={{ margin: 0 }}>Failed every try</h2>
        {dead.data && dead.data.dead.length === 0 && <p class="muted small">None.</p>}
        {dead.data && dead.data.dead.length > 0 && (
          <div style={{ overflowX: "auto" }}>
            <table data-testid="dead-hooks">
              <thead>
                <tr>
                  <th>Change</th>
                  <th>Hook</th>
                  <th>Object</th>
                  <th>Failed</th>
                  <th>Tries</th>
                  <th>Error</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {dead.data.dead.map((d) => (
                  <tr>
                    <td class="small">
                      <button type="button" class="small link" onClick={() => setShown(d)}>
                        {d.id}
                      </button>
                    </td>
                    <td class="small">
                      {d.schema}.{d.event}
                    </td>
                    <td class="small">{d.key}</td>
                    <td class="small">{formatTime(d.failedAt)}</td>
                    <td class="small">{d.attempts}</td>
                    <td class="small">{d.error}</td>
                    <td class="row">
                      {canWrite(app.me) && (
                        <>
                          <button type="button" class="small" onClick={() => act(d, "retry")}>
                            Try again
                          </button>
                          <button type="button" class="small danger" onClick={() => act(d, "remove")}>
                            Remove
                          </button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {shown && (
        <Dialog title={`Change ${shown.id}: ${shown.schema}.${shown.event}`} onClose={() => setShown(null)}>
          <p class="muted small">
            {formatTime(shown.at)} · {shown.source} · {shown.user ?? "no user"} ({shown.auth}) · version {shown.version}
          </p>
          <pre data-testid="dead-change">{JSON.stringify({ object: shown.object, previous: shown.previous }, null, 2)}</pre>
        </Dialog>
      )}
    </div>
  );
}
