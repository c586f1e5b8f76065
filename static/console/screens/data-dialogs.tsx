// The data screen's forms: the editor of one grid cell (an input, a true/false/null select or a file picker by
// field type; Enter saves, Escape cancels, a refused value stays with the reason under it) and the dialog that
// creates an object (every field but the automatic ones; a refused create keeps the form as typed).

import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, describeError, post } from "../api.ts";
import { type FieldDef, type SchemaDef, parseInput, primaryKeyOf, uploadValue } from "../values.ts";
import { Dialog, ErrorBox, inputType } from "../ui.tsx";

/** A file as the value of a binary field. */
export function readFile(file: File): Promise<string> {
  return file.arrayBuffer().then((b) => uploadValue(file.type, file.name, new Uint8Array(b)));
}

interface EditorProps {
  field: FieldDef;
  text: string;
  error: string | null;
  onText(t: string): void;
  onSave(): void;
  onFile(f: File): void;
  onCancel(): void;
}

export function CellEditor({ field, text, error, onText, onSave, onFile, onCancel }: EditorProps) {
  const input = useRef<HTMLInputElement & HTMLSelectElement>(null);
  useEffect(() => input.current?.focus(), []);
  const keys = (e: KeyboardEvent) => {
    if (e.key === "Enter") {
      e.preventDefault();
      onSave();
    }
    if (e.key === "Escape") {
      e.preventDefault();
      onCancel();
    }
  };
  if (field.type === "binary") {
    return (
      <div class="row" onKeyDown={keys}>
        <input
          ref={input}
          type="file"
          aria-label="Upload a file"
          onChange={(e) => e.currentTarget.files?.[0] && onFile(e.currentTarget.files[0])}
        />
        <button type="button" class="small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    );
  }
  return (
    <div>
      {field.type === "boolean" ? (
        <select ref={input} aria-label="Cell value" value={text} onChange={(e) => onText(e.currentTarget.value)} onKeyDown={keys}>
          <option value="true">true</option>
          <option value="false">false</option>
          <option value="">null</option>
        </select>
      ) : (
        <input
          ref={input}
          aria-label="Cell value"
          {...inputType(field.type === "password" ? "password" : "text")}
          value={text}
          onInput={(e) => onText(e.currentTarget.value)}
          onKeyDown={keys}
          placeholder={field.type === "geopoint" ? "lat, lon" : field.type === "array" || field.many ? "a, b, c" : ""}
        />
      )}
      {error && (
        <div class="error small" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

interface CreateProps {
  def: SchemaDef;
  /** The schema's data path, /data/<env>/<schema>. */
  base: string;
  /** _version=<n> when production is shown, else empty. */
  versionParam: string;
  onClose(): void;
  onCreated(): void;
  route: string;
}

export function CreateDialog({ def, base, versionParam, onClose, onCreated, route }: CreateProps) {
  const pk = primaryKeyOf(def);
  const fields = Object.entries(def.fields).filter(([n]) => n !== pk);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [files, setFiles] = useState<Record<string, File>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = {};
    if (texts[pk]) body[pk] = texts[pk];
    for (const [name, f] of fields) {
      if (f.type === "binary") {
        if (files[name]) body[name] = await readFile(files[name]!);
        continue;
      }
      const text = texts[name];
      if (text === undefined || (text === "" && f.type !== "string")) continue;
      const p = parseInput(f, text);
      if (!p.ok) return setError(`${name}: ${p.error}`);
      body[name] = p.value;
    }
    setBusy(true);
    setError(null);
    try {
      await post(`${base}${versionParam ? `?${versionParam}` : ""}`, body);
      onCreated();
    } catch (err) {
      // The form keeps what was typed; the server's words say what to fix.
      setError(err instanceof ApiFailure ? `${err.status}: ${err.message}` : describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`New ${route === "users" ? "user" : "object"} in ${def.name}`} onClose={onClose}>
      <form onSubmit={submit} class="stack">
        <label class="field">
          <span>{pk}</span>
          <input
            name={pk}
            placeholder={def.user ? "required" : "automatic when empty"}
            value={texts[pk] ?? ""}
            onInput={(e) => setTexts({ ...texts, [pk]: e.currentTarget.value })}
          />
        </label>
        {fields.map(([name, f]) => (
          <label class="field">
            <span>
              {name}{" "}
              <span class="small">
                ({f.type}
                {f.items ? ` of ${f.items}` : ""}
                {f.schema ? ` → ${f.schema}${f.many ? "[]" : ""}` : ""})
              </span>
            </span>
            {f.type === "binary" ? (
              <input
                name={name}
                type="file"
                onChange={(e) => e.currentTarget.files?.[0] && setFiles({ ...files, [name]: e.currentTarget.files[0] })}
              />
            ) : f.type === "boolean" ? (
              <select name={name} value={texts[name] ?? ""} onChange={(e) => setTexts({ ...texts, [name]: e.currentTarget.value })}>
                <option value="">(not set)</option>
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            ) : (
              <input
                name={name}
                {...inputType(f.type === "password" ? "password" : "text")}
                value={texts[name] ?? ""}
                onInput={(e) => setTexts({ ...texts, [name]: e.currentTarget.value })}
                placeholder={f.type === "geopoint" ? "lat, lon" : f.type === "array" || f.many ? "a, b, c" : ""}
              />
            )}
          </label>
        ))}
        <ErrorBox error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button class="primary" type="submit" disabled={busy}>
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}
