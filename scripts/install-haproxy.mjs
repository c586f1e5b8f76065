#!/usr/bin/env node
// Installs Debian's HAProxy (/usr/sbin/haproxy) for the two-node test (the balancer in front of two Burrow nodes)
// and the behind-a-proxy test: idempotent, only when it is missing, through apt-get as root or sudo. Prints the
// executable's path.
import { ensureInstalled } from "./apt.mjs";

ensureInstalled("install-haproxy", ["haproxy"], ["/usr/sbin/haproxy"]);
