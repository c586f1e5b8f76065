// What leaving NULL fields out of rendered objects costs inside SQLite (bun:sqlite, in memory): ways of
// rendering a 6-field row (string, integer, float, boolean, array, geopoint, plus key and automatic fields)
// as JSON, each checked to give json_object's text byte for byte minus the null members, timed as one
// 100k-row scan and as 100k reads by key (a prepared statement, as GET by key runs it). Half the rows have
// three NULL fields, three in four no sm_owner. Rounds rotate the order; the best round per variant counts
// (noise from other processes only adds time). About 15-20 s.
// The last row is what src/schema/json-sql.ts generates.
// Usage: bun run scripts/bench/null-render.ts [--rows 100000] [--rounds 3]

import { Database } from "bun:sqlite";
import { parseArgs } from "node:util";
import type { FieldDef } from "../../src/schema/definition.ts";
import { objectJsonSql } from "../../src/schema/json-sql.ts";
import { machine, table } from "./env.ts";

const { values } = parseArgs({ options: { rows: { type: "string", default: "100000" }, rounds: { type: "string", default: "3" } } });
const ROWS = Math.min(1_000_000, Math.max(1000, Number(values.rows)));
const ROUNDS = Math.min(9, Math.max(1, Number(values.rounds)));

const FIELDS: [string, FieldDef][] = [
  ["title", { type: "string" }],
  ["n", { type: "integer" }],
  ["score", { type: "float" }],
  ["done", { type: "boolean" }],
  ["tags", { type: "array", items: "string" }],
  ["loc", { type: "geopoint" }],
];
const PK = "bench_id";

/** Each member: key, its NULL test, its JSON value, and a text rendering that is NULL when the field is. */
const c = (col: string) => `t."${col}"`;
const quoted = (col: string) => `CASE WHEN ${c(col)} IS NULL THEN NULL ELSE json_quote(${c(col)}) END`;
const geoNull = `${c("loc$lat")} IS NULL OR ${c("loc$lon")} IS NULL`;
const geo = `json_object('lat', ${c("loc$lat")}, 'lon', ${c("loc$lon")})`;
const parts: [string, string, string, string][] = [
  [PK, `${c(PK)} IS NULL`, c(PK), quoted(PK)],
  ["title", `${c("title")} IS NULL`, c("title"), quoted("title")],
  ["n", `${c("n")} IS NULL`, c("n"), c("n")],
  ["score", `${c("score")} IS NULL`, c("score"), quoted("score")],
  [
    "done",
    `${c("done")} IS NULL`,
    `json(CASE ${c("done")} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)`,
    `CASE ${c("done")} WHEN 1 THEN 'true' WHEN 0 THEN 'false' END`,
  ],
  ["tags", `${c("tags")} IS NULL`, `json(${c("tags")})`, `json(${c("tags")})`],
  ["loc", geoNull, `CASE WHEN ${geoNull} THEN NULL ELSE ${geo} END`, `CASE WHEN ${geoNull} THEN NULL ELSE ${geo} END`],
  ["createddate", `${c("createddate")} IS NULL`, c("createddate"), c("createddate")],
  ["lastmoddate", `${c("lastmoddate")} IS NULL`, c("lastmoddate"), c("lastmoddate")],
  ["sm_owner", `${c("sm_owner")} IS NULL`, c("sm_owner"), quoted("sm_owner")],
];
const plain = `json_object(${parts.map(([k, , v]) => `'${k}', ${v}`).join(", ")})`;

const VARIANTS: [string, string][] = [
  ["json_object (keeps nulls, before)", plain],
  ["json_patch('{}', json_object)", `json_patch('{}', ${plain})`],
  [
    "json_remove + CASE paths",
    `json_remove(${plain}, ${parts.map(([k, test]) => `CASE WHEN ${test} THEN '$.${k}' ELSE '$.""' END`).join(", ")})`,
  ],
  ["concat_ws of member texts", `'{' || concat_ws(',', ${parts.map(([k, , , text]) => `'"${k}":' || ${text}`).join(", ")}) || '}'`],
  [
    "concat(), integers unquoted",
    `concat('{"${PK}":', json_quote(${c(PK)}), ${parts
      .slice(1)
      .map(([k, test, , text]) =>
        k === "done"
          ? `CASE ${c("done")} WHEN 1 THEN ',"done":true' WHEN 0 THEN ',"done":false' END`
          : `CASE WHEN ${test} THEN NULL ELSE ',"${k}":' END, ${text}`,
      )
      .join(", ")}, '}')`,
  ],
  [
    'replace() of each ,"k":null',
    parts.slice(1).reduce((acc, [k, test]) => `replace(${acc}, CASE WHEN ${test} THEN ',"${k}":null' ELSE '' END, '')`, plain),
  ],
  [
    "json_patch only when a field is NULL",
    `CASE WHEN ${parts
      .slice(1)
      .map(([, test]) => `(${test})`)
      .join(" OR ")} THEN json_patch('{}', ${plain}) ELSE ${plain} END`,
  ],
  ["objectJsonSql (src)", objectJsonSql(PK, FIELDS, "t").sql],
];

const db = new Database(":memory:");
db.run(
  `CREATE TABLE o_bench ("${PK}" TEXT PRIMARY KEY, title TEXT, n INTEGER, score REAL, done INTEGER, tags TEXT, "loc$lat" REAL, "loc$lon" REAL, createddate INTEGER, lastmoddate INTEGER, sm_owner TEXT) STRICT`,
);
const insert = db.prepare(`INSERT INTO o_bench VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
const keys: string[] = [];
db.transaction(() => {
  for (let i = 0; i < ROWS; i++) {
    const key = `k${i.toString(16).padStart(8, "0")}`;
    keys.push(key);
    const sparse = i % 2 === 1;
    insert.run(
      key,
      `object ${i} ✓`,
      sparse ? null : i * 7919,
      i / 3,
      sparse ? null : i % 3 === 0 ? 1 : 0,
      sparse ? null : JSON.stringify(["a", `t${i % 10}`]),
      48.1 + i / 1e6,
      11.5,
      1_700_000_000_000 + i,
      1_700_000_000_000 + i,
      i % 4 === 0 ? `user/u${i}` : null,
    );
  }
})();

// Correctness first: every variant renders the baseline's text with its null members left out, byte for byte
// (numbers keep json_object's round-trip rendering, e.g. 0.0 and 0.33333333333333331).
const dropNulls = (j: string) => j.replace(/,"[a-z_$]+":null(?=[,}])/g, "");
const sample = (sql: string) =>
  db
    .query(`SELECT ${sql} AS j FROM o_bench AS t WHERE rowid <= 1000 ORDER BY rowid`)
    .values()
    .map((r) => r[0] as string);
const expected = sample(plain).map(dropNulls);
for (const [name, sql] of VARIANTS.slice(1)) {
  const got = sample(sql);
  const bad = got.findIndex((j, i) => j !== expected[i]);
  if (bad >= 0) throw new Error(`${name} differs at row ${bad + 1}: ${got[bad]} vs ${expected[bad]}`);
}

const scans = VARIANTS.map(([, sql]) => db.prepare(`SELECT ${sql} AS j FROM o_bench AS t`));
const gets = VARIANTS.map(([, sql]) => db.prepare(`SELECT ${sql} AS j FROM o_bench AS t WHERE t."${PK}" = ?`));
const timesScan: number[][] = VARIANTS.map(() => []);
const timesGet: number[][] = VARIANTS.map(() => []);
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  // Rotate the order each round so no variant always runs right after another one's garbage.
  for (let i = 0; i < VARIANTS.length; i++) {
    const v = (i + round) % VARIANTS.length;
    let t = Bun.nanoseconds();
    for (const r of scans[v]!.values()) sink += (r[0] as string).length;
    timesScan[v]!.push((Bun.nanoseconds() - t) / 1e6);
    const get = gets[v]!;
    t = Bun.nanoseconds();
    for (const k of keys) sink += (get.values(k)[0]![0] as string).length;
    timesGet[v]!.push((Bun.nanoseconds() - t) / 1e6);
  }
}
const best = (xs: number[]) => Math.min(...xs);
const base = [best(timesScan[0]!), best(timesGet[0]!)];
console.log(
  `${machine()}, SQLite ${(db.query("SELECT sqlite_version() AS v").get() as { v: string }).v}; ${ROWS} rows, best of ${ROUNDS} rounds (checksum ${sink % 997})\n`,
);
console.log(
  table(
    ["rendering", `scan of ${ROWS} rows (ms)`, "vs before", `${ROWS} reads by key (ms)`, "µs per read", "vs before"],
    VARIANTS.map(([name], v) => {
      const s = best(timesScan[v]!);
      const g = best(timesGet[v]!);
      return [name, s, `${((s / base[0]! - 1) * 100).toFixed(0)}%`, g, (g * 1000) / ROWS, `${((g / base[1]! - 1) * 100).toFixed(0)}%`];
    }),
  ),
);
