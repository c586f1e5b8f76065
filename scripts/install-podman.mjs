#!/usr/bin/env node
// Installs Debian's podman (buildah's engine inside) and runc for the container image test (tests/e2e/image.test.ts).
// runc because crun refuses this kind of machine's cgroup layout (v1 with a cgroup2 mount holding a controller:
// "cgroups in hybrid mode not supported"). Idempotent; prints podman's path.
import { existsSync } from "node:fs";
import { aptInstall } from "./apt.mjs";

if (!existsSync("/usr/bin/podman") || !existsSync("/usr/sbin/runc")) aptInstall(["podman", "runc"]);
console.log("/usr/bin/podman");
