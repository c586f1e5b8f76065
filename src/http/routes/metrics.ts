// GET /_metrics, Prometheus text format (docs/api/admin.md#status-metrics-and-health): off unless --metrics (or
// BURROW_METRICS_TOKEN) is set; with a token it needs `Authorization: Bearer <token>`, compared in constant time.

import { Elysia } from "elysia";
import { timingSafeEqual } from "node:crypto";
import { ApiError, notFound } from "../../errors.ts";
import { prometheusText } from "../../system/prometheus.ts";
import { hookFigures } from "../../code/hook-dead.ts";
import { ENVIRONMENTS } from "../../system/environments.ts";
import type { Burrow } from "../burrow.ts";
import { storeSizes } from "../status-figures.ts";
import { bearerToken } from "../admin-context.ts";
import { storeUnreachable } from "../../db/store-unreachable.ts";

function sameToken(given: string, expected: string): boolean {
  const a = new Bun.CryptoHasher("sha256").update(given).digest();
  const b = new Bun.CryptoHasher("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

export function metricsRoutes(burrow: Burrow) {
  const { enabled, token } = burrow.config.metrics;
  return new Elysia({ name: "metrics" }).get(
    "/_metrics",
    async ({ request }) => {
      if (!enabled) throw notFound("metrics are off; start the server with --metrics (or BURROW_METRICS_TOKEN) to serve /_metrics");
      if (token) {
        const given = bearerToken(request);
        if (!given || !sameToken(given, token))
          throw new ApiError(401, "metrics need Authorization: Bearer <BURROW_METRICS_TOKEN>", {
            headers: { "www-authenticate": 'Bearer realm="burrow-metrics"' },
          });
      }
      const push: Record<string, { depth: number; retrying: number; leased: number; oldestAgeMs: number | null; tokens: number }> = {};
      const queues: Record<string, { queued: number; oldestMs: number; dead: number }> = {};
      let stores: Record<string, { db: number; wal: number }> = {};
      // While the store is away the figures kept in memory (burrow_store_reachable among them) are served at once.
      if (burrow.ops.store.reachable) {
        try {
          for (const env of ENVIRONMENTS)
            push[env] = { ...(await burrow.push.queue(env).stats()), tokens: await burrow.push.tokens(env).count() };
          for (const env of ENVIRONMENTS) queues[env] = await hookFigures(burrow.envDbs[env]);
          stores = await storeSizes(burrow);
        } catch (e) {
          if (storeUnreachable(e) === null) throw e;
        }
      }
      const mem = process.memoryUsage();
      const text = prometheusText(burrow.requestStats, {
        version: burrow.version,
        uptimeSeconds: Math.floor((Date.now() - burrow.startedAt) / 1000),
        rssBytes: mem.rss,
        heapUsedBytes: mem.heapUsed,
        heapTotalBytes: mem.heapTotal,
        externalBytes: mem.external,
        stores,
        push,
        code: burrow.code.stats(),
        live: burrow.live.figures(),
        hooks: { queues, ...burrow.hooks.stats() },
        operations: burrow.ops.figures(),
      });
      return new Response(text, { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
    },
    {
      detail: {
        tags: ["health"],
        summary: "Metrics in the Prometheus text format (off unless --metrics)",
        description:
          "Requests and latency histograms by area and status class, store and WAL sizes, push queue depths, custom code calls, memory. With BURROW_METRICS_TOKEN set, send Authorization: Bearer <token>.",
      },
    },
  );
}
