// Push: send a notification (to everyone, to users or to tokens), the queue (depth, oldest, retries, leased),
// recent notifications with their delivery results, and the tokens the providers refused.

import { useState } from "preact/hooks";
import { canWrite, describeError, get, post } from "../api.ts";
import { ErrorBox, Loading, formatTime, useApp, useLoad } from "../ui.tsx";

type Row = Record<string, unknown>;

function Table({ rows, testid }: { rows: Row[]; testid?: string }) {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <div style={{ overflowX: "auto" }}>
      <table data-testid={testid}>
        <thead>
          <tr>
            {cols.map((c) => (
              <th>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>
              {cols.map((c) => {
                const v = r[c];
                return (
                  <td class="small">
                    {/^(created|queued|expired|sent|at)$/i.test(c) && typeof v === "number"
                      ? formatTime(v)
                      : typeof v === "object" && v !== null
                        ? JSON.stringify(v)
                        : String(v ?? "")}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Push() {
  const app = useApp();
  const q = `env=${app.env}`;
  const queue = useLoad(() => get<Row>(`/push/queue?${q}`), [q]);
  const recent = useLoad(() => get<Row[]>(`/push/notifications?${q}&limit=50`), [q]);
  const expired = useLoad(() => get<Row[]>(`/push/expired?${q}`), [q]);
  const [payload, setPayload] = useState('{"aps": {"alert": "Hello"}, "data": {"message": "Hello"}}');
  const [target, setTarget] = useState<"all" | "users" | "tokens">("users");
  const [who, setWho] = useState("");
  const [error, setError] = useState<string | null>(null);

  const send = async (e: Event) => {
    e.preventDefault();
    setError(null);
    let p: unknown;
    try {
      p = JSON.parse(payload);
    } catch (err) {
      return setError(`The payload is not valid JSON: ${(err as Error).message}`);
    }
    const list = who
      .split(/[\n,]/)
      .map((s) => s.trim())
      .filter(Boolean);
    const body: Row = { payload: p };
    if (target === "users") body.users = list;
    if (target === "tokens")
      body.tokens = list.map((l) => {
        const [type, ...rest] = l.split(":");
        return { type, token: rest.join(":") };
      });
    try {
      const r = await post<{ queued: number }>(`/push/send?${q}`, body);
      app.toast(`Queued ${r.queued} deliveries`);
      queue.reload();
      recent.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Push · {app.env}</h1>
        <span class="grow" />
        <button
          type="button"
          onClick={() => {
            queue.reload();
            recent.reload();
            expired.reload();
          }}
        >
          Refresh
        </button>
      </div>
      {canWrite(app.me) && (
        <form class="panel stack" onSubmit={send}>
          <h2 style={{ margin: 0 }}>Send</h2>
          <label class="field">
            <span>To</span>
            <select aria-label="Push target" value={target} onChange={(e) => setTarget(e.currentTarget.value as typeof target)}>
              <option value="users">users</option>
              <option value="tokens">device tokens</option>
              <option value="all">everyone (broadcast)</option>
            </select>
          </label>
          {target !== "all" && (
            <label class="field">
              <span>{target === "users" ? "Usernames" : "Tokens (type:token)"}</span>
              <textarea
                aria-label="Push recipients"
                placeholder={target === "users" ? "alice, bob" : "ios:740f4707…\nandroidgcm:APA91b…"}
                value={who}
                onInput={(e) => setWho(e.currentTarget.value)}
              />
            </label>
          )}
          <label class="field">
            <span>Payload (JSON)</span>
            <textarea class="code" aria-label="Push payload" value={payload} onInput={(e) => setPayload(e.currentTarget.value)} />
          </label>
          <ErrorBox error={error} />
          <div>
            <button class="primary" type="submit">
              Send
            </button>
          </div>
        </form>
      )}
      <h2>Queue</h2>
      <ErrorBox error={queue.error} />
      <Loading when={queue.loading && !queue.data} />
      {queue.data && (
        <div class="cards">
          {Object.entries(queue.data)
            .filter(([k]) => k !== "env")
            .map(([k, v]) => (
              <div class="card">
                <div class="muted small">{k}</div>
                <div class="big">{typeof v === "object" ? JSON.stringify(v) : String(v ?? "—")}</div>
              </div>
            ))}
        </div>
      )}
      <h2>Recent notifications</h2>
      <ErrorBox error={recent.error} />
      {recent.data?.length === 0 && <p class="muted">None yet.</p>}
      {recent.data && recent.data.length > 0 && <Table rows={recent.data} testid="push-recent" />}
      <h2>Expired tokens</h2>
      <ErrorBox error={expired.error} />
      {expired.data?.length === 0 && <p class="muted">No token was refused.</p>}
      {expired.data && expired.data.length > 0 && <Table rows={expired.data} />}
    </div>
  );
}
