// Request figures (src/system/request-stats.ts) with a clock of the test's own, their Prometheus text
// (src/system/prometheus.ts), the request log ring's filters, and JSON log lines.

import { describe, expect, test } from "bun:test";
import { AREAS, FINE_BOUNDS, PROM_BOUNDS, RequestStats } from "../../src/system/request-stats.ts";
import { labelValue, prometheusText } from "../../src/system/prometheus.ts";
import { RequestLogRing } from "../../src/system/request-log-ring.ts";
import { createLogger } from "../../src/log.ts";

function clock(start = Date.UTC(2026, 10, 23, 12, 0, 0)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("RequestStats", () => {
  test("counts, errors and rate per area over the window", () => {
    const c = clock();
    const s = new RequestStats(c.now);
    c.advance(60_000);
    for (let i = 0; i < 90; i++) s.record("data", 200, 2);
    for (let i = 0; i < 5; i++) s.record("data", 503, 2);
    for (let i = 0; i < 5; i++) s.record("data", 404, 1);
    s.record("users", 201, 150);
    const f = s.summary(60);
    expect(f.data).toMatchObject({ requests: 100, serverErrors: 5, clientErrors: 5, errorRate: 0.05 });
    expect(f.data.rate).toBeCloseTo(100 / 60, 2);
    expect(f.users.requests).toBe(1);
    expect(f.code).toMatchObject({ requests: 0, p50: null, p95: null, p99: null });
  });

  test("percentiles are exact to within one 25% bucket", () => {
    const s = new RequestStats(clock().now);
    for (let i = 1; i <= 1000; i++) s.record("data", 200, i / 10); // 0.1 .. 100 ms
    const f = s.summary(60).data;
    for (const [q, v] of [
      [f.p50, 50],
      [f.p95, 95],
      [f.p99, 99],
    ] as const) {
      expect(q!).toBeGreaterThanOrEqual(v);
      expect(q!).toBeLessThanOrEqual(v * 1.25 + 0.01);
    }
    // A slow request past the last bucket reads as the overflow bound, not Infinity (JSON has no Infinity).
    const slow = new RequestStats(clock().now);
    slow.record("code", 200, 120_000);
    expect(slow.summary(60).code.p99).toBeGreaterThan(FINE_BOUNDS.at(-1)!);
    expect(Number.isFinite(slow.summary(60).code.p99!)).toBe(true);
  });

  test("minutes older than the window drop out; the series lists minutes that saw requests", () => {
    const c = clock();
    const s = new RequestStats(c.now);
    s.record("push", 200, 5);
    c.advance(30 * 60_000);
    s.record("push", 500, 5);
    s.record("admin", 200, 5);
    expect(s.summary(60).push.requests).toBe(2);
    expect(s.summary(10).push.requests).toBe(1);
    const series = s.series();
    expect(series.length).toBe(2);
    expect(series[1]!.requests[AREAS.indexOf("admin")]).toBe(1);
    expect(series[1]!.serverErrors[AREAS.indexOf("push")]).toBe(1);
    c.advance(61 * 60_000);
    expect(s.summary(60).push.requests).toBe(0);
    expect(s.series()).toEqual([]);
    // A slot reused an hour later starts from zero.
    s.record("push", 200, 5);
    expect(s.summary(60).push.requests).toBe(1);
  });

  test("after the clock went back, a record never empties a newer minute", () => {
    const c = clock();
    const s = new RequestStats(c.now);
    s.record("files", 200, 1);
    c.advance(2 * 60 * 60_000); // same slot two hours later
    s.record("files", 200, 1);
    expect(s.summary(60).files.requests).toBe(1);
    // The clock steps back an hour (NTP on a board without a real-time clock) onto the slot a newer minute holds:
    // that record counts since start, not in the minute.
    c.advance(5 * 60_000);
    s.record("files", 200, 1);
    c.advance(-60 * 60_000);
    s.record("files", 200, 1);
    c.advance(60 * 60_000);
    expect(s.summary(60).files.requests).toBe(2);
    expect(s.totals[AREAS.indexOf("files") * 5 + 1]).toBe(4);
  });
});

describe("Prometheus text", () => {
  const gauges = {
    version: "1.2.3",
    uptimeSeconds: 42,
    rssBytes: 1000,
    heapUsedBytes: 500,
    stores: { system: { db: 4096, wal: 0 } },
    push: { development: { depth: 3, retrying: 1, leased: 0, oldestAgeMs: 1500, tokens: 7 } },
    code: { running: true, bundles: 1, calls: 9, failures: 1, inFlight: 0 },
    live: { streams: 4, subscriptions: 6, delivered: 120, lagMs: 45 },
    hooks: { queues: { development: { queued: 12, oldestMs: 2500, dead: 1 } }, ran: 30, failed: 2, waits: 5 },
  };

  test("counters by status class and a cumulative histogram per area", () => {
    const s = new RequestStats(clock().now);
    s.record("data", 200, 0.5);
    s.record("data", 200, 30);
    s.record("data", 404, 3000);
    const text = prometheusText(s, gauges);
    expect(text).toContain('burrow_http_requests_total{area="data",status="2xx"} 2');
    expect(text).toContain('burrow_http_requests_total{area="data",status="4xx"} 1');
    expect(text).toContain('burrow_http_request_duration_seconds_bucket{area="data",le="0.001"} 1');
    expect(text).toContain('burrow_http_request_duration_seconds_bucket{area="data",le="0.05"} 2');
    expect(text).toContain('burrow_http_request_duration_seconds_bucket{area="data",le="5"} 3');
    expect(text).toContain('burrow_http_request_duration_seconds_bucket{area="data",le="+Inf"} 3');
    expect(text).toContain('burrow_http_request_duration_seconds_count{area="data"} 3');
    expect(text).toContain('burrow_push_queue_depth{env="development"} 3');
    expect(text).toContain('burrow_push_queue_oldest_seconds{env="development"} 1.500');
    expect(text).toContain("burrow_code_calls_total 9");
    expect(text).toContain("burrow_live_streams 4");
    expect(text).toContain("burrow_live_events_total 120");
    expect(text).toContain("burrow_live_lag_seconds 0.045");
    expect(text).toContain('burrow_hooks_queued{env="development"} 12');
    expect(text).toContain('burrow_hooks_oldest_seconds{env="development"} 2.500');
    expect(text).toContain('burrow_hooks_dead{env="development"} 1');
    expect(text).toContain("burrow_hooks_run_total 30");
    expect(text).toContain("burrow_hooks_write_waits_total 5");
    expect(text).toContain('burrow_build_info{version="1.2.3"} 1');
    // Every sample line is "<name>{labels} <number>" and every metric has HELP and TYPE.
    for (const line of text.trim().split("\n")) {
      if (line.startsWith("#")) expect(line).toMatch(/^# (HELP|TYPE) [a-z_]+ .+$/);
      else expect(line).toMatch(/^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[\d.e+]+$/);
    }
    const buckets = text
      .split("\n")
      .filter((l) => l.startsWith('burrow_http_request_duration_seconds_bucket{area="data"'))
      .map((l) => Number(l.split(" ")[1]));
    expect(buckets.length).toBe(PROM_BOUNDS.length + 1);
    expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
  });

  test("label values are escaped", () => {
    expect(labelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd');
  });
});

describe("RequestLogRing", () => {
  test("newest first, filtered, paged, bounded", () => {
    const ring = new RequestLogRing(5);
    const add = (status: number, area: "data" | "admin", env = "development") =>
      ring.add({ time: 1, method: "GET", area, path: "/x", status, ms: 1, env });
    add(200, "data");
    add(404, "data");
    add(500, "admin", "-");
    add(201, "data");
    add(503, "data");
    add(200, "data"); // pushes the first entry out
    expect(ring.list({ limit: 100 }).map((e) => e.id)).toEqual([6, 5, 4, 3, 2]);
    expect(ring.list({ limit: 100, status: "5xx" }).map((e) => e.id)).toEqual([5, 3]);
    expect(ring.list({ limit: 100, status: "404" }).map((e) => e.id)).toEqual([2]);
    expect(ring.list({ limit: 100, area: "admin" }).map((e) => e.id)).toEqual([3]);
    expect(ring.list({ limit: 2 }).map((e) => e.id)).toEqual([6, 5]);
    expect(ring.list({ limit: 2, before: 5 }).map((e) => e.id)).toEqual([4, 3]);
    expect(ring.list({ limit: 100, env: "-" }).map((e) => e.id)).toEqual([3]);
  });
});

test("JSON log lines: one object with time, level, msg and the fields, which cannot override those three", () => {
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l), "json");
  log.info("request", { method: "GET", status: 200, msg: "spoof", level: "error" });
  log.debug("hidden");
  expect(lines.length).toBe(1);
  const o = JSON.parse(lines[0]!);
  expect(o).toMatchObject({ level: "info", msg: "request", method: "GET", status: 200 });
  expect(Date.parse(o.time)).toBeGreaterThan(0);
});
