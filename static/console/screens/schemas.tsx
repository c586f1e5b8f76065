// Schemas: development's definitions, edited as a form (fields of every type, relationships, permissions per
// operation, indexes, the user block) or as JSON. Saving first asks the server for the migration plan (a dry
// run) and shows it; a destructive change is refused by the server and applied only after a second, explicit
// confirmation (force). Production versions are shown read-only.

import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, canWrite, del, enc, get } from "../api.ts";
import type { FieldDef, SchemaDef } from "../values.ts";
import { Confirm, ErrorBox, Loading, useApp, useLoad } from "../ui.tsx";

const FIELD_TYPES: FieldDef["type"][] = ["string", "integer", "float", "boolean", "array", "geopoint", "binary", "relationship", "password"];
const ITEM_TYPES = ["string", "integer", "float", "boolean"] as const;
const OPERATIONS = ["create", "read", "update", "delete"] as const;
const WORDS = ["open", "logged_in", "owner", "private_key", "none"] as const;
const PERM_KEYS = ["role", "relationship", "ownerRelationship"] as const;

interface FieldRow {
  name: string;
  def: FieldDef;
}

interface Draft {
  name: string;
  fields: FieldRow[];
  permissions: Record<string, unknown>;
  indexes: string[];
  user: SchemaDef["user"] | null;
}

function toDraft(d: SchemaDef): Draft {
  return {
    name: d.name,
    fields: Object.entries(d.fields).map(([name, def]) => ({ name, def: { ...def } })),
    permissions: { ...d.permissions },
    indexes: d.indexes.map((ix) => ix.join(", ")),
    user: d.user ? { ...d.user } : null,
  };
}

function fromDraft(d: Draft): SchemaDef {
  const fields: Record<string, FieldDef> = {};
  for (const f of d.fields) if (f.name.trim()) fields[f.name.trim()] = clean(f.def);
  const def: SchemaDef = {
    name: d.name.trim(),
    fields,
    permissions: d.permissions as SchemaDef["permissions"],
    indexes: d.indexes.map((s) => s.split(",").map((x) => x.trim()).filter(Boolean)).filter((ix) => ix.length > 0),
  };
  if (d.user) def.user = d.user;
  return def;
}

/** Only the members the type takes (the server refuses "items" on a string). */
function clean(f: FieldDef): FieldDef {
  if (f.type === "array") return { type: "array", items: f.items ?? "string" };
  if (f.type === "relationship") return { type: "relationship", schema: f.schema ?? "", many: !!f.many };
  return { type: f.type };
}

const EMPTY: SchemaDef = { name: "", fields: {}, permissions: { create: "open", read: "open", update: "owner", delete: "owner" }, indexes: [] };

export function Schemas({ name }: { name?: string }) {
  const app = useApp();
  const versions = useLoad(() => get<{ version: number }[]>("/deploys"), []);
  const [version, setVersion] = useState(0);
  const list = useLoad(() => get<SchemaDef[]>(`/schemas${version ? `?version=${version}` : ""}`), [version]);
  const writable = canWrite(app.me) && version === 0;
  const def = name === "new" ? EMPTY : list.data?.find((d) => d.name === name);
  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Schemas</h1>
        <select aria-label="Version" value={version} onChange={(e) => setVersion(Number(e.currentTarget.value))}>
          <option value={0}>development</option>
          {(versions.data ?? []).map((d) => (
            <option value={d.version}>production v{d.version}</option>
          ))}
        </select>
        <span class="grow" />
        {writable && <a class="button" href="#/schemas/new">+ New schema</a>}
      </div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      <div style={{ display: "grid", gridTemplateColumns: "minmax(160px, 220px) 1fr", gap: "16px" }}>
        <nav aria-label="Schemas" class="stack">
          {(list.data ?? []).map((d) => (
            <a href={`#/schemas/${enc(d.name)}`} style={{ fontWeight: d.name === name ? 700 : 400 }}>
              {d.name}
              {d.user ? <span class="badge" style={{ marginLeft: "6px" }}>users</span> : null}
            </a>
          ))}
        </nav>
        <div>
          {!name && <p class="muted">Choose a schema, or create one.</p>}
          {name && list.data && !def && <ErrorBox error={`There is no schema "${name}" in ${version ? `version ${version}` : "development"}.`} />}
          {def && <Editor key={`${version}/${name}`} original={def} isNew={name === "new"} writable={writable} all={list.data ?? []} onSaved={(n) => { list.reload(); location.hash = `#/schemas/${enc(n)}`; }} />}
        </div>
      </div>
    </div>
  );
}

interface Plan {
  def: SchemaDef;
  changes: string[];
  destructive: string | null;
}

function Editor({ original, isNew, writable, all, onSaved }: { original: SchemaDef; isNew: boolean; writable: boolean; all: SchemaDef[]; onSaved(name: string): void }) {
  const app = useApp();
  const [draft, setDraft] = useState<Draft>(() => toDraft(original));
  const [json, setJson] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [typed, setTyped] = useState("");
  useEffect(() => setDraft(toDraft(original)), [original]);

  const current = (): SchemaDef | null => {
    if (json === null) return fromDraft(draft);
    try {
      return JSON.parse(json) as SchemaDef;
    } catch (e) {
      setError(`The JSON is not valid: ${(e as Error).message}`);
      return null;
    }
  };

  const review = async () => {
    setError(null);
    const def = current();
    if (!def) return;
    const name = isNew ? def.name : original.name;
    if (!name) return setError("Give the schema a name.");
    try {
      const a = await call<{ changes: string[] }>("PUT", `/schemas/${enc(name)}?dryRun=true`, { body: def });
      setPlan({ def, changes: a.data.changes ?? [], destructive: null });
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 409) setPlan({ def, changes: [], destructive: e.message });
      else setError(e instanceof ApiFailure ? `${e.status}: ${e.message}` : String(e));
    }
  };

  const apply = async () => {
    const p = plan!;
    const name = isNew ? p.def.name : original.name;
    await call("PUT", `/schemas/${enc(name)}${p.destructive ? "?force=true" : ""}`, { body: p.def });
    setPlan(null);
    app.toast(`Schema ${name} saved`);
    onSaved(name);
  };

  const set = (f: (d: Draft) => void) => {
    const next = structuredClone(draft);
    f(next);
    setDraft(next);
  };
  const others = all.map((d) => d.name);

  return (
    <div class="stack">
      <div class="row">
        <h2 style={{ margin: 0, flex: 1 }}>{isNew ? "New schema" : original.name}</h2>
        <button class="small" onClick={() => (json === null ? setJson(JSON.stringify(fromDraft(draft), null, 2)) : (() => { const d = current(); if (d) { setDraft(toDraft({ ...EMPTY, ...d })); setJson(null); } })())}>
          {json === null ? "Edit as JSON" : "Edit as form"}
        </button>
      </div>
      {json !== null ? (
        <textarea class="code" aria-label="Schema JSON" style={{ minHeight: "360px" }} value={json} readOnly={!writable} onInput={(e) => setJson(e.currentTarget.value)} />
      ) : (
        <fieldset disabled={!writable} style={{ border: 0, padding: 0, margin: 0 }} class="stack">
          {isNew && (
            <label class="field">
              <span>Name</span>
              <input aria-label="Schema name" placeholder="todo" value={draft.name} onInput={(e) => set((d) => void (d.name = e.currentTarget.value))} />
            </label>
          )}
          <h3>Fields</h3>
          <table class="fields-table">
            <thead>
              <tr><th>Name</th><th>Type</th><th>Of</th><th /></tr>
            </thead>
            <tbody>
              {draft.fields.map((f, i) => (
                <tr>
                  <td><input aria-label={`Field ${i + 1} name`} value={f.name} onInput={(e) => set((d) => void (d.fields[i]!.name = e.currentTarget.value))} /></td>
                  <td>
                    <select aria-label={`Field ${i + 1} type`} value={f.def.type} onChange={(e) => set((d) => void (d.fields[i]!.def = clean({ ...d.fields[i]!.def, type: e.currentTarget.value as FieldDef["type"] })))}>
                      {FIELD_TYPES.map((t) => <option value={t}>{t}</option>)}
                    </select>
                  </td>
                  <td>
                    {f.def.type === "array" && (
                      <select aria-label={`Field ${i + 1} items`} value={f.def.items} onChange={(e) => set((d) => void (d.fields[i]!.def.items = e.currentTarget.value as FieldDef["items"]))}>
                        {ITEM_TYPES.map((t) => <option value={t}>{t}</option>)}
                      </select>
                    )}
                    {f.def.type === "relationship" && (
                      <div class="row">
                        <select aria-label={`Field ${i + 1} related schema`} value={f.def.schema} onChange={(e) => set((d) => void (d.fields[i]!.def.schema = e.currentTarget.value))}>
                          <option value="">schema…</option>
                          {[...new Set([...others, draft.name])].filter(Boolean).map((n) => <option value={n}>{n}</option>)}
                        </select>
                        <label class="row small">
                          <input type="checkbox" checked={!!f.def.many} onChange={(e) => set((d) => void (d.fields[i]!.def.many = e.currentTarget.checked))} /> many
                        </label>
                      </div>
                    )}
                  </td>
                  <td><button class="small" aria-label={`Remove field ${f.name}`} onClick={() => set((d) => void d.fields.splice(i, 1))}>✕</button></td>
                </tr>
              ))}
            </tbody>
          </table>
          <div><button class="small" onClick={() => set((d) => void d.fields.push({ name: "", def: { type: "string" } }))}>+ Field</button></div>
          <h3>Permissions</h3>
          {OPERATIONS.map((op) => <PermissionRow op={op} value={draft.permissions[op]} onChange={(v) => set((d) => void (d.permissions[op] = v))} />)}
          <h3>Indexes</h3>
          {draft.indexes.map((ix, i) => (
            <div class="row">
              <input aria-label={`Index ${i + 1}`} placeholder="field, other_field" value={ix} onInput={(e) => set((d) => void (d.indexes[i] = e.currentTarget.value))} />
              <button class="small" aria-label={`Remove index ${i + 1}`} onClick={() => set((d) => void d.indexes.splice(i, 1))}>✕</button>
            </div>
          ))}
          <div><button class="small" onClick={() => set((d) => void d.indexes.push(""))}>+ Index</button></div>
          <h3>
            <label class="row">
              <input type="checkbox" checked={!!draft.user} onChange={(e) => set((d) => {
                d.user = e.currentTarget.checked ? { key: "username", password: "password" } : null;
                if (d.user && !d.fields.some((f) => f.name === "password")) d.fields.push({ name: "password", def: { type: "password" } });
              })} />
              User schema (accounts sign in through it)
            </label>
          </h3>
          {draft.user && (
            <div>
              {(["key", "password", "email"] as const).map((k) => (
                <label class="field">
                  <span>{k === "key" ? "Key field (username)" : k === "password" ? "Password field" : "Email field"}</span>
                  <input aria-label={`User ${k}`} value={draft.user![k] ?? ""} onInput={(e) => set((d) => {
                    const v = e.currentTarget.value;
                    if (k === "email" && v === "") delete d.user!.email;
                    else d.user![k] = v;
                  })} />
                </label>
              ))}
              {(["forgotPassword", "singleSession"] as const).map((k) => (
                <label class="field">
                  <span>{k === "forgotPassword" ? "Forgot-password mails" : "One session at a time"}</span>
                  <input type="checkbox" checked={!!draft.user![k]} onChange={(e) => set((d) => void (d.user![k] = e.currentTarget.checked))} />
                </label>
              ))}
            </div>
          )}
        </fieldset>
      )}
      <ErrorBox error={error} />
      {writable && (
        <div class="row">
          <button class="primary" onClick={review}>Review and save</button>
          <button onClick={() => { setDraft(toDraft(original)); setJson(null); setError(null); }}>Discard changes</button>
          <span class="grow" />
          {!isNew && <button class="danger" onClick={() => setDeleting(true)}>Delete schema</button>}
        </div>
      )}
      {plan && (
        <Confirm title={plan.destructive ? "This change destroys data" : "Migration plan"} confirm={plan.destructive ? "Apply anyway (force)" : plan.changes.length ? "Apply" : "Save"} danger={!!plan.destructive} onCancel={() => setPlan(null)} onConfirm={apply}>
          {plan.destructive ? (
            <div class="error">{plan.destructive}</div>
          ) : plan.changes.length ? (
            <ul data-testid="plan">{plan.changes.map((c) => <li>{c}</li>)}</ul>
          ) : (
            <p class="muted">No change to the data.</p>
          )}
        </Confirm>
      )}
      {deleting && (
        <Confirm title={`Delete schema "${original.name}" and all its objects?`} confirm="Delete" danger onCancel={() => setDeleting(false)}
          onConfirm={async () => {
            if (typed !== original.name) throw new Error(`Type "${original.name}" to confirm.`);
            await del(`/schemas/${enc(original.name)}`);
            setDeleting(false);
            app.toast(`Schema ${original.name} deleted`);
            onSaved("");
          }}>
          <p>Every object of the schema in development is deleted. Production keeps its data until a deploy removes the schema.</p>
          <input aria-label="Type the schema name" placeholder={original.name} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </Confirm>
      )}
    </div>
  );
}

function PermissionRow({ op, value, onChange }: { op: string; value: unknown; onChange(v: unknown): void }) {
  const objKey = typeof value === "object" && value !== null ? (Object.keys(value)[0] as (typeof PERM_KEYS)[number]) : null;
  const kind = objKey ?? (typeof value === "string" ? value : "open");
  const arg = objKey ? String((value as Record<string, unknown>)[objKey] ?? "") : "";
  return (
    <label class="field">
      <span>{op}</span>
      <span class="row">
        <select aria-label={`Permission ${op}`} value={kind} onChange={(e) => {
          const k = e.currentTarget.value;
          onChange((PERM_KEYS as readonly string[]).includes(k) ? { [k]: arg } : k);
        }}>
          {WORDS.map((w) => <option value={w}>{w}</option>)}
          {PERM_KEYS.map((k) => <option value={k}>{k}…</option>)}
        </select>
        {objKey && <input aria-label={`Permission ${op} ${objKey}`} placeholder={objKey === "role" ? "role name" : "relationship field"} value={arg} onInput={(e) => onChange({ [objKey]: e.currentTarget.value })} />}
      </span>
    </label>
  );
}
