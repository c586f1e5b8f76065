// The console's shell: sign-in, the sidebar of screens (those a role cannot use are not offered; the API refuses
// them anyway), the environment switch, the theme (follows the system until picked) and hash routing
// (#/data/todo), so every screen has an address and reloads where it was.

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type Env, type Me, call, canWrite, get, hasToken, isOwner, onSignedOut, post, setToken } from "./api.ts";
import { AppContext, type AppState, ErrorBox, Toast } from "./ui.tsx";
import { Overview } from "./screens/overview.tsx";
import { Schemas } from "./screens/schemas.tsx";
import { DataScreen } from "./screens/data.tsx";
import { Users } from "./screens/users.tsx";
import { Roles } from "./screens/roles.tsx";
import { Deploy } from "./screens/deploy.tsx";
import { Keys } from "./screens/keys.tsx";
import { SettingsScreen } from "./screens/settings.tsx";
import { Outbox } from "./screens/outbox.tsx";
import { Push } from "./screens/push.tsx";
import { Code } from "./screens/code.tsx";
import { Jobs } from "./screens/jobs.tsx";
import { Hooks } from "./screens/hooks.tsx";
import { Admins } from "./screens/admins.tsx";
import { Backups } from "./screens/backups.tsx";

type Theme = "system" | "light" | "dark";
const THEME_KEY = "burrow.console.theme";
const ENV_KEY = "burrow.console.env";

const systemDark = matchMedia("(prefers-color-scheme: dark)");

/** The page's theme: the picked one, or the system's while "system" is picked (followed as it changes). */
function applyTheme(t: Theme) {
  document.documentElement.dataset.theme = t === "system" ? (systemDark.matches ? "dark" : "light") : t;
}
systemDark.addEventListener("change", () => applyTheme((localStorage.getItem(THEME_KEY) as Theme | null) ?? "system"));

function useHashRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const on = () => setParts(read());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return parts;
}

interface NavItem {
  path: string;
  label: string;
  owner?: boolean;
  /** Editors and owners only (the outbox holds users' temporary passwords). */
  editor?: boolean;
}

const NAV: NavItem[] = [
  { path: "", label: "Overview" },
  { path: "schemas", label: "Schemas" },
  { path: "data", label: "Data" },
  { path: "users", label: "Users" },
  { path: "roles", label: "Roles" },
  { path: "deploy", label: "Deploy" },
  { path: "code", label: "Custom code" },
  { path: "hooks", label: "Hooks" },
  { path: "jobs", label: "Jobs" },
  { path: "push", label: "Push" },
  { path: "outbox", label: "Outbox", editor: true },
  { path: "backups", label: "Backups" },
  { path: "keys", label: "Keys", owner: true },
  { path: "settings", label: "Settings", owner: true },
  { path: "admins", label: "Admins", owner: true },
];

function SignIn({ onIn }: { onIn(me: Me): void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await post<{ token: string }>("/login", { email, password });
      setToken(session.token);
      onIn(await get<Me>("/me"));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };
  return (
    <div class="signin">
      <form class="panel" onSubmit={submit} aria-label="Sign in">
        <h1>Burrow console</h1>
        <input
          type="email"
          name="email"
          placeholder="Email"
          autocomplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <input
          type="password"
          name="password"
          placeholder="Password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <ErrorBox error={error} />
        <button class="primary" type="submit" disabled={busy}>
          Sign in
        </button>
        <p class="muted small">
          Admins are created with <code>burrow admin create</code> or by an owner under Admins.
        </p>
      </form>
    </div>
  );
}

function Screen({ parts }: { parts: string[] }) {
  const [head, ...rest] = parts;
  switch (head ?? "") {
    case "":
      return <Overview />;
    case "schemas":
      return <Schemas name={rest[0]} />;
    case "data":
      return <DataScreen schema={rest[0]} />;
    case "users":
      return <Users schema={rest[0]} userKey={rest[1]} />;
    case "roles":
      return <Roles />;
    case "deploy":
      return <Deploy />;
    case "code":
      return <Code />;
    case "hooks":
      return <Hooks />;
    case "jobs":
      return <Jobs />;
    case "push":
      return <Push />;
    case "outbox":
      return <Outbox />;
    case "keys":
      return <Keys />;
    case "settings":
      return <SettingsScreen />;
    case "admins":
      return <Admins />;
    case "backups":
      return <Backups />;
    default:
      return <ErrorBox error={`There is no screen "${head}".`} />;
  }
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(hasToken());
  const [env, setEnvState] = useState<Env>(sessionStorage.getItem(ENV_KEY) === "production" ? "production" : "development");
  const [theme, setTheme] = useState<Theme>((localStorage.getItem(THEME_KEY) as Theme | null) ?? "system");
  const [toast, setToast] = useState<{ message: string; kind: "ok" | "error" } | null>(null);
  const parts = useHashRoute();

  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => onSignedOut(() => setMe(null)), []);
  useEffect(() => {
    if (!hasToken()) return;
    get<Me>("/me")
      .then(setMe, () => setToken(null))
      .finally(() => setChecking(false));
  }, []);

  if (checking)
    return (
      <p class="muted" style={{ padding: "20px" }}>
        loading…
      </p>
    );
  if (!me) return <SignIn onIn={setMe} />;

  const state: AppState = {
    me,
    env,
    setEnv: (e) => {
      sessionStorage.setItem(ENV_KEY, e);
      setEnvState(e);
    },
    toast: (message, kind = "ok") => setToast({ message, kind }),
  };
  const pickTheme = (t: Theme) => {
    localStorage.setItem(THEME_KEY, t);
    applyTheme(t);
    setTheme(t);
  };
  const signOut = async () => {
    await call("POST", "/logout", { accept: [401] }).catch(() => undefined);
    setToken(null);
    setMe(null);
  };
  const current = parts[0] ?? "";
  return (
    <AppContext.Provider value={state}>
      <div class="shell">
        <nav class="side" aria-label="Screens">
          <div class="brand">Burrow</div>
          {NAV.filter((n) => (!n.owner || isOwner(me)) && (!n.editor || canWrite(me))).map((n) => (
            <a href={`#/${n.path}`} class={current === n.path ? "active" : ""} aria-current={current === n.path ? "page" : undefined}>
              {n.label}
            </a>
          ))}
          <div class="foot">
            <label class="row small">
              Environment
              <select aria-label="Environment" value={env} onChange={(e) => state.setEnv(e.currentTarget.value as Env)}>
                <option value="development">development</option>
                <option value="production">production</option>
              </select>
            </label>
            <label class="row small">
              Theme
              <select aria-label="Theme" value={theme} onChange={(e) => pickTheme(e.currentTarget.value as Theme)}>
                <option value="system">system</option>
                <option value="light">light</option>
                <option value="dark">dark</option>
              </select>
            </label>
            <span class="hide-narrow" title={me.email}>
              {me.email} · {me.role}
            </span>
            <button type="button" class="small" onClick={signOut}>
              Sign out
            </button>
          </div>
        </nav>
        <main class="main">
          <Screen parts={parts} />
        </main>
      </div>
      {toast && <Toast message={toast.message} kind={toast.kind} onDone={() => setToast(null)} />}
    </AppContext.Provider>
  );
}

applyTheme((localStorage.getItem(THEME_KEY) as Theme | null) ?? "system");
render(<App />, document.getElementById("app")!);
