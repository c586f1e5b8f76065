// The schema editor's form sections: the fields table, permissions per operation, indexes and the user block.
// Each edits the draft through `set`, which applies a change to a copy (the Editor in schemas.tsx holds the draft).

import { clean, type Draft, FIELD_TYPES, ITEM_TYPES, OPERATIONS, PERM_KEYS, WORDS } from "./schema-draft.ts";
import type { FieldDef } from "../values.ts";

type Edit = (f: (d: Draft) => void) => void;

export function FieldsSection({ draft, others, set }: { draft: Draft; others: string[]; set: Edit }) {
  return (
    <>
      <h3>Fields</h3>
      <table class="fields-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Type</th>
            <th>Of</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {draft.fields.map((f, i) => (
            <tr>
              <td>
                <input
                  aria-label={`Field ${i + 1} name`}
                  value={f.name}
                  onInput={(e) => set((d) => void (d.fields[i]!.name = e.currentTarget.value))}
                />
              </td>
              <td>
                <select
                  aria-label={`Field ${i + 1} type`}
                  value={f.def.type}
                  onChange={(e) =>
                    set((d) => void (d.fields[i]!.def = clean({ ...d.fields[i]!.def, type: e.currentTarget.value as FieldDef["type"] })))
                  }
                >
                  {FIELD_TYPES.map((t) => (
                    <option value={t}>{t}</option>
                  ))}
                </select>
              </td>
              <td>
                {f.def.type === "array" && (
                  <select
                    aria-label={`Field ${i + 1} items`}
                    value={f.def.items}
                    onChange={(e) => set((d) => void (d.fields[i]!.def.items = e.currentTarget.value as FieldDef["items"]))}
                  >
                    {ITEM_TYPES.map((t) => (
                      <option value={t}>{t}</option>
                    ))}
                  </select>
                )}
                {f.def.type === "relationship" && (
                  <div class="row">
                    <select
                      aria-label={`Field ${i + 1} related schema`}
                      value={f.def.schema}
                      onChange={(e) => set((d) => void (d.fields[i]!.def.schema = e.currentTarget.value))}
                    >
                      <option value="">schema…</option>
                      {[...new Set([...others, draft.name])].filter(Boolean).map((n) => (
                        <option value={n}>{n}</option>
                      ))}
                    </select>
                    <label class="row small">
                      <input
                        type="checkbox"
                        checked={!!f.def.many}
                        onChange={(e) => set((d) => void (d.fields[i]!.def.many = e.currentTarget.checked))}
                      />{" "}
                      many
                    </label>
                  </div>
                )}
              </td>
              <td>
                <button
                  type="button"
                  class="small"
                  aria-label={`Remove field ${f.name}`}
                  onClick={() => set((d) => void d.fields.splice(i, 1))}
                >
                  ✕
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div>
        <button type="button" class="small" onClick={() => set((d) => void d.fields.push({ name: "", def: { type: "string" } }))}>
          + Field
        </button>
      </div>
    </>
  );
}

export function PermissionsSection({ draft, set }: { draft: Draft; set: Edit }) {
  return (
    <>
      <h3>Permissions</h3>
      {OPERATIONS.map((op) => (
        <PermissionRow op={op} value={draft.permissions[op]} onChange={(v) => set((d) => void (d.permissions[op] = v))} />
      ))}
    </>
  );
}

export function IndexesSection({ draft, set }: { draft: Draft; set: Edit }) {
  return (
    <>
      <h3>Indexes</h3>
      {draft.indexes.map((ix, i) => (
        <div class="row">
          <input
            aria-label={`Index ${i + 1}`}
            placeholder="field, other_field"
            value={ix}
            onInput={(e) => set((d) => void (d.indexes[i] = e.currentTarget.value))}
          />
          <button type="button" class="small" aria-label={`Remove index ${i + 1}`} onClick={() => set((d) => void d.indexes.splice(i, 1))}>
            ✕
          </button>
        </div>
      ))}
      <div>
        <button type="button" class="small" onClick={() => set((d) => void d.indexes.push(""))}>
          + Index
        </button>
      </div>
    </>
  );
}

export function UserSection({ draft, set }: { draft: Draft; set: Edit }) {
  return (
    <>
      <h3>
        <label class="row">
          <input
            type="checkbox"
            checked={!!draft.user}
            onChange={(e) =>
              set((d) => {
                d.user = e.currentTarget.checked ? { key: "username", password: "password" } : null;
                if (d.user && !d.fields.some((f) => f.name === "password")) d.fields.push({ name: "password", def: { type: "password" } });
              })
            }
          />
          User schema (accounts sign in through it)
        </label>
      </h3>
      {draft.user && (
        <div>
          {(["key", "password", "email"] as const).map((k) => (
            <label class="field">
              <span>{k === "key" ? "Key field (username)" : k === "password" ? "Password field" : "Email field"}</span>
              <input
                aria-label={`User ${k}`}
                value={draft.user![k] ?? ""}
                onInput={(e) =>
                  set((d) => {
                    const v = e.currentTarget.value;
                    if (k === "email" && v === "") delete d.user!.email;
                    else d.user![k] = v;
                  })
                }
              />
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
    </>
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
        <select
          aria-label={`Permission ${op}`}
          value={kind}
          onChange={(e) => {
            const k = e.currentTarget.value;
            onChange((PERM_KEYS as readonly string[]).includes(k) ? { [k]: arg } : k);
          }}
        >
          {WORDS.map((w) => (
            <option value={w}>{w}</option>
          ))}
          {PERM_KEYS.map((k) => (
            <option value={k}>{k}…</option>
          ))}
        </select>
        {objKey && (
          <input
            aria-label={`Permission ${op} ${objKey}`}
            placeholder={objKey === "role" ? "role name" : "relationship field"}
            value={arg}
            onInput={(e) => onChange({ [objKey]: e.currentTarget.value })}
          />
        )}
      </span>
    </label>
  );
}
