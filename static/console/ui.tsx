// Small shared pieces of the console: loading a resource with its error, an error box that shows the server's
// words, a confirmation dialog, a copy button, a toast, and the app-wide context (who is signed in, which
// environment is shown).

import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import { type Env, type Me, describeError } from "./api.ts";

export interface AppState {
  me: Me;
  env: Env;
  setEnv(env: Env): void;
  toast(message: string, kind?: "ok" | "error"): void;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const s = useContext(AppContext);
  if (!s) throw new Error("the console's context is missing");
  return s;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Load something when `deps` change; the newest call wins when answers arrive out of order. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const seq = useRef(0);
  const run = useCallback(() => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => n === seq.current && setState({ data, error: null, loading: false }),
      (e) => n === seq.current && setState((s) => ({ data: s.data, error: describeError(e), loading: false })),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(run, [run]);
  return { ...state, reload: run };
}

export function ErrorBox({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      {error}
    </div>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? <span class="muted small">loading…</span> : null;
}

interface ConfirmProps {
  title: string;
  children?: ComponentChildren;
  confirm: string;
  danger?: boolean;
  onConfirm(): void | Promise<void>;
  onCancel(): void;
}

/** A modal question; Escape cancels, the confirm button has focus. Errors of onConfirm are shown inside. */
export function Confirm({ title, children, confirm, danger, onConfirm, onCancel }: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => button.current?.focus(), []);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };
  return (
    <div class="backdrop" onKeyDown={(e) => e.key === "Escape" && onCancel()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-label={title}>
        <h2>{title}</h2>
        {children}
        <ErrorBox error={error} />
        <div class="actions">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" ref={button} class={danger ? "danger" : "primary"} disabled={busy} onClick={go}>
            {confirm}
          </button>
        </div>
      </div>
    </div>
  );
}

export function Dialog({ title, children, onClose }: { title: string; children: ComponentChildren; onClose(): void }) {
  return (
    <div class="backdrop" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-label={title}>
        <div class="row">
          <h2 style={{ flex: 1 }}>{title}</h2>
          <button type="button" class="small" onClick={onClose} aria-label="Close">
            ✕
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (no permission, plain http): select a hidden field instead.
      const ta = document.createElement("textarea");
      ta.value = text;
      document.body.append(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1200);
  };
  return (
    <button type="button" class="small" onClick={copy}>
      {done ? "Copied" : label}
    </button>
  );
}

export function Toast({ message, kind, onDone }: { message: string; kind: "ok" | "error"; onDone(): void }) {
  useEffect(() => {
    const t = setTimeout(onDone, kind === "error" ? 8000 : 3000);
    return () => clearTimeout(t);
  }, [message]);
  return (
    <div class={`toast ${kind === "error" ? "error" : "notice"}`} role="status" onClick={onDone}>
      {message}
    </div>
  );
}

/** One formatter for every time shown: Date.toLocaleString builds a new one per call, which a grid page feels. */
const TIME_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });

export function formatTime(v: unknown): string {
  if (v === null || v === undefined || v === "") return "";
  const d = new Date(typeof v === "number" ? v : String(v));
  return Number.isNaN(d.getTime()) ? String(v) : TIME_FORMAT.format(d);
}

/** Run an action, toasting its outcome; returns whether it succeeded. */
export async function attempt(app: AppState, action: () => Promise<unknown>, ok?: string): Promise<boolean> {
  try {
    await action();
    if (ok) app.toast(ok);
    return true;
  } catch (e) {
    app.toast(describeError(e), "error");
    return false;
  }
}

/** An input's type chosen at run time (Preact's types want one literal type per element). */
export const inputType = (t: "text" | "password" | "url") => ({ type: t }) as unknown as Record<string, never>;
