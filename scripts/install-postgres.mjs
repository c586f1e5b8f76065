#!/usr/bin/env node
// Installs Debian's PostgreSQL server for the Parse Server import test (tests/helpers/parse-server.ts runs a
// throwaway cluster with initdb and postgres): idempotent, only when it is missing, through apt-get as root or sudo.
// Prints the directory of the server binaries (/usr/lib/postgresql/<major>/bin, the newest when several).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { aptInstall } from "./apt.mjs";

const BASE = "/usr/lib/postgresql";

/** The newest /usr/lib/postgresql/<major>/bin that holds initdb and postgres, or null. */
function binDir() {
  let versions = [];
  try {
    versions = readdirSync(BASE);
  } catch {
    return null;
  }
  const dirs = versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    .map((v) => join(BASE, v, "bin"))
    .filter((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "postgres")));
  return dirs[0] ?? null;
}

let dir = binDir();
if (!dir) {
  aptInstall(["postgresql"]);
  dir = binDir();
  if (!dir) {
    console.error(`install-postgres: apt-get finished but no ${BASE}/*/bin/initdb is there`);
    process.exit(1);
  }
}
console.log(dir);
