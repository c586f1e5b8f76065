// Opens the database behind a `Client`: a path or `file:` URL is embedded bun:sqlite (our adapter), an
// `http(s)://` or `libsql://` URL is a remote libSQL server over HTTP. The native `libsql` addon is never loaded.
import { fileURLToPath } from "node:url";
import { createClient } from "@libsql/client/http";
import type { Client, IntMode } from "@libsql/core/api";
import { openBunSqliteClient } from "./bun-sqlite-client";

type OpenClientOptions = {
  intMode?: IntMode;
  /** Embedded mode only: how long a write waits for a lock held by another process. */
  busyTimeoutMs?: number;
  /** Remote mode only. */
  authToken?: string;
};

export function openClient(location: string, opts: OpenClientOptions = {}): Client {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https" || scheme === "libsql") {
    // createClient maps libsql:// to https:// (TLS unless the URL says ?tls=0).
    return createClient({ url: location, authToken: opts.authToken, intMode: opts.intMode });
  }
  if (scheme !== undefined && scheme !== "file") {
    throw new Error(`Unsupported database URL scheme "${scheme}:" (use a path, file:, http(s): or libsql:)`);
  }
  return openBunSqliteClient(toPath(location), { intMode: opts.intMode, busyTimeoutMs: opts.busyTimeoutMs });
}

/** `file:///abs/db`, `file:rel/db` (libsql style) or a plain path → filesystem path. */
function toPath(location: string): string {
  if (location.startsWith("file://")) return fileURLToPath(location.split("?")[0]!);
  if (location.startsWith("file:")) return decodeURIComponent(location.slice(5).split("?")[0]!);
  return location;
}
