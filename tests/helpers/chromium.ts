// The Chromium the browser tests drive: BURROW_CHROMIUM, or Debian's /usr/bin/chromium that the test preload
// installs through scripts/install-chromium.mjs.

import { existsSync } from "node:fs";

export function chromiumPath(): string {
  const found = [process.env.BURROW_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => p && existsSync(p));
  if (!found)
    throw new Error("no Chromium: the test preload installs it with scripts/install-chromium.mjs (apt-get), or set BURROW_CHROMIUM");
  return found;
}
