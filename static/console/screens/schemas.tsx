// Schemas: development's definitions, edited as a form (fields of every type, relationships, permissions per
// operation, indexes, the user block) or as JSON. Saving first asks the server for the migration plan (a dry
// run) and shows it; a destructive change is refused by the server and applied only after a second, explicit
// confirmation (force). Production versions are shown read-only.

import { useEffect, useState } from "preact/hooks";
import { ApiFailure, call, canWrite, del, enc, get } from "../api.ts";
import type { SchemaDef } from "../values.ts";
import { type Draft, EMPTY, fromDraft, toDraft } from "./schema-draft.ts";
import { FieldsSection, IndexesSection, PermissionsSection, UserSection } from "./schema-form.tsx";
import { Confirm, ErrorBox, Loading, useApp, useLoad } from "../ui.tsx";

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
        {writable && (
          <a class="button" href="#/schemas/new">
            + New schema
          </a>
        )}
      </div>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && !list.data} />
      <div style={{ display: "grid", gridTemplateColumns: "minmax(160px, 220px) 1fr", gap: "16px" }}>
        <nav aria-label="Schemas" class="stack">
          {(list.data ?? []).map((d) => (
            <a href={`#/schemas/${enc(d.name)}`} style={{ fontWeight: d.name === name ? 700 : 400 }}>
              {d.name}
              {d.user ? (
                <span class="badge" style={{ marginLeft: "6px" }}>
                  users
                </span>
              ) : null}
            </a>
          ))}
        </nav>
        <div>
          {!name && <p class="muted">Choose a schema, or create one.</p>}
          {name && list.data && !def && (
            <ErrorBox error={`There is no schema "${name}" in ${version ? `version ${version}` : "development"}.`} />
          )}
          {def && (
            <Editor
              key={`${version}/${name}`}
              original={def}
              isNew={name === "new"}
              writable={writable}
              all={list.data ?? []}
              onSaved={(n) => {
                list.reload();
                location.hash = `#/schemas/${enc(n)}`;
              }}
            />
          )}
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

function Editor({
  original,
  isNew,
  writable,
  all,
  onSaved,
}: {
  original: SchemaDef;
  isNew: boolean;
  writable: boolean;
  all: SchemaDef[];
  onSaved(name: string): void;
}) {
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
        <button
          type="button"
          class="small"
          onClick={() =>
            json === null
              ? setJson(JSON.stringify(fromDraft(draft), null, 2))
              : (() => {
                  const d = current();
                  if (d) {
                    setDraft(toDraft({ ...EMPTY, ...d }));
                    setJson(null);
                  }
                })()
          }
        >
          {json === null ? "Edit as JSON" : "Edit as form"}
        </button>
      </div>
      {json !== null ? (
        <textarea
          class="code"
          aria-label="Schema JSON"
          style={{ minHeight: "360px" }}
          value={json}
          readOnly={!writable}
          onInput={(e) => setJson(e.currentTarget.value)}
        />
      ) : (
        <fieldset disabled={!writable} style={{ border: 0, padding: 0, margin: 0 }} class="stack">
          {isNew && (
            <label class="field">
              <span>Name</span>
              <input
                aria-label="Schema name"
                placeholder="todo"
                value={draft.name}
                onInput={(e) => set((d) => void (d.name = e.currentTarget.value))}
              />
            </label>
          )}
          <FieldsSection draft={draft} others={others} set={set} />
          <PermissionsSection draft={draft} set={set} />
          <IndexesSection draft={draft} set={set} />
          <UserSection draft={draft} set={set} />
        </fieldset>
      )}
      <ErrorBox error={error} />
      {writable && (
        <div class="row">
          <button type="button" class="primary" onClick={review}>
            Review and save
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(toDraft(original));
              setJson(null);
              setError(null);
            }}
          >
            Discard changes
          </button>
          <span class="grow" />
          {!isNew && (
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete schema
            </button>
          )}
        </div>
      )}
      {plan && (
        <Confirm
          title={plan.destructive ? "This change destroys data" : "Migration plan"}
          confirm={plan.destructive ? "Apply anyway (force)" : plan.changes.length ? "Apply" : "Save"}
          danger={!!plan.destructive}
          onCancel={() => setPlan(null)}
          onConfirm={apply}
        >
          {plan.destructive ? (
            <div class="error">{plan.destructive}</div>
          ) : plan.changes.length ? (
            <ul data-testid="plan">
              {plan.changes.map((c) => (
                <li>{c}</li>
              ))}
            </ul>
          ) : (
            <p class="muted">No change to the data.</p>
          )}
        </Confirm>
      )}
      {deleting && (
        <Confirm
          title={`Delete schema "${original.name}" and all its objects?`}
          confirm="Delete"
          danger
          onCancel={() => setDeleting(false)}
          onConfirm={async () => {
            if (typed !== original.name) throw new Error(`Type "${original.name}" to confirm.`);
            await del(`/schemas/${enc(original.name)}`);
            setDeleting(false);
            app.toast(`Schema ${original.name} deleted`);
            onSaved("");
          }}
        >
          <p>Every object of the schema in development is deleted. Production keeps its data until a deploy removes the schema.</p>
          <input
            aria-label="Type the schema name"
            placeholder={original.name}
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </Confirm>
      )}
    </div>
  );
}
