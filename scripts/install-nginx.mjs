#!/usr/bin/env node
// Installs Debian's nginx (/usr/sbin/nginx) and its njs module (which deploy/nginx.conf uses) for the
// behind-a-proxy test, HTTPS in front of Burrow: idempotent, only when missing, through apt-get as root or sudo.
// Prints the executable's path. (On a machine run by systemd the package also starts its own nginx service; the
// test uses only the executable, with a config of its own.)
import { ensureInstalled } from "./apt.mjs";

ensureInstalled("install-nginx", ["nginx", "libnginx-mod-http-js"], ["/usr/sbin/nginx", "/usr/lib/nginx/modules/ngx_http_js_module.so"]);
