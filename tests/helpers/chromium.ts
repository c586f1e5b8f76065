// The Chromium the browser tests and the console benchmark drive: BURROW_CHROMIUM, or Debian's /usr/bin/chromium
// that the test preload installs through scripts/install-chromium.mjs, and the flags it runs with.

import { existsSync } from "node:fs";

export function chromiumPath(): string {
  const found = [process.env.BURROW_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => p && existsSync(p));
  if (!found)
    throw new Error("no Chromium: the test preload installs it with scripts/install-chromium.mjs (apt-get), or set BURROW_CHROMIUM");
  return found;
}

/** Flags for a headless run in a container: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
