// Overview: version, uptime and object counts per environment (GET /_admin/api/status).

import { get } from "../api.ts";
import { ErrorBox, Loading, useLoad } from "../ui.tsx";

interface EnvStatus {
  schemas: number;
  objects: Record<string, number>;
  total: number;
  versions?: number[];
  latestVersion?: number | null;
}

interface Status {
  version: string;
  startedAt: string;
  uptimeSeconds: number;
  environments: Record<string, EnvStatus>;
}

function uptime(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${s % 60} s`;
}

export function Overview() {
  const status = useLoad(() => get<Status>("/status"), []);
  const s = status.data;
  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Overview</h1>
        <span class="grow" />
        <a class="button" href="/_status/" target="_blank" rel="noreferrer">
          Status page ↗
        </a>
      </div>
      <ErrorBox error={status.error} />
      <Loading when={status.loading && !s} />
      {s && (
        <>
          <div class="cards">
            <div class="card">
              <div class="muted small">Burrow</div>
              <div class="big">{s.version}</div>
              <div class="muted small">up {uptime(s.uptimeSeconds)}</div>
            </div>
            {Object.entries(s.environments).map(([name, e]) => (
              <div class="card">
                <div class="muted small">{name}</div>
                <div class="big">{e.total.toLocaleString()} objects</div>
                <div class="muted small">
                  {e.schemas} schemas
                  {name === "production" && (e.latestVersion ? ` · API version ${e.latestVersion}` : " · not deployed yet")}
                </div>
              </div>
            ))}
          </div>
          {Object.entries(s.environments).map(([name, e]) => (
            <>
              <h2>{name}</h2>
              {Object.keys(e.objects).length === 0 ? (
                <p class="muted">No schemas.</p>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th>Schema</th>
                      <th>Objects</th>
                    </tr>
                  </thead>
                  <tbody>
                    {Object.entries(e.objects).map(([schema, n]) => (
                      <tr>
                        <td>
                          <a href={`#/data/${encodeURIComponent(schema)}`}>{schema}</a>
                        </td>
                        <td>{n.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </>
          ))}
        </>
      )}
    </div>
  );
}
