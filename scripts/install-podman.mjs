#!/usr/bin/env node
// Installs Debian's podman (with buildah's engine inside) for the container image test (tests/e2e/image.test.ts).
// Idempotent; prints podman's path.
import { existsSync } from "node:fs";
import { aptInstall } from "./apt.mjs";

if (!existsSync("/usr/bin/podman")) aptInstall(["podman"]);
console.log("/usr/bin/podman");
