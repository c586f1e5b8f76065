#!/usr/bin/env node
// Installs Debian's Caddy (/usr/bin/caddy) for the behind-a-proxy test, HTTPS in front of Burrow: idempotent, only
// when it is missing, through apt-get as root or sudo. Prints the executable's path. (On a machine run by systemd
// the package also starts its own caddy service; the test uses only the executable, with a config of its own.)
import { ensureInstalled } from "./apt.mjs";

ensureInstalled("install-caddy", ["caddy"], ["/usr/bin/caddy"]);
