// Roles: the aclrole objects behind {"role": "<name>"} permissions. Each role is an object keyed by its name whose
// `users` lists its members; here they are created, their members edited, and deleted.

import { useState } from "preact/hooks";
import { canWrite, del, enc, get, post, put } from "../api.ts";
import { Confirm, ErrorBox, Loading, attempt, useApp, useLoad } from "../ui.tsx";

interface Role {
  aclrole_id: string;
  users: string[] | null;
}

export function Roles() {
  const app = useApp();
  const writable = canWrite(app.me);
  const base = `/data/${app.env}/aclrole`;
  const roles = useLoad(() => get<Role[]>(base, { range: "objects=0-499" }), [base]);
  const [name, setName] = useState("");
  const [members, setMembers] = useState("");
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [deleting, setDeleting] = useState<string | null>(null);
  const list = (s: string) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);

  return (
    <div>
      <h1>Roles</h1>
      <p class="muted">
        A permission <code>{'{"role": "editors"}'}</code> lets members of the role <code>editors</code> do that operation. Members are keys
        of the user schema.
      </p>
      <ErrorBox error={roles.error} />
      <Loading when={roles.loading && !roles.data} />
      {roles.data && (
        <table>
          <thead>
            <tr>
              <th>Role</th>
              <th>Members</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {roles.data.map((r) => {
              const current = (r.users ?? []).join(", ");
              const text = edits[r.aclrole_id] ?? current;
              return (
                <tr>
                  <td>{r.aclrole_id}</td>
                  <td>
                    {writable ? (
                      <input
                        aria-label={`Members of ${r.aclrole_id}`}
                        style={{ width: "100%" }}
                        value={text}
                        onInput={(e) => setEdits({ ...edits, [r.aclrole_id]: e.currentTarget.value })}
                      />
                    ) : (
                      current || <span class="muted">none</span>
                    )}
                  </td>
                  {writable && (
                    <td class="row">
                      <button
                        type="button"
                        class="small"
                        disabled={text === current}
                        onClick={() =>
                          attempt(
                            app,
                            async () => {
                              await put(`${base}/${enc(r.aclrole_id)}`, { users: list(text) });
                              const { [r.aclrole_id]: _, ...rest } = edits;
                              setEdits(rest);
                              roles.reload();
                            },
                            `Saved ${r.aclrole_id}`,
                          )
                        }
                      >
                        Save
                      </button>
                      <button type="button" class="small danger" onClick={() => setDeleting(r.aclrole_id)}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {roles.data?.length === 0 && <p class="muted">No roles in {app.env}.</p>}
      {writable && (
        <form
          class="row panel"
          style={{ marginTop: "14px" }}
          onSubmit={async (e) => {
            e.preventDefault();
            if (await attempt(app, () => post(base, { aclrole_id: name.trim(), users: list(members) }), `Role ${name.trim()} created`)) {
              setName("");
              setMembers("");
              roles.reload();
            }
          }}
        >
          <input aria-label="Role name" placeholder="role name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <input
            aria-label="Role members"
            placeholder="members: alice, bob"
            style={{ flex: 1 }}
            value={members}
            onInput={(e) => setMembers(e.currentTarget.value)}
          />
          <button class="primary" type="submit">
            Add role
          </button>
        </form>
      )}
      {deleting && (
        <Confirm
          title={`Delete role "${deleting}"?`}
          confirm="Delete"
          danger
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            await del(`${base}/${enc(deleting)}`);
            setDeleting(null);
            roles.reload();
          }}
        >
          <p>Permissions naming this role will then let nobody through.</p>
        </Confirm>
      )}
    </div>
  );
}
