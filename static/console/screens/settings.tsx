// Settings of the chosen environment, drawn from the server's own spec (GET /_admin/api/settings-spec): CORS, rate
// limits, SMTP with a test-mail button, files and S3, push credentials, social providers, custom-code limits and
// variables. Only changed settings are sent; secrets are write-only (shown as set or not set). A refused save
// keeps every edit on the form with the server's message.

import { useState } from "preact/hooks";
import { type Env, describeError, get, post, put } from "../api.ts";
import { ErrorBox, Loading, inputType, useApp, useLoad } from "../ui.tsx";

interface Leaf {
  type: "string" | "integer" | "boolean" | "string[]" | "string-map" | "oidc-map";
  secret?: boolean;
  url?: boolean;
  min?: number;
  max?: number;
  oneOf?: string[];
  default: Record<Env, unknown>;
}
type Spec = { [k: string]: Leaf | Spec };
type Doc = { [k: string]: unknown };

const isLeaf = (s: Leaf | Spec): s is Leaf => typeof (s as Leaf).type === "string" && "default" in s;
/** Long values (PEM keys, service accounts, certificates) get a text area and a file picker. */
const LONG = new Set(["keyP8", "p12", "ca", "serviceAccount"]);

function at(doc: unknown, path: string[]): unknown {
  let v = doc;
  for (const p of path) v = typeof v === "object" && v !== null ? (v as Doc)[p] : undefined;
  return v;
}

/** The patch of the edits: nested objects holding only changed leaves. */
function patchOf(edits: Map<string, unknown>): Doc {
  const out: Doc = {};
  for (const [path, v] of edits) {
    const parts = path.split(".");
    let o = out;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Doc;
    o[parts.at(-1)!] = v;
  }
  return out;
}

export function SettingsScreen() {
  const app = useApp();
  const spec = useLoad(() => get<Spec>("/settings-spec"), []);
  const doc = useLoad(() => get<Doc>(`/settings/${app.env}`), [app.env]);
  const [edits, setEdits] = useState<Map<string, unknown>>(new Map());
  const [texts, setTexts] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [mailTo, setMailTo] = useState(app.me.email);

  const edit = (path: string, value: unknown, text?: string) => {
    const next = new Map(edits);
    next.set(path, value);
    setEdits(next);
    if (text !== undefined) setTexts(new Map(texts).set(path, text));
  };

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await put(`/settings/${app.env}`, patchOf(edits));
      setEdits(new Map());
      setTexts(new Map());
      doc.reload();
      app.toast(`Settings of ${app.env} saved`);
    } catch (e) {
      setError(describeError(e));
    }
    setBusy(false);
  };

  const testMail = async () => {
    try {
      const r = await post<{ via: string }>("/mail/test", { env: app.env, to: mailTo });
      app.toast(r.via === "smtp" ? `Test mail sent to ${mailTo} through SMTP` : `No SMTP host: the test mail is in the outbox`);
    } catch (e) {
      app.toast(describeError(e), "error");
    }
  };

  const field = (path: string[], leaf: Leaf) => {
    const key = path.join(".");
    const stored = at(doc.data, path);
    const edited = edits.has(key);
    const value = edited ? edits.get(key) : stored;
    const name = path.at(-1)!;
    const label = (
      <span>
        {name}
        {edited && (
          <span class="badge warn" style={{ marginLeft: "6px" }}>
            changed
          </span>
        )}
      </span>
    );
    if (leaf.secret && leaf.type === "string") {
      const set = (stored as { set?: boolean } | undefined)?.set;
      const readFile = async (f: File) => {
        const bytes = new Uint8Array(await f.arrayBuffer());
        edit(key, name === "p12" ? btoa(String.fromCharCode(...bytes)) : new TextDecoder().decode(bytes));
      };
      return (
        <label class="field">
          {label}
          <span class="stack">
            <span class="row">
              <span class={set ? "secret-set" : "muted small"}>{set ? "set" : "not set"}</span>
              {LONG.has(name) && (
                <input
                  type="file"
                  aria-label={`${key} file`}
                  onChange={(e) => e.currentTarget.files?.[0] && readFile(e.currentTarget.files[0])}
                />
              )}
              {set && (
                <button class="small" type="button" onClick={() => edit(key, "")}>
                  Clear
                </button>
              )}
            </span>
            {LONG.has(name) ? (
              <textarea
                class="code"
                aria-label={key}
                placeholder="paste to replace (write-only)"
                value={edited ? String(value) : ""}
                onInput={(e) => edit(key, e.currentTarget.value)}
              />
            ) : (
              <input
                type="password"
                aria-label={key}
                autocomplete="off"
                placeholder="type to replace (write-only)"
                value={edited ? String(value) : ""}
                onInput={(e) => edit(key, e.currentTarget.value)}
              />
            )}
          </span>
        </label>
      );
    }
    switch (leaf.type) {
      case "boolean":
        return (
          <label class="field">
            {label}
            <input type="checkbox" aria-label={key} checked={value === true} onChange={(e) => edit(key, e.currentTarget.checked)} />
          </label>
        );
      case "integer":
        return (
          <label class="field">
            {label}
            <input
              type="number"
              aria-label={key}
              min={leaf.min}
              max={leaf.max}
              value={texts.get(key) ?? String(value ?? "")}
              onInput={(e) => {
                const t = e.currentTarget.value;
                edit(key, t === "" ? null : Number(t), t);
              }}
            />
          </label>
        );
      case "string[]":
        return (
          <label class="field">
            {label}
            <textarea
              aria-label={key}
              placeholder="one per line"
              value={texts.get(key) ?? (Array.isArray(value) ? value.join("\n") : "")}
              onInput={(e) => {
                const t = e.currentTarget.value;
                edit(
                  key,
                  t
                    .split("\n")
                    .map((s) => s.trim())
                    .filter(Boolean),
                  t,
                );
              }}
            />
          </label>
        );
      case "string-map": {
        const names = (stored as { keys?: string[] } | undefined)?.keys ?? [];
        return (
          <label class="field">
            {label}
            <span class="stack">
              <span class="muted small">
                {names.length ? `set: ${names.join(", ")}` : "none set"} · values are write-only; saving replaces the whole set
              </span>
              <textarea
                class="code"
                aria-label={key}
                placeholder={"NAME=value\nOTHER=value"}
                value={texts.get(key) ?? ""}
                onInput={(e) => {
                  const t = e.currentTarget.value;
                  const map: Record<string, string> = {};
                  for (const line of t.split("\n")) {
                    const i = line.indexOf("=");
                    if (i > 0) map[line.slice(0, i).trim()] = line.slice(i + 1);
                  }
                  edit(key, map, t);
                }}
              />
            </span>
          </label>
        );
      }
      case "oidc-map":
        return (
          <label class="field">
            {label}
            <textarea
              class="code"
              aria-label={key}
              placeholder={'{"apple": {"clientIds": ["com.example.app"]}}'}
              value={texts.get(key) ?? JSON.stringify(value ?? {}, null, 2)}
              onInput={(e) => {
                const t = e.currentTarget.value;
                try {
                  edit(key, JSON.parse(t), t);
                } catch {
                  setTexts(new Map(texts).set(key, t));
                }
              }}
            />
          </label>
        );
      default:
        if (leaf.oneOf) {
          return (
            <label class="field">
              {label}
              <select aria-label={key} value={String(value ?? "")} onChange={(e) => edit(key, e.currentTarget.value)}>
                {leaf.oneOf.map((o) => (
                  <option value={o}>{o}</option>
                ))}
              </select>
            </label>
          );
        }
        return (
          <label class="field">
            {label}
            {LONG.has(name) ? (
              <textarea class="code" aria-label={key} value={String(value ?? "")} onInput={(e) => edit(key, e.currentTarget.value)} />
            ) : (
              <input
                aria-label={key}
                {...inputType(leaf.url ? "url" : "text")}
                value={String(value ?? "")}
                onInput={(e) => edit(key, e.currentTarget.value)}
              />
            )}
          </label>
        );
    }
  };

  const section = (path: string[], s: Spec): preact.JSX.Element => (
    <fieldset
      class={path.length === 1 ? "panel" : ""}
      style={{ marginBottom: "12px", border: path.length === 1 ? undefined : 0, padding: path.length === 1 ? undefined : "0 0 0 12px" }}
    >
      <legend style={{ fontWeight: 600 }}>{path.join(" › ")}</legend>
      {Object.entries(s).map(([k, v]) => (isLeaf(v) ? field([...path, k], v) : section([...path, k], v)))}
      {path.length === 1 && path[0] === "smtp" && (
        <div class="row" style={{ marginTop: "8px" }}>
          <input type="email" aria-label="Test mail address" value={mailTo} onInput={(e) => setMailTo(e.currentTarget.value)} />
          <button type="button" onClick={testMail} disabled={edits.size > 0} title={edits.size ? "Save first" : ""}>
            Send test mail
          </button>
        </div>
      )}
    </fieldset>
  );

  return (
    <div>
      <div class="topbar">
        <h1 style={{ margin: 0 }}>Settings · {app.env}</h1>
        <span class="grow" />
        <button
          type="button"
          onClick={() => {
            setEdits(new Map());
            setTexts(new Map());
            setError(null);
          }}
          disabled={!edits.size}
        >
          Discard
        </button>
        <button type="button" class="primary" onClick={save} disabled={!edits.size || busy}>
          Save {edits.size ? `(${edits.size})` : ""}
        </button>
      </div>
      <ErrorBox error={spec.error ?? doc.error} />
      <ErrorBox error={error} />
      <Loading when={(spec.loading || doc.loading) && !(spec.data && doc.data)} />
      {spec.data && doc.data && Object.entries(spec.data).map(([k, v]) => (isLeaf(v) ? field([k], v) : section([k], v)))}
    </div>
  );
}
