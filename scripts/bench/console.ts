// Console benchmark: the built binary with a schema of --rows objects (default 1,000,000) and 50
// fields, and the console in Debian's Chromium. Each action is timed inside the page with the Performance API,
// from the user's action to the animation frame after the new page of the grid is on screen: opening the schema,
// filtering on an indexed field and on an unindexed one, the next page, sorting by an indexed field both ways, and
// (for reference) the exact count the Count button asks for. Five runs each; the median and the slowest.
// Usage: bun run scripts/bench/console.ts [--rows 1000000] [--runs 5] [--build] [--binary path] [--write]

import { parseArgs } from "node:util";
import { type Page, chromium } from "playwright-core";
import { startBenchServer } from "./server.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { CHROMIUM_ARGS, chromiumPath } from "../../tests/helpers/chromium.ts";
// Browser-side code is JavaScript: this folder type-checks without the DOM library.
import { timeInPage } from "./console-page.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    runs: { type: "string", default: "5" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const rows = Math.min(2_000_000, Math.max(1000, Number(values.rows)));
const runs = Math.min(20, Math.max(1, Number(values.runs)));
const TYPES = ["string", "integer", "float", "boolean"] as const;

/** 50 fields: f01 integer and f02 string are indexed; the rest cycle through the scalar types. */
const fields: Record<string, { type: string }> = {};
for (let i = 1; i <= 50; i++) fields[`f${String(i).padStart(2, "0")}`] = { type: i === 1 ? "integer" : i === 2 ? "string" : TYPES[i % 4]! };
function make(n: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(fields)) {
    const k = Number(name.slice(1));
    o[name] =
      name === "f01"
        ? n
        : name === "f02"
          ? `name-${(n * 7919) % rows}`
          : f.type === "string"
            ? `v${(n + k) % 997}`
            : f.type === "integer"
              ? (n * k) % 10007
              : f.type === "float"
                ? ((n % 1000) * k) / 7
                : (n + k) % 2 === 0;
  }
  return o;
}

/** Run an action in the page and time it until the frame after the grid shows a new page (console-page.js). */
function timed(page: Page, action: string, arg = ""): Promise<number> {
  return page.evaluate(timeInPage, [action, arg] as const);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const exe = values.binary ?? ensureBinary(values.build!);
const server = await startBenchServer(exe, { logLevel: "warn" });
const browser = await chromium.launch({
  executablePath: chromiumPath(),
  args: CHROMIUM_ARGS,
});
try {
  await server.putSettings("development", { rateLimits: { ipPerMinute: 1_000_000 } });
  await server.putSchema("wide", {
    fields,
    permissions: { create: "open", read: "open", update: "open", delete: "open" },
    indexes: [["f01"], ["f02"]],
  });
  const seedStarted = performance.now();
  await server.seed("wide", rows, make);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${server.url}/_admin/`);
  await page.getByPlaceholder("Email").fill("bench@example.com");
  await page.getByPlaceholder("Password").fill("bench-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Screens" }).waitFor();

  const results: Record<string, number[]> = {};
  const add = (name: string, ms: number) => (results[name] ??= []).push(ms);
  for (let r = 0; r < runs; r++) {
    await page.goto(`${server.url}/_admin/#/keys`);
    await page.waitForLoadState("networkidle");
    add("open the schema (first page of 50)", await timed(page, "open"));
    add(
      "filter on an indexed field (f01 range)",
      await timed(page, "query", `f01[gte]=${400_000 + r * 1000}&f01[lt]=${400_100 + r * 1000}`),
    );
    add("filter on an indexed field (f02 equals)", await timed(page, "query", `f02=name-${(r * 104729) % rows}`));
    add("filter on an unindexed field (f07, a boolean)", await timed(page, "query", r % 2 ? "f07=true" : "f07=false"));
    add("next page", await timed(page, "next"));
    await timed(page, "query", "");
    add("sort by an indexed field, ascending (f01)", await timed(page, "sort", "f01"));
    add("sort by an indexed field, descending (f01)", await timed(page, "sort", "f01"));
    add("next page, sorted", await timed(page, "next"));
    await timed(page, "sort", "f01");
    add(`exact total of ${rows.toLocaleString("en")} (Count, on demand)`, await timed(page, "count", "Count"));
    await timed(page, "count", "Counting");
  }
  const rowsOut = Object.entries(results).map(([name, xs]) => [
    name,
    median(xs).toFixed(0),
    Math.max(...xs).toFixed(0),
    name.startsWith("exact") ? "—" : median(xs) < 200 ? "met" : "missed",
  ]);
  const md = [
    `Console in Chromium ${browser.version()} against the built binary: a schema of ${rows.toLocaleString("en")} objects with 50 fields (seeded in ${seedSeconds.toFixed(0)} s over the API), ${runs} runs per action, timed in the page with the Performance API from the action to the frame after the new grid page. ${machine()}.`,
    "",
    table(["action", "median ms", "slowest ms", "< 200 ms"], rowsOut),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("console", `## Admin console on a big schema (scripts/bench/console.ts)\n\n${md}`);
} finally {
  await browser.close();
  await server.stop();
}
