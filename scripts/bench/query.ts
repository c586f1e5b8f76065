// Query benchmark against the built binary, latency at concurrency 1 (wrk/autocannon from a second process):
// list 20 of 10,000 with the total count, 20 of 100,000 with an indexed filter, geo [near] with a radius and
// [within] a box on 1,000,000 points, expand depth 3 on 20 results. In the same run, the geo queries are
// also answered by a full scan (same conditions, no R*Tree) directly on the database file, for the speedup.
// Usage: bun run scripts/bench/query.ts [--seconds 5] [--points 1000000] [--tool wrk|autocannon] [--build] [--write]

import { Database } from "bun:sqlite";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findSql } from "../../src/datastore/find.ts";
import { parseQuery } from "../../src/datastore/query/parse.ts";
import { compileSchema } from "../../src/schema/compiled.ts";
import { validateDefinition } from "../../src/schema/definition.ts";
import { startBenchServer } from "./server.ts";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { defaultTool, runLoad, type LoadResult, type Tool } from "./load.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    points: { type: "string", default: "1000000" },
    tool: { type: "string" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const seconds = Math.min(60, Math.max(1, Number(values.seconds)));
const points = Math.min(2_000_000, Math.max(10_000, Number(values.points)));
const tool = (values.tool as Tool | undefined) ?? defaultTool();
const exe = values.binary ?? ensureBinary(values.build!);

let seed = 42;
const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
// Points over a continent-sized region (lat 35..70, lon -10..40): about 570 per square degree at 1M.
const region = { lat: [35, 70], lon: [-10, 40] } as const;
const randomPoint = () => ({
  lat: region.lat[0] + rnd() * (region.lat[1] - region.lat[0]),
  lon: region.lon[0] + rnd() * (region.lon[1] - region.lon[0]),
});

const server = await startBenchServer(exe);
const headers = server.headers;
const dir = server.dir;
const log = (s: string) => console.error(s);

const rows: (string | number)[][] = [];
const checks: string[][] = [];
try {
  await server.putSchema("small", { fields: { name: { type: "string" }, n: { type: "integer" }, cat: { type: "string" } } });
  await server.putSchema("large", {
    fields: { name: { type: "string" }, n: { type: "integer" }, cat: { type: "string" } },
    indexes: [["cat", "n"]],
  });
  await server.putSchema("place", { fields: { name: { type: "string" }, at: { type: "geopoint" } } });
  await server.putSchema("city", { fields: { name: { type: "string" } } });
  await server.putSchema("company", { fields: { name: { type: "string" }, city: { type: "relationship", schema: "city" } } });
  await server.putSchema("member", { fields: { name: { type: "string" }, company: { type: "relationship", schema: "company" } } });
  await server.putSchema("comment", { fields: { text: { type: "string" }, by: { type: "relationship", schema: "member" } } });
  await server.putSchema("post", {
    fields: {
      title: { type: "string" },
      author: { type: "relationship", schema: "member" },
      comments: { type: "relationship", schema: "comment", many: true },
    },
  });

  const item = (i: number) => ({ name: `item ${i}`, n: i, cat: `c${i % 100}` });
  await server.seed("small", 10_000, item);
  await server.seed("large", 100_000, item);
  await server.seed("city", 100, (i) => ({ city_id: `city${i}`, name: `City ${i}` }));
  await server.seed("company", 1000, (i) => ({ company_id: `co${i}`, name: `Company ${i}`, city: `city${i % 100}` }));
  await server.seed("member", 5000, (i) => ({ member_id: `m${i}`, name: `Member ${i}`, company: `co${i % 1000}` }));
  await server.seed("comment", 30_000, (i) => ({ comment_id: `k${i}`, text: `comment ${i}`, by: `m${(i * 7) % 5000}` }));
  await server.seed("post", 10_000, (i) => ({
    post_id: `p${i}`,
    title: `Post ${i}`,
    author: `m${i % 5000}`,
    comments: [`k${i * 3}`, `k${i * 3 + 1}`, `k${i * 3 + 2}`],
  }));
  await server.seed("place", points, (i) => ({ name: `place ${i}`, at: randomPoint() }));

  const run = async (name: string, paths: string[], extra: Record<string, string>, target: string, ok: (r: LoadResult) => boolean) => {
    const r = await runLoad({ base: server.url, method: "GET", paths, headers: { ...headers, ...extra }, connections: 1, seconds }, tool);
    log(`${name}: p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms ${r.rps.toFixed(0)} req/s errors ${r.errors}`);
    rows.push([name, Math.round(r.rps), r.p50, r.p99, r.errors]);
    checks.push([target, `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`, ok(r) && r.errors === 0 ? "met" : "MISSED"]);
    return r;
  };
  const range20 = { range: "objects=0-19" };
  await run("list 20 of 10,000 with total count", ["/small"], range20, "list 20 of 10,000 (Range 0-19) p50 <= 2 ms", (r) => r.p50 <= 2);
  await run(
    "list 20 of 100,000, indexed filter cat=cN, ordered by n, with total",
    Array.from({ length: 100 }, (_, i) => `/large?cat=c${i}`),
    { ...range20, "x-service-orderby": "n:asc" },
    "list 20 of 100,000 with indexed filter p50 <= 4 ms",
    (r) => r.p50 <= 4,
  );
  const radius = 25 / 6367.5;
  const nearPaths = Array.from({ length: 500 }, () => {
    const p = randomPoint();
    return `/place?at[near]=${p.lat.toFixed(5)},${p.lon.toFixed(5)},${radius}`;
  });
  const boxPaths = Array.from({ length: 500 }, () => {
    const p = randomPoint();
    return `/place?at[within]=${p.lat.toFixed(5)},${p.lon.toFixed(5)},${(p.lat + 0.2).toFixed(5)},${(p.lon + 0.2).toFixed(5)}`;
  });
  await run(
    `geo [near] 25 km radius, 20 nearest of ${points.toLocaleString("en")}`,
    nearPaths,
    range20,
    "geo near with radius p50 <= 5 ms, p99 <= 20 ms",
    (r) => r.p50 <= 5 && r.p99 <= 20,
  );
  await run(
    `geo [within] 0.2 x 0.2 degree box of ${points.toLocaleString("en")}`,
    boxPaths,
    {},
    "geo within box p50 <= 5 ms, p99 <= 20 ms",
    (r) => r.p50 <= 5 && r.p99 <= 20,
  );
  await run(
    "expand depth 3 on 20 posts (post > comments > by > company)",
    Array.from({ length: 100 }, (_, i) => `/post?post_id[in]=${Array.from({ length: 20 }, (_, j) => `p${i * 20 + j}`).join(",")}`),
    { "x-service-expand": "3" },
    "expand depth 3 on 20 results p50 <= 5 ms",
    (r) => r.p50 <= 5,
  );

  // The same geo queries answered by a full scan, in the same run: Burrow's own SQL for each query
  // (findSql) on the database file, and on a copy whose R*Tree is replaced by a plain table of the same
  // name and columns, so SQLite has no spatial index and reads everything.
  const file = join(dir, "data/development.db");
  const copy = join(dir, "scan.db");
  const db = new Database(file, { readonly: true, strict: true });
  db.run(`VACUUM INTO '${copy}'`);
  const scanDb = new Database(copy, { strict: true });
  for (const w of ["insert", "update", "delete"]) scanDb.run(`DROP TRIGGER IF EXISTS "g$place$at$${w}"`);
  scanDb.run(`DROP TABLE "g$place$at"`);
  scanDb.run(`CREATE TABLE "g$place$at" (id INTEGER, min_lat REAL, max_lat REAL, min_lon REAL, max_lon REAL)`);
  scanDb.run(`INSERT INTO "g$place$at" SELECT rowid, "at$lat", "at$lat", "at$lon", "at$lon" FROM o_place WHERE "at$lat" IS NOT NULL`);
  const place = compileSchema(validateDefinition({ name: "place", fields: { name: { type: "string" }, at: { type: "geopoint" } } }));
  const sqlOf = (path: string, range: boolean) => {
    const url = new URL(`http://x${path}`);
    return findSql(
      place,
      parseQuery(url.searchParams, { get: (h: string) => (h === "range" && range ? "objects=0-19" : null) }),
      null,
      () => undefined,
    );
  };
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const compare = (name: string, paths: string[], range: boolean) => {
    const fast: number[] = [];
    const slow: number[] = [];
    paths.forEach((path, i) => {
      const { sql, args } = sqlOf(path, range);
      let s0 = performance.now();
      const a = db.query(sql).values(...(args as never[]));
      fast.push(performance.now() - s0);
      if (i >= 7) return; // full scans are slow: 7 of them suffice for a median
      s0 = performance.now();
      const b = scanDb.query(sql).values(...(args as never[]));
      slow.push(performance.now() - s0);
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${name}: the indexed and the full-scan answers differ for ${path}`);
    });
    const f = median(fast);
    const sl = median(slow);
    log(`${name}: indexed ${f.toFixed(3)} ms, full scan ${sl.toFixed(1)} ms, ${(sl / f).toFixed(0)}x`);
    rows.push([`${name}: Burrow's SQL with the R*Tree vs the same SQL by full scan`, "", f, sl, 0]);
    checks.push([
      `${name} >= 50x faster than a full scan`,
      `${(sl / f).toFixed(0)}x (${f.toFixed(3)} vs ${sl.toFixed(1)} ms)`,
      sl / f >= 50 ? "met" : "MISSED",
    ]);
  };
  compare("geo near 25 km, 20 nearest", nearPaths.slice(0, 101), true);
  compare("geo within 0.2 degree box", boxPaths.slice(0, 101), false);
  db.close();
  scanDb.close();

  const md = [
    "### Queries (scripts/bench/query.ts)",
    "",
    `${machine()}; load: ${tool}, 1 connection, ${seconds} s per row, built binary, loopback; ${points.toLocaleString("en")} geo points over lat 35-70, lon -10-40.`,
    "",
    table(["case", "req/s", "p50 ms", "p99 ms", "errors"], rows),
    "",
    "(For the R*Tree rows the two millisecond columns are the median time of Burrow's SQL on the database file (101 queries) and of the same SQL on a copy without the spatial index (7 queries).)",
    "",
    table(["target", "measured", ""], checks),
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("query", md);
} finally {
  await server.stop();
}
