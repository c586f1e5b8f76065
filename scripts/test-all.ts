// `npm test` and its tiers. Without --tier (npm test): the whole suite on the embedded store (`bun test`), then the
// API and contract suites again with every test app's databases on a libSQL server (STORE=sqld); both runs always
// happen and the exit status is non-zero when either failed. Each run writes bunfig's JUnit report
// (test-results.xml); the second one's is kept as test-results-sqld.xml, and .ci/run adds the two up.
// Tiers (npm run test:unit | test:api | test:e2e) run one part, and the test preload installs only what that part
// needs (BURROW_TEST_TIER): unit needs nothing beyond `npm ci`; api the libSQL server (for its second pass and the
// contract suites); e2e the libSQL server and Chromium.
// Usage: bun run scripts/test-all.ts [--tier unit|api|e2e] [more bun test arguments]

import { existsSync, renameSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";

const REPORT = "test-results.xml";
/** Per-test time limit for tests that set none (bun's default is 5 s; bunfig.toml has no setting for it). */
const TIMEOUT = ["--timeout", "20000"];

type Run = { name: string; args: string[]; env?: Record<string, string>; report: string };
const API = ["tests/api", "tests/contract"];
const TIERS: Record<string, Run[]> = {
  all: [
    { name: "embedded store", args: [], report: "test-results.embedded.tmp" },
    { name: "libSQL server (STORE=sqld)", args: API, env: { STORE: "sqld" }, report: "test-results-sqld.xml" },
  ],
  unit: [{ name: "unit", args: ["tests/unit"], report: "test-results.embedded.tmp" }],
  api: [
    { name: "api and contracts, embedded store", args: API, report: "test-results.embedded.tmp" },
    { name: "api and contracts, libSQL server (STORE=sqld)", args: API, env: { STORE: "sqld" }, report: "test-results-sqld.xml" },
  ],
  e2e: [{ name: "end to end", args: ["tests/e2e"], report: "test-results.embedded.tmp" }],
};

const { values, positionals } = parseArgs({ options: { tier: { type: "string", default: "all" } }, allowPositionals: true, strict: false });
const tier = String(values.tier);
const runs = TIERS[tier];
if (!runs) {
  console.error(`unknown tier "${tier}": one of ${Object.keys(TIERS).join(", ")}`);
  process.exit(2);
}

let failed = false;
for (const run of runs) {
  console.log(`\n=== npm test: ${run.name} ===`);
  rmSync(REPORT, { force: true });
  const args = ["test", ...TIMEOUT, ...run.args, ...positionals];
  const proc = Bun.spawn([process.execPath, ...args], {
    stdio: ["inherit", "inherit", "inherit"],
    env: { ...process.env, BURROW_TEST_TIER: tier, ...run.env },
  });
  if ((await proc.exited) !== 0) failed = true;
  rmSync(run.report, { force: true });
  if (existsSync(REPORT)) renameSync(REPORT, run.report);
}
if (existsSync(runs[0]!.report)) renameSync(runs[0]!.report, REPORT);
process.exit(failed ? 1 : 0);
