#!/usr/bin/env node
// Installs what the arm64 smoke test (tests/e2e/arm64.test.ts) needs to run dist/burrow-linux-arm64 on x64:
// Debian's qemu-user-static (qemu-aarch64-static) and libc6-arm64-cross (the aarch64 glibc under
// /usr/aarch64-linux-gnu, passed to qemu with -L). Idempotent; prints the emulator's path.
import { existsSync } from "node:fs";
import { aptInstall } from "./apt.mjs";

export const QEMU = "/usr/bin/qemu-aarch64-static";
export const SYSROOT = "/usr/aarch64-linux-gnu";

if (!existsSync(QEMU) || !existsSync(`${SYSROOT}/lib/ld-linux-aarch64.so.1`)) aptInstall(["qemu-user-static", "libc6-arm64-cross"]);
console.log(QEMU);
