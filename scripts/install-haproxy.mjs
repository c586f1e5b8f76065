#!/usr/bin/env node
// Installs Debian's HAProxy (/usr/sbin/haproxy) for the two-node test, the balancer in front of two Burrow nodes:
// idempotent, only when it is missing, through apt-get as root or sudo. Prints the executable's path.
import { accessSync, constants } from "node:fs";
import { aptInstall } from "./apt.mjs";

const BIN = "/usr/sbin/haproxy";

function present() {
  try {
    accessSync(BIN, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

if (!present()) {
  aptInstall(["haproxy"]);
  if (!present()) {
    console.error(`install-haproxy: apt-get finished but ${BIN} is missing`);
    process.exit(1);
  }
}
console.log(BIN);
