#!/usr/bin/env node
// Installs Debian's Caddy (/usr/bin/caddy) for the behind-a-proxy test, HTTPS in front of Burrow: idempotent, only
// when it is missing, through apt-get as root or sudo. Prints the executable's path. (On a machine run by systemd
// the package also starts its own caddy service; the test uses only the executable, with a config of its own.)
import { accessSync, constants } from "node:fs";
import { aptInstall } from "./apt.mjs";

const BIN = "/usr/bin/caddy";

function present() {
  try {
    accessSync(BIN, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

if (!present()) {
  aptInstall(["caddy"]);
  if (!present()) {
    console.error(`install-caddy: apt-get finished but ${BIN} is missing`);
    process.exit(1);
  }
}
console.log(BIN);
