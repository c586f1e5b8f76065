// Admins (owners only): who may use the console and with which role. Owners do everything; editors everything
// but admins, keys and settings; viewers only read. The server refuses removing or demoting the last owner.

import { useState } from "preact/hooks";
import { type Role, del, enc, get, post, put } from "../api.ts";
import { Confirm, ErrorBox, Loading, attempt, formatTime, useApp, useLoad } from "../ui.tsx";

interface Admin {
  id: string;
  email: string;
  role: Role;
  created: string;
  updated: string;
}

const ROLES: Role[] = ["owner", "editor", "viewer"];

export function Admins() {
  const app = useApp();
  const admins = useLoad(() => get<Admin[]>("/admins"), []);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [removing, setRemoving] = useState<Admin | null>(null);
  return (
    <div>
      <h1>Admins</h1>
      <ErrorBox error={admins.error} />
      <Loading when={admins.loading && !admins.data} />
      {admins.data && (
        <table>
          <thead>
            <tr>
              <th>Email</th>
              <th>Role</th>
              <th>Since</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {admins.data.map((a) => (
              <tr>
                <td>
                  {a.email}
                  {a.id === app.me.id && (
                    <span class="badge" style={{ marginLeft: "6px" }}>
                      you
                    </span>
                  )}
                </td>
                <td>
                  <select
                    aria-label={`Role of ${a.email}`}
                    value={a.role}
                    onChange={(e) => {
                      const next = e.currentTarget.value;
                      attempt(app, () => put(`/admins/${enc(a.id)}`, { role: next }), `${a.email} is now ${next}`).then(admins.reload);
                    }}
                  >
                    {ROLES.map((r) => (
                      <option value={r}>{r}</option>
                    ))}
                  </select>
                </td>
                <td class="small">{formatTime(a.created)}</td>
                <td>
                  <button type="button" class="small danger" onClick={() => setRemoving(a)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        class="row panel"
        style={{ marginTop: "14px" }}
        onSubmit={async (e) => {
          e.preventDefault();
          if (await attempt(app, () => post("/admins", { email, password, role }), `${email} added as ${role}`)) {
            setEmail("");
            setPassword("");
            admins.reload();
          }
        }}
      >
        <input
          type="email"
          aria-label="New admin email"
          placeholder="email"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <input
          type="password"
          aria-label="New admin password"
          placeholder="password (8+ characters)"
          autocomplete="new-password"
          required
          minLength={8}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <select aria-label="New admin role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map((r) => (
            <option value={r}>{r}</option>
          ))}
        </select>
        <button class="primary" type="submit">
          Add admin
        </button>
      </form>
      {removing && (
        <Confirm
          title={`Remove ${removing.email}?`}
          confirm="Remove"
          danger
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await del(`/admins/${enc(removing.id)}`);
            setRemoving(null);
            admins.reload();
          }}
        >
          <p>Their sessions end at once.</p>
        </Confirm>
      )}
    </div>
  );
}
