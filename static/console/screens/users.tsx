// Users: the user schemas in the data browser (create, edit, delete), and one user's account: set a new
// password, sign it out everywhere, see whether its email is verified, see and reset its second factor (TOTP), see
// and remove its passkeys and linked social accounts.

import { useState } from "preact/hooks";
import { canWrite, del, enc, get, put } from "../api.ts";
import { Confirm, ErrorBox, Loading, attempt, formatTime, useApp, useLoad } from "../ui.tsx";
import { DataScreen } from "./data.tsx";
import { UserPasskeys } from "./user-passkeys.tsx";

interface Mfa {
  totp: "off" | "pending" | "on";
  recovery_codes_left: number;
}

const MFA_TEXT = { off: "off", pending: "enrolment pending (not confirmed)", on: "on" };

interface Link {
  provider: string;
  subject?: string;
  created?: string | number;
  [k: string]: unknown;
}

export function Users({ schema, userKey }: { schema?: string; userKey?: string }) {
  const [key, setKey] = useState(userKey ?? "");
  return (
    <div>
      <DataScreen schema={schema} route="users" only={(d) => !!d.user} />
      {schema && (
        <div class="panel" style={{ marginTop: "16px" }}>
          <h2 style={{ marginTop: 0 }}>Account</h2>
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              location.hash = `#/users/${enc(schema)}/${enc(key.trim())}`;
            }}
          >
            <input aria-label="User key" placeholder="username" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
            <button type="submit">Open</button>
          </form>
          {userKey && <Account key={`${schema}/${userKey}`} schema={schema} userKey={userKey} />}
        </div>
      )}
    </div>
  );
}

function Account({ schema, userKey }: { schema: string; userKey: string }) {
  const app = useApp();
  const writable = canWrite(app.me);
  const base = `/users/${app.env}/${enc(schema)}/${enc(userKey)}`;
  const links = useLoad(() => get<Link[]>(`${base}/social`), [base]);
  const mfa = useLoad(() => get<Mfa>(`${base}/mfa`), [base]);
  const email = useLoad(async () => {
    const def = await get<{ user?: { email?: string; verifyEmail?: boolean } }>(`/schemas/${enc(schema)}`);
    const u = def.user?.email ? await get<Record<string, unknown>>(`/data/${app.env}/${enc(schema)}/${enc(userKey)}`) : null;
    return u && def.user?.email
      ? { address: u[def.user.email] as string | undefined, verifies: !!def.user.verifyEmail, verified: u.emailverified === true }
      : null;
  }, [base]);
  const [password, setPassword] = useState("");
  const [confirmRevoke, setConfirmRevoke] = useState(false);
  const [confirmReset, setConfirmReset] = useState(false);
  return (
    <div class="stack" style={{ marginTop: "10px" }}>
      <h3>{userKey}</h3>
      {writable && (
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            if (await attempt(app, () => put(`${base}/password`, { password }), "Password set")) setPassword("");
          }}
        >
          <input
            type="password"
            aria-label="New password"
            placeholder="new password"
            autocomplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <button type="submit" disabled={!password}>
            Set password
          </button>
          <button type="button" class="danger" onClick={() => setConfirmRevoke(true)}>
            Sign out everywhere
          </button>
        </form>
      )}
      {email.data && (
        <p class="small" data-testid="email-state">
          Email {email.data.address ?? "(none)"}
          {email.data.verifies ? (email.data.verified ? " · verified" : " · not verified") : " · this schema does not verify emails"}
        </p>
      )}
      <h3>Second factor</h3>
      <ErrorBox error={mfa.error} />
      {mfa.data && (
        <div class="row">
          <span data-testid="mfa-state">
            TOTP {MFA_TEXT[mfa.data.totp]}
            {mfa.data.totp === "on" && `, ${mfa.data.recovery_codes_left} recovery code(s) left`}
          </span>
          {writable && mfa.data.totp !== "off" && (
            <button type="button" class="small danger" onClick={() => setConfirmReset(true)}>
              Reset second factor
            </button>
          )}
        </div>
      )}
      <UserPasskeys base={base} writable={writable} />
      <h3>Linked social accounts</h3>
      <ErrorBox error={links.error} />
      <Loading when={links.loading && !links.data} />
      {links.data?.length === 0 && <p class="muted">None.</p>}
      {links.data && links.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Provider</th>
              <th>Account</th>
              <th>Linked</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {links.data.map((l) => (
              <tr>
                <td>{l.provider}</td>
                <td>{String(l.subject ?? "")}</td>
                <td>{formatTime(l.created)}</td>
                {writable && (
                  <td>
                    <button
                      type="button"
                      class="small danger"
                      onClick={() =>
                        attempt(
                          app,
                          async () => {
                            await del(`${base}/social/${enc(l.provider)}`);
                            links.reload();
                          },
                          `Unlinked ${l.provider}`,
                        )
                      }
                    >
                      Unlink
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {confirmRevoke && (
        <Confirm
          title={`Sign ${userKey} out everywhere?`}
          confirm="Sign out"
          danger
          onCancel={() => setConfirmRevoke(false)}
          onConfirm={async () => {
            const r = await del<{ revoked: number }>(`${base}/sessions`);
            setConfirmRevoke(false);
            app.toast(`${r.revoked} session(s) ended`);
          }}
        >
          <p>Every access token and cookie session of this user stops working.</p>
        </Confirm>
      )}
      {confirmReset && (
        <Confirm
          title={`Reset ${userKey}'s second factor?`}
          confirm="Reset"
          danger
          onCancel={() => setConfirmReset(false)}
          onConfirm={async () => {
            await del(`${base}/mfa`);
            setConfirmReset(false);
            mfa.reload();
            app.toast("Second factor reset");
          }}
        >
          <p>TOTP and its recovery codes are removed: the user signs in with the password alone until enrolling again.</p>
        </Confirm>
      )}
    </div>
  );
}
