// The whole codebase type-checks (strict tsconfig) with Bun's built-in checker, and so does each project with a
// tsconfig of its own: the custom code example (against sandbox/burrow.d.ts) and the pages (DOM, Preact JSX).

import { expect, test } from "bun:test";
import { ROOT } from "../helpers/spawn.ts";

const PROJECTS: [string, string][] = [
  ["the codebase", ROOT],
  ["the custom code example (against sandbox/burrow.d.ts)", `${ROOT}/examples/custom-code`],
  ["the admin console (static/console, DOM and Preact JSX)", `${ROOT}/static/console`],
  ["the status page (static/status)", `${ROOT}/static/status`],
  ["the API reference page (static/docs)", `${ROOT}/static/docs`],
  ["the client library (static/sdk, DOM)", `${ROOT}/static/sdk`],
];

for (const [what, cwd] of PROJECTS) {
  test(`${what}: bun check reports no type errors`, () => {
    const p = Bun.spawnSync([process.execPath, "check"], { cwd, stdout: "pipe", stderr: "pipe" });
    const out = p.stdout.toString() + p.stderr.toString();
    expect(
      out
        .split("\n")
        .filter((l) => l.includes("error TS"))
        .slice(0, 20),
    ).toEqual([]);
    expect(p.exitCode).toBe(0);
  }, 60_000);
}
