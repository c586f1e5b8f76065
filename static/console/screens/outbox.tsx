// Outbox: mails kept when no SMTP host is set (GET /_admin/api/outbox), newest first, each readable in full.

import { useState } from "preact/hooks";
import { get } from "../api.ts";
import { Dialog, ErrorBox, Loading, formatTime, useLoad } from "../ui.tsx";

interface Mail {
  id: string | number;
  to: string;
  subject: string;
  text: string;
  html?: string | null;
  created: string | number;
  env?: string;
}

export function Outbox() {
  const mails = useLoad(() => get<Mail[]>("/outbox"), []);
  const [open, setOpen] = useState<Mail | null>(null);
  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Outbox</h1>
        <span class="grow" />
        <button type="button" onClick={mails.reload}>
          Refresh
        </button>
      </div>
      <p class="muted">Mails are kept here while an environment has no SMTP host (Settings → smtp), for 30 days.</p>
      <ErrorBox error={mails.error} />
      <Loading when={mails.loading && !mails.data} />
      {mails.data && mails.data.length === 0 && <p class="muted">The outbox is empty.</p>}
      {mails.data && mails.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>To</th>
              <th>Subject</th>
            </tr>
          </thead>
          <tbody>
            {mails.data.map((m) => (
              <tr>
                <td>{formatTime(m.created)}</td>
                <td>{m.to}</td>
                <td>
                  <button type="button" class="link" onClick={() => setOpen(m)}>
                    {m.subject || "(no subject)"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && (
        <Dialog title={open.subject || "(no subject)"} onClose={() => setOpen(null)}>
          <p class="muted small">
            To {open.to} · {formatTime(open.created)}
          </p>
          <pre>{open.text}</pre>
        </Dialog>
      )}
    </div>
  );
}
