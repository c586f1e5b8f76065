// `npm test`: the whole suite on the embedded store (`bun test`), then the API and contract suites again with every
// test app's databases on a libSQL server (STORE=sqld). Both runs always happen; the exit status is non-zero when
// either failed. Each run writes bunfig's JUnit report (test-results.xml); the second one's is kept as
// test-results-sqld.xml, and .ci/run adds the two up.

import { existsSync, renameSync, rmSync } from "node:fs";

const REPORT = "test-results.xml";
/** Per-test time limit for tests that set none (bun's default is 5 s; bunfig.toml has no setting for it). */
const TIMEOUT = ["--timeout", "20000"];
const runs: { name: string; args: string[]; env?: Record<string, string>; report: string }[] = [
  { name: "embedded store", args: ["test", ...TIMEOUT], report: "test-results.embedded.tmp" },
  { name: "libSQL server (STORE=sqld)", args: ["test", ...TIMEOUT, "tests/api", "tests/contract"], env: { STORE: "sqld" }, report: "test-results-sqld.xml" },
];
let failed = false;
for (const run of runs) {
  console.log(`\n=== npm test: ${run.name} ===`);
  rmSync(REPORT, { force: true });
  const proc = Bun.spawn([process.execPath, ...run.args], { stdio: ["inherit", "inherit", "inherit"], env: { ...process.env, ...run.env } });
  if ((await proc.exited) !== 0) failed = true;
  rmSync(run.report, { force: true });
  if (existsSync(REPORT)) renameSync(REPORT, run.report);
}
if (existsSync(runs[0]!.report)) renameSync(runs[0]!.report, REPORT);
process.exit(failed ? 1 : 0);
