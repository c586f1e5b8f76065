#!/usr/bin/env node
// Installs Parse Server (pinned) into .cache/parse-server for the Parse import test, which seeds a real Parse Server
// on PostgreSQL through its REST API (tests/helpers/parse-server.ts). Not a devDependency: it pulls in some 400
// packages nothing else needs. Idempotent: reinstalls only when it is missing or another version. Prints the path
// of its entry module (the one exporting ParseServer).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "9.10.0";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const prefix = join(root, ".cache", "parse-server");
const pkgDir = join(prefix, "node_modules", "parse-server");

function installedVersion() {
  try {
    return JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

if (installedVersion() !== VERSION) {
  mkdirSync(prefix, { recursive: true });
  execFileSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--omit=dev", `parse-server@${VERSION}`], {
    cwd: prefix,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const got = installedVersion();
  if (got !== VERSION) {
    console.error(`install-parse-server: npm finished but ${pkgDir} holds ${got ?? "nothing"}, not ${VERSION}`);
    process.exit(1);
  }
}
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
console.log(join(pkgDir, pkg.main ?? "index.js"));
