#!/usr/bin/env node
// Installs Debian's Chromium (/usr/bin/chromium) for the console's browser tests, the way the test setup installs
// sqld: idempotent, and only when it is missing. Uses apt-get as root, or through sudo when that is available.
// Prints the browser's path; exits non-zero when it cannot be installed (the browser tests then fail, loudly).
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";

const CANDIDATES = [process.env.BURROW_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean);

function found() {
  for (const p of CANDIDATES) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

let path = found();
if (!path) {
  if (process.platform !== "linux") {
    console.error("install-chromium: set BURROW_CHROMIUM to a Chromium or Chrome executable (apt-get is Linux-only)");
    process.exit(1);
  }
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  const apt = (args) =>
    execFileSync(root ? "apt-get" : "sudo", root ? args : ["-n", "apt-get", ...args], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  try {
    apt(["install", "-y", "--no-install-recommends", "chromium"]);
  } catch {
    // A fresh machine may have no package lists yet.
    apt(["update"]);
    apt(["install", "-y", "--no-install-recommends", "chromium"]);
  }
  path = found();
  if (!path) {
    console.error("install-chromium: apt-get finished but no chromium executable was found");
    process.exit(1);
  }
}
console.log(path);
