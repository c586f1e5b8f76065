// One user's passkeys on the Users screen: name, when each was registered and last used; editors remove one
// (it stops signing in at once). Reads /_admin/api/users/<env>/<schema>/<key>/passkeys.

import { useState } from "preact/hooks";
import { del, enc, get } from "../api.ts";
import { Confirm, ErrorBox, Loading, formatTime, useApp, useLoad } from "../ui.tsx";

interface Passkey {
  id: string;
  name: string;
  created: string;
  lastUsed: string | null;
}

/** `base` is the user's admin path (/users/<env>/<schema>/<key>). */
export function UserPasskeys({ base, writable }: { base: string; writable: boolean }) {
  const app = useApp();
  const keys = useLoad(() => get<Passkey[]>(`${base}/passkeys`), [base]);
  const [removing, setRemoving] = useState<Passkey | null>(null);
  return (
    <>
      <h3>Passkeys</h3>
      <ErrorBox error={keys.error} />
      <Loading when={keys.loading && !keys.data} />
      {keys.data?.length === 0 && <p class="muted">None.</p>}
      {keys.data && keys.data.length > 0 && (
        <table aria-label="Passkeys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Registered</th>
              <th>Last used</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr>
                <td title={k.id}>{k.name}</td>
                <td>{formatTime(k.created)}</td>
                <td>{k.lastUsed ? formatTime(k.lastUsed) : "never"}</td>
                {writable && (
                  <td>
                    <button type="button" class="small danger" onClick={() => setRemoving(k)}>
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {removing && (
        <Confirm
          title={`Remove the passkey "${removing.name}"?`}
          confirm="Remove"
          danger
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await del(`${base}/passkeys/${enc(removing.id)}`);
            setRemoving(null);
            keys.reload();
            app.toast(`Removed the passkey "${removing.name}"`);
          }}
        >
          <p>The user can no longer sign in with it; other passkeys and the password keep working.</p>
        </Confirm>
      )}
    </>
  );
}
