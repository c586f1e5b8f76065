// Keys: both environments' public and private API keys with copy buttons (owners only; GET /_admin/api/keys).

import { get } from "../api.ts";
import { CopyButton, ErrorBox, Loading, useLoad } from "../ui.tsx";

type KeySet = Record<"development" | "production", { publicKey: string; privateKey: string }>;

export function Keys() {
  const keys = useLoad(() => get<KeySet>("/keys"), []);
  return (
    <div>
      <h1>Keys</h1>
      <p class="muted">
        Apps send the public key; the private key signs server-side requests (OAuth 1.0) and passes every permission but "none". Keep it out
        of apps.
      </p>
      <ErrorBox error={keys.error} />
      <Loading when={keys.loading && !keys.data} />
      {keys.data &&
        (["development", "production"] as const).map((env) => (
          <div class="panel" style={{ marginBottom: "12px" }}>
            <h2 style={{ marginTop: 0 }}>{env}</h2>
            {(["publicKey", "privateKey"] as const).map((k) => (
              <div class="row" style={{ padding: "4px 0" }}>
                <span class="muted" style={{ width: "90px" }}>
                  {k === "publicKey" ? "Public" : "Private"}
                </span>
                <code data-key={`${env}-${k}`} style={{ wordBreak: "break-all", flex: 1 }}>
                  {keys.data![env][k]}
                </code>
                <CopyButton text={keys.data![env][k]} />
              </div>
            ))}
          </div>
        ))}
    </div>
  );
}
