// The console following changes: an admin live stream on the environment (acting as the server, so it sees every
// object), one subscription to the schema on screen, and an EventSource on it. `onEvent` gets every change to that
// schema, by anyone; the hook answers whether the stream is connected.

import { useEffect, useRef, useState } from "preact/hooks";
import { type Env, post, put } from "./api.ts";

export interface LiveChange {
  event: "create" | "update" | "delete" | "enter" | "leave";
  object: Record<string, unknown>;
}

const EVENTS = ["create", "update", "delete", "enter", "leave"] as const;

export function useLiveChanges(env: Env, version: number | null, schema: string, onEvent: (c: LiveChange) => void): boolean {
  const [connected, setConnected] = useState(false);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    let source: EventSource | null = null;
    let gone = false;
    (async () => {
      const s = await post<{ stream: string; token: string }>("/live/streams", {
        env,
        ...(env === "production" && version ? { version } : {}),
      });
      await put(`/live/streams/${s.stream}/subscriptions/grid`, { schema });
      if (gone) return;
      source = new EventSource(`/_live/streams/${s.stream}?token=${encodeURIComponent(s.token)}`);
      source.addEventListener("ready", () => setConnected(true));
      source.addEventListener("error", () => setConnected(false));
      for (const kind of EVENTS)
        source.addEventListener(kind, (e) => handler.current({ event: kind, object: JSON.parse((e as MessageEvent).data).object }));
    })().catch(() => setConnected(false));
    return () => {
      gone = true;
      source?.close();
      setConnected(false);
    };
  }, [env, version, schema]);
  return connected;
}
