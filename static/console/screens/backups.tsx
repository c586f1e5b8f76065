// Backups: the backups in the data directory (newest first, with size and how long each took), a backup made now
// (optionally uploaded to S3), its progress while it runs, download (owners; the file holds keys and secrets),
// delete, and the schedule from production's settings (backups.every, backups.keep, backups.s3).

import { useState } from "preact/hooks";
import { ApiFailure, call, canWrite, del, describeError, enc, get, isOwner } from "../api.ts";
import { Confirm, ErrorBox, Loading, attempt, formatTime, useApp, useLoad } from "../ui.tsx";

interface Backup {
  id: string;
  file: string;
  size: number;
  created: number;
  durationMs: number | null;
  s3?: { key: string; error?: string };
}

interface Listing {
  backups: Backup[];
  running: { id: string; progress: { done: number; total: number; phase: string } | null } | null;
  schedule: { every: number; keep: number; s3: boolean; next: number | null };
}

const size = (n: number) =>
  n < 1024 ** 2
    ? `${(n / 1024).toFixed(1)} KiB`
    : n < 1024 ** 3
      ? `${(n / 1024 ** 2).toFixed(1)} MiB`
      : `${(n / 1024 ** 3).toFixed(2)} GiB`;

/** Download with the bearer token (a plain link cannot send it): fetch, then save the blob. */
async function download(id: string): Promise<void> {
  const token = sessionStorage.getItem("burrow.console.token");
  const r = await fetch(`/_admin/api/backups/${enc(id)}/download`, { headers: { authorization: `Bearer ${token}` } });
  if (!r.ok) {
    const body = await r.json().catch(() => null);
    throw new ApiFailure(r.status, (body as { error?: string } | null)?.error ?? r.statusText, body);
  }
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = `burrow-${id}.tar`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function Backups() {
  const app = useApp();
  const list = useLoad(() => get<Listing>("/backups"), []);
  const [busy, setBusy] = useState(false);
  const [s3, setS3] = useState(false);
  const [removing, setRemoving] = useState<Backup | null>(null);
  const now = async () => {
    setBusy(true);
    const poll = setInterval(list.reload, 1000);
    await attempt(
      app,
      async () => {
        const b = (await call<Backup>("POST", "/backups", { body: { s3 } })).data;
        if (b.s3?.error) app.toast(`Backup made; the S3 upload failed: ${b.s3.error}`, "error");
      },
      "Backup made",
    );
    clearInterval(poll);
    setBusy(false);
    list.reload();
  };
  const l = list.data;
  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Backups</h1>
        <span class="grow" />
        {canWrite(app.me) && (
          <>
            <label class="row small">
              <input type="checkbox" checked={s3} onChange={(e) => setS3(e.currentTarget.checked)} /> upload to S3
            </label>
            <button type="button" class="primary" disabled={busy || !!l?.running} onClick={now}>
              {busy ? "Backing up…" : "Back up now"}
            </button>
          </>
        )}
      </div>
      <p class="muted">
        One file holds system.db, both environments' databases and the local files as they were at one instant, taken while the server
        serves. Restore with <code>burrow restore &lt;file&gt;</code> (server stopped, or into a new directory).
      </p>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !l} />
      {l?.running && (
        <p class="notice">
          Backing up {l.running.id}
          {l.running.progress
            ? `: ${l.running.progress.phase} ${Math.round((l.running.progress.done / Math.max(1, l.running.progress.total)) * 100)}%`
            : "…"}
        </p>
      )}
      {l && (
        <p class="muted small" data-testid="backup-schedule">
          Schedule:{" "}
          {l.schedule.every
            ? `every ${l.schedule.every} h, keeping ${l.schedule.keep}${l.schedule.s3 ? ", uploaded to S3" : ""}${l.schedule.next ? `; next ${formatTime(l.schedule.next)}` : ""}`
            : "off"}{" "}
          (production settings: backups.every, backups.keep, backups.s3).
        </p>
      )}
      {l?.backups.length === 0 && <p class="muted">No backups yet.</p>}
      {l && l.backups.length > 0 && (
        <table data-testid="backups">
          <thead>
            <tr>
              <th>Made</th>
              <th>Size</th>
              <th>Took</th>
              <th>S3</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {l.backups.map((b) => (
              <tr>
                <td>
                  {formatTime(b.created)}
                  <div class="muted small">{b.id}</div>
                </td>
                <td>{size(b.size)}</td>
                <td>{b.durationMs === null ? "—" : `${(b.durationMs / 1000).toFixed(1)} s`}</td>
                <td class="small">{b.s3 ? b.s3.error ? <span class="badge bad">{b.s3.error}</span> : b.s3.key : ""}</td>
                <td class="row">
                  {isOwner(app.me) && (
                    <button type="button" class="small" onClick={() => download(b.id).catch((e) => app.toast(describeError(e), "error"))}>
                      Download
                    </button>
                  )}
                  {canWrite(app.me) && (
                    <button type="button" class="small danger" onClick={() => setRemoving(b)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {removing && (
        <Confirm
          title={`Delete the backup of ${formatTime(removing.created)}?`}
          confirm="Delete"
          danger
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await del(`/backups/${enc(removing.id)}`);
            setRemoving(null);
            list.reload();
          }}
        >
          <p>The file is removed from the data directory (a copy in S3 stays).</p>
        </Confirm>
      )}
    </div>
  );
}
