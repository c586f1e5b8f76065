#!/usr/bin/env node
// Installs Debian's nginx (/usr/sbin/nginx) and its njs module (which deploy/nginx.conf uses) for the
// behind-a-proxy test, HTTPS in front of Burrow: idempotent, only when missing, through apt-get as root or sudo.
// Prints the executable's path. (On a machine run by systemd the package also starts its own nginx service; the
// test uses only the executable, with a config of its own.)
import { accessSync, constants } from "node:fs";
import { aptInstall } from "./apt.mjs";

const BIN = "/usr/sbin/nginx";
const NJS = "/usr/lib/nginx/modules/ngx_http_js_module.so";

function present() {
  try {
    accessSync(BIN, constants.X_OK);
    accessSync(NJS, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

if (!present()) {
  aptInstall(["nginx", "libnginx-mod-http-js"]);
  if (!present()) {
    console.error(`install-nginx: apt-get finished but ${BIN} or ${NJS} is missing`);
    process.exit(1);
  }
}
console.log(BIN);
