// The whole codebase type-checks (strict tsconfig) with Bun's built-in checker.

import { expect, test } from "bun:test";
import { ROOT } from "../helpers/spawn.ts";

test("bun check reports no type errors", () => {
  const p = Bun.spawnSync([process.execPath, "check"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const out = p.stdout.toString() + p.stderr.toString();
  expect(out.split("\n").filter((l) => l.includes("error TS")).slice(0, 20)).toEqual([]);
  expect(p.exitCode).toBe(0);
}, 60_000);

test("the custom code example type-checks against sandbox/burrow.d.ts", () => {
  const p = Bun.spawnSync([process.execPath, "check"], { cwd: `${ROOT}/examples/custom-code`, stdout: "pipe", stderr: "pipe" });
  const out = p.stdout.toString() + p.stderr.toString();
  expect(out.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
  expect(p.exitCode).toBe(0);
}, 60_000);

test("the admin console (static/console, DOM and Preact JSX) type-checks", () => {
  const p = Bun.spawnSync([process.execPath, "check"], { cwd: `${ROOT}/static/console`, stdout: "pipe", stderr: "pipe" });
  const out = p.stdout.toString() + p.stderr.toString();
  expect(out.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
  expect(p.exitCode).toBe(0);
}, 60_000);

test("the status page (static/status) type-checks", () => {
  const p = Bun.spawnSync([process.execPath, "check"], { cwd: `${ROOT}/static/status`, stdout: "pipe", stderr: "pipe" });
  const out = p.stdout.toString() + p.stderr.toString();
  expect(out.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
  expect(p.exitCode).toBe(0);
}, 60_000);

test("the API reference page (static/docs) type-checks", () => {
  const p = Bun.spawnSync([process.execPath, "check"], { cwd: `${ROOT}/static/docs`, stdout: "pipe", stderr: "pipe" });
  const out = p.stdout.toString() + p.stderr.toString();
  expect(out.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
  expect(p.exitCode).toBe(0);
}, 60_000);
