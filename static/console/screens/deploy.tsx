// Deploy: what development would change in production (a diff of the definitions against the newest production
// version, and the server's own dry-run plan), deploying it as a version, and the history with who and when.

import { useState } from "preact/hooks";
import { ApiFailure, call, canWrite, describeError, get } from "../api.ts";
import type { SchemaDef } from "../values.ts";
import { Confirm, ErrorBox, Loading, formatTime, useApp, useLoad } from "../ui.tsx";

interface DeployRecord {
  version: number;
  created: number;
  admin: string | null;
  schemas: string[];
  methods: string[];
  changes: string[];
}

interface Plan {
  version: number;
  changes: string[];
  warnings: string[];
}

type Line = { kind: "add" | "del" | "chg"; text: string };

/** Definition differences, schema by schema: added and removed schemas and fields, changed types, permissions, indexes. Pure. */
export function diffDefinitions(from: SchemaDef[], to: SchemaDef[]): Line[] {
  const out: Line[] = [];
  const before = new Map(from.map((d) => [d.name, d]));
  const after = new Map(to.map((d) => [d.name, d]));
  for (const [name, d] of after) {
    const old = before.get(name);
    if (!old) {
      out.push({ kind: "add", text: `+ schema ${name} (${Object.keys(d.fields).length} fields)` });
      continue;
    }
    for (const [f, def] of Object.entries(d.fields)) {
      const o = old.fields[f];
      if (!o) out.push({ kind: "add", text: `+ ${name}.${f}: ${JSON.stringify(def)}` });
      else if (JSON.stringify(o) !== JSON.stringify(def))
        out.push({ kind: "chg", text: `~ ${name}.${f}: ${JSON.stringify(o)} → ${JSON.stringify(def)}` });
    }
    for (const f of Object.keys(old.fields)) if (!(f in d.fields)) out.push({ kind: "del", text: `- ${name}.${f}` });
    if (JSON.stringify(old.permissions) !== JSON.stringify(d.permissions))
      out.push({ kind: "chg", text: `~ ${name} permissions: ${JSON.stringify(old.permissions)} → ${JSON.stringify(d.permissions)}` });
    if (JSON.stringify(old.indexes) !== JSON.stringify(d.indexes))
      out.push({ kind: "chg", text: `~ ${name} indexes: ${JSON.stringify(old.indexes)} → ${JSON.stringify(d.indexes)}` });
    if (JSON.stringify(old.user ?? null) !== JSON.stringify(d.user ?? null))
      out.push({ kind: "chg", text: `~ ${name} user block: ${JSON.stringify(old.user ?? null)} → ${JSON.stringify(d.user ?? null)}` });
  }
  for (const name of before.keys()) if (!after.has(name)) out.push({ kind: "del", text: `- schema ${name}` });
  return out;
}

export function Deploy() {
  const app = useApp();
  const writable = canWrite(app.me);
  const history = useLoad(() => get<DeployRecord[]>("/deploys"), []);
  const latest = history.data?.length ? Math.max(...history.data.map((d) => d.version)) : null;
  const diff = useLoad(async () => {
    if (!history.data) return null;
    const dev = await get<SchemaDef[]>("/schemas");
    const prod = latest === null ? [] : await get<SchemaDef[]>(`/schemas?version=${latest}`);
    return diffDefinitions(prod, dev);
  }, [history.data]);
  const [version, setVersion] = useState("");
  const [plan, setPlan] = useState<{ plan: Plan | null; destructive: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);

  const body = (extra: Record<string, unknown>) => ({ ...(version.trim() ? { version: Number(version) } : {}), ...extra });
  const review = async () => {
    setError(null);
    try {
      const a = await call<Plan>("POST", "/deploy", { body: body({ dryRun: true }) });
      setPlan({ plan: a.data, destructive: null });
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 409 && /destructive/.test(e.message)) setPlan({ plan: null, destructive: e.message });
      else setError(describeError(e));
    }
  };

  return (
    <div>
      <h1>Deploy</h1>
      <p class="muted">
        A deploy snapshots development's schemas and custom code as production API version N and migrates production.db additively. Apps
        pick a version with <code>Accept: application/vnd.service+json; version=N</code>.
      </p>
      <h2>Development against {latest === null ? "an empty production" : `production v${latest}`}</h2>
      <ErrorBox error={diff.error} />
      <Loading when={diff.loading && !diff.data} />
      {diff.data && diff.data.length === 0 && <p class="muted">No schema differences.</p>}
      {diff.data && diff.data.length > 0 && (
        <pre data-testid="deploy-diff">
          {diff.data.map((l) => (
            <div class={`diff-${l.kind}`}>{l.text}</div>
          ))}
        </pre>
      )}
      {writable && (
        <div class="row" style={{ marginTop: "12px" }}>
          <input
            aria-label="Version"
            type="number"
            min={1}
            placeholder={`version (next: ${(latest ?? 0) + 1})`}
            value={version}
            onInput={(e) => setVersion(e.currentTarget.value)}
          />
          <button type="button" class="primary" onClick={review}>
            Review deploy
          </button>
        </div>
      )}
      <ErrorBox error={error} />
      {plan && (
        <Confirm
          title={plan.destructive ? "This deploy removes things from production" : `Deploy as version ${plan.plan!.version}?`}
          confirm={plan.destructive ? "Deploy anyway (force)" : "Deploy"}
          danger={!!plan.destructive}
          onCancel={() => setPlan(null)}
          onConfirm={async () => {
            const r = await call<Plan>("POST", "/deploy", { body: body(plan.destructive ? { force: true } : {}) });
            setPlan(null);
            app.toast(`Deployed version ${r.data.version}`);
            history.reload();
          }}
        >
          {plan.destructive ? (
            <div class="error">{plan.destructive}</div>
          ) : (
            <>
              {plan.plan!.changes.length ? (
                <ul>
                  {plan.plan!.changes.map((c) => (
                    <li>{c}</li>
                  ))}
                </ul>
              ) : (
                <p class="muted">No migration of production.db is needed.</p>
              )}
              {plan.plan!.warnings.map((w) => (
                <div class="badge warn">{w}</div>
              ))}
            </>
          )}
        </Confirm>
      )}
      <h2>History</h2>
      <ErrorBox error={history.error} />
      {history.data?.length === 0 && <p class="muted">Nothing deployed yet.</p>}
      {history.data && history.data.length > 0 && (
        <table data-testid="deploy-history">
          <thead>
            <tr>
              <th>Version</th>
              <th>When</th>
              <th>Who</th>
              <th>Schemas</th>
              <th>Methods</th>
              <th>Changes</th>
            </tr>
          </thead>
          <tbody>
            {history.data.map((d) => (
              <tr>
                <td>v{d.version}</td>
                <td>{formatTime(d.created)}</td>
                <td>{d.admin ?? <span class="muted">command line</span>}</td>
                <td>{d.schemas.join(", ")}</td>
                <td>{d.methods.join(", ") || <span class="muted">none</span>}</td>
                <td class="small">{d.changes.length ? d.changes.join("; ") : <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
