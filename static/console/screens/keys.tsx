// Keys: both environments' public and private API keys with copy buttons (owners only; GET /_admin/api/keys), and
// for each environment the lines that connect an app to it with the client the server serves (/_sdk/burrow.js).

import { get } from "../api.ts";
import { CopyButton, ErrorBox, Loading, useLoad } from "../ui.tsx";

type KeySet = Record<"development" | "production", { publicKey: string; privateKey: string }>;

/** The start of an app on this server and environment (production: its newest version). */
function snippet(env: "development" | "production", publicKey: string): string {
  const url = location.origin;
  return [
    `import { connect } from "${url}/_sdk/burrow.js";`,
    `const b = connect({ url: "${url}", publicKey: "${publicKey}"${env === "development" ? ", version: 0" : ""} });`,
    `// types: ${url}/_sdk/types.d.ts?version=${env === "development" ? "0" : "<N>"}`,
  ].join("\n");
}

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
            <div class="row" style={{ padding: "4px 0", alignItems: "flex-start" }}>
              <span class="muted" style={{ width: "90px" }}>
                App
              </span>
              <pre data-testid={`snippet-${env}`} style={{ flex: 1, margin: 0, whiteSpace: "pre-wrap" }}>
                {snippet(env, keys.data![env].publicKey)}
              </pre>
              <CopyButton text={snippet(env, keys.data![env].publicKey)} />
            </div>
          </div>
        ))}
    </div>
  );
}
