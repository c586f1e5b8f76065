// The cost of one write for its live subscribers, in process, for scripts/bench/live.ts: Burrow's hub (each
// subscription's filter and read rule compiled once to predicates over the logged object, one rendering shared,
// one SSE frame per subscriber) beside the design that checks each subscriber with its own SQL query per write
// (the filter and permission as a WHERE on the written row, as PocketBase's realtime does), on the same database.

import { compileConditions } from "../../src/datastore/query/compile.ts";
import { parseConditions } from "../../src/datastore/query/parse.ts";
import { readChanges } from "../../src/live/change-feed.ts";
import { PreparedChange, eventOf } from "../../src/live/dispatch.ts";
import { compileSubscription } from "../../src/live/subscription.ts";
import type { ApiContext } from "../../src/request-context.ts";
import { makeTestApp } from "../../tests/helpers/app.ts";

const encoder = new TextEncoder();

/** Rows [subscribers, hub µs per write, query-per-subscriber µs per write]. */
export async function hubCostPerWrite(counts: number[]): Promise<(string | number)[][]> {
  const t = await makeTestApp();
  try {
    await t.admin("PUT", "/schemas/item", { fields: { tag: { type: "string" }, n: { type: "integer" }, owner: { type: "string" } } });
    await t.request("POST", "/_live/streams"); // writes are logged while a stream exists
    await t.request("POST", "/item", { body: { item_id: "x", tag: "all", n: 7 } });
    const db = t.burrow.envDbs.development;
    const [change] = await readChanges(db, 0, 1_000_000).then((rows) => rows.filter((r) => r.schema === "item"));
    const ctx: ApiContext = {
      env: "development",
      version: 0,
      db,
      schemas: t.burrow.catalog.development(),
      infer: false,
      principal: { kind: "anonymous" },
      fileBase: () => "http://127.0.0.1",
    };
    const s = ctx.schemas.schemas.get("item")!;
    const rows: (string | number)[][] = [];
    for (const n of counts) {
      const subs = Array.from({ length: n }, (_, i) =>
        compileSubscription(ctx, `s${i}`, { schema: "item", query: "tag=all&n[gt]=1", select: null, events: ["create"] }),
      );
      const hub = (): number => {
        const p = new PreparedChange(change!);
        let bytes = 0;
        for (const sub of subs) {
          const ev = eventOf(sub, p, null);
          if (ev) bytes += encoder.encode(`id: ${change!.id}\nevent: ${ev.kind}\ndata: ${ev.data}\n\n`).length;
        }
        return bytes;
      };
      const where = compileConditions(s, parseConditions(new URLSearchParams("tag=all&n[gt]=1")), null);
      const perSubscriber = async () => {
        for (let i = 0; i < n; i++)
          await db.execute({
            sql: `SELECT ${s.json} AS j FROM ${s.table} AS t WHERE t."item_id" = ? AND ${where.sql}`,
            args: ["x", ...where.args],
          });
      };
      const reps = Math.max(3, Math.min(2000, Math.floor(200_000 / n)));
      for (let i = 0; i < Math.min(reps, 50); i++) hub(); // warm-up
      let t0 = performance.now();
      for (let i = 0; i < reps; i++) hub();
      const hubUs = ((performance.now() - t0) * 1000) / reps;
      const qreps = Math.max(2, Math.min(200, Math.floor(20_000 / n)));
      await perSubscriber();
      t0 = performance.now();
      for (let i = 0; i < qreps; i++) await perSubscriber();
      const queryUs = ((performance.now() - t0) * 1000) / qreps;
      rows.push([
        n.toLocaleString("en"),
        `${fmt(hubUs)} per write (${fmt(hubUs / n)} per subscriber)`,
        `${fmt(queryUs)} per write (${fmt(queryUs / n)} per subscriber)`,
      ]);
    }
    return rows;
  } finally {
    await t.close();
  }
}

const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(1)} µs`);
