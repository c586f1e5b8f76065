// Custom code: upload development's module (JavaScript or TypeScript; compile errors come back with their line),
// the methods it exports, its source per version, a test call of any method, and the log of its log service.

import { useState } from "preact/hooks";
import { ApiFailure, call, canWrite, describeError, get, post } from "../api.ts";
import { ErrorBox, Loading, formatTime, useApp, useLoad } from "../ui.tsx";

interface MethodInfo {
  name: string;
  verbs?: string[];
  params?: string[];
  [k: string]: unknown;
}

interface CodeInfo {
  source: string;
  methods: (MethodInfo | string)[];
  updated?: number | string;
}

interface LogLine {
  id: number;
  level: string;
  message: string;
  details?: unknown;
  created: number;
}

interface CallResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

const nameOf = (m: MethodInfo | string) => (typeof m === "string" ? m : m.name);

export function Code() {
  const app = useApp();
  const writable = canWrite(app.me);
  const code = useLoad(
    () =>
      call<CodeInfo | { error: string }>("GET", "/code", { accept: [404] }).then((a) => (a.status === 404 ? null : (a.data as CodeInfo))),
    [],
  );
  const logs = useLoad(() => get<LogLine[]>(`/logs?source=code&env=${app.env}&limit=100`), [app.env]);
  const [source, setSource] = useState<string | null>(null);
  const [lang, setLang] = useState<"auto" | "js" | "ts">("auto");
  const [error, setError] = useState<string | null>(null);
  const [method, setMethod] = useState("");
  const [verb, setVerb] = useState("POST");
  const [params, setParams] = useState("");
  const [body, setBody] = useState("{}");
  const [result, setResult] = useState<CallResult | null>(null);
  const [callError, setCallError] = useState<string | null>(null);

  const upload = async () => {
    setError(null);
    try {
      const a = await call<CodeInfo>("PUT", `/code?lang=${lang}`, {
        text: { body: source ?? code.data?.source ?? "", type: lang === "ts" ? "text/typescript" : "application/javascript" },
      });
      app.toast(`Uploaded: ${(a.data.methods ?? []).map(nameOf).join(", ") || "no methods"}`);
      setSource(null);
      code.reload();
    } catch (e) {
      const line =
        e instanceof ApiFailure && typeof (e.body as { line?: unknown })?.line === "number"
          ? ` (line ${(e.body as { line: number }).line})`
          : "";
      setError(describeError(e) + line);
    }
  };

  const test = async (e: Event) => {
    e.preventDefault();
    setCallError(null);
    setResult(null);
    const p: Record<string, string> = {};
    for (const pair of params.split("&").filter(Boolean)) {
      const [k, ...v] = pair.split("=");
      p[decodeURIComponent(k!)] = decodeURIComponent(v.join("="));
    }
    try {
      setResult(
        await post<CallResult>("/code/call", {
          env: app.env,
          method,
          verb,
          params: p,
          ...(verb === "POST" || verb === "PUT" ? { body } : {}),
        }),
      );
      logs.reload();
    } catch (err) {
      setCallError(describeError(err));
    }
  };

  const methods = (code.data?.methods ?? []).map(nameOf);
  return (
    <div>
      <h1>Custom code</h1>
      <p class="muted">
        One ES module exporting <code>methods</code>, an array of <code>{"{name, params, execute(request)}"}</code>; each answers at{" "}
        <code>/&lt;name&gt;</code>. Deploy copies it into a production version.
      </p>
      <ErrorBox error={code.error} />
      <Loading when={code.loading && code.data === undefined} />
      {code.data === null && <p class="muted">Development has no custom code yet.</p>}
      {methods.length > 0 && (
        <p>
          Methods:{" "}
          {methods.map((m) => (
            <code style={{ marginRight: "8px" }}>{m}</code>
          ))}
          {code.data?.updated !== undefined && <span class="muted small"> · updated {formatTime(code.data.updated)}</span>}
        </p>
      )}
      <div class="stack">
        <textarea
          class="code"
          aria-label="Custom code source"
          style={{ minHeight: "260px" }}
          readOnly={!writable}
          placeholder={
            'export const methods = [\n  { name: "hello", params: ["who"], execute(req) { return { body: { hi: req.params.who } }; } },\n];'
          }
          value={source ?? code.data?.source ?? ""}
          onInput={(e) => setSource(e.currentTarget.value)}
        />
        {writable && (
          <div class="row">
            <select aria-label="Language" value={lang} onChange={(e) => setLang(e.currentTarget.value as typeof lang)}>
              <option value="auto">auto</option>
              <option value="js">JavaScript</option>
              <option value="ts">TypeScript</option>
            </select>
            <input
              type="file"
              aria-label="Code file"
              accept=".js,.mjs,.ts"
              onChange={async (e) => {
                const f = e.currentTarget.files?.[0];
                if (f) {
                  setSource(await f.text());
                  if (f.name.endsWith(".ts")) setLang("ts");
                }
              }}
            />
            <button type="button" class="primary" onClick={upload} disabled={source === null}>
              Upload
            </button>
            {source !== null && (
              <button
                type="button"
                onClick={() => {
                  setSource(null);
                  setError(null);
                }}
              >
                Discard
              </button>
            )}
          </div>
        )}
        <ErrorBox error={error} />
      </div>
      <h2>Test a call · {app.env}</h2>
      <form class="panel stack" onSubmit={test}>
        <div class="row">
          <select aria-label="Verb" value={verb} onChange={(e) => setVerb(e.currentTarget.value)}>
            {["GET", "POST", "PUT", "DELETE"].map((v) => (
              <option value={v}>{v}</option>
            ))}
          </select>
          <input
            aria-label="Method"
            list="method-names"
            placeholder="method"
            value={method}
            onInput={(e) => setMethod(e.currentTarget.value)}
          />
          <datalist id="method-names">
            {methods.map((m) => (
              <option value={m} />
            ))}
          </datalist>
          <input
            aria-label="Parameters"
            placeholder="name=value&other=value"
            style={{ flex: 1 }}
            value={params}
            onInput={(e) => setParams(e.currentTarget.value)}
          />
          <button class="primary" type="submit" disabled={!method || !writable} title={writable ? "" : "viewers cannot call methods"}>
            Call
          </button>
        </div>
        {(verb === "POST" || verb === "PUT") && (
          <textarea class="code" aria-label="Request body" value={body} onInput={(e) => setBody(e.currentTarget.value)} />
        )}
        <ErrorBox error={callError} />
        {result && (
          <div data-testid="call-result">
            <div class="row">
              <span class={`badge ${result.status < 400 ? "ok" : "bad"}`}>{result.status}</span>
              <span class="muted small">{result.ms} ms</span>
            </div>
            <pre>{result.body}</pre>
          </div>
        )}
      </form>
      <div class="topbar" style={{ marginTop: "16px" }}>
        <h2 style={{ margin: 0 }}>Log · {app.env}</h2>
        <button type="button" class="small" onClick={logs.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={logs.error} />
      {logs.data?.length === 0 && <p class="muted">No log lines.</p>}
      {logs.data && logs.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Level</th>
              <th>Message</th>
            </tr>
          </thead>
          <tbody>
            {logs.data.map((l) => (
              <tr>
                <td class="small">{formatTime(l.created)}</td>
                <td>
                  <span class={`badge ${l.level === "error" ? "bad" : l.level === "warn" ? "warn" : ""}`}>{l.level}</span>
                </td>
                <td class="small">
                  {l.message}
                  {l.details ? <code class="muted"> {typeof l.details === "string" ? l.details : JSON.stringify(l.details)}</code> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
