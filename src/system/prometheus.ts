// The Prometheus text exposition format (version 0.0.4) of Burrow's figures. Pure: it formats what it is given.

import type { OperationsFigures } from "./operations.ts";
import { AREAS, PROM_BOUNDS, type RequestStats } from "./request-stats.ts";

/** The custom code threads' memory as they report it: JS heap in use (memory outside it included), memory held
 * outside the heap (mostly the sandboxes' linear memory), and the collections the threads ran themselves. */
export interface ThreadMemory {
  heapBytes: number;
  externalBytes: number;
  collections: number;
}

/** Custom code figures of this process (status page, /_metrics). */
export interface CodeFigures {
  running: boolean;
  bundles: number;
  calls: number;
  failures: number;
  inFlight: number;
  /** The code threads' memory as they last reported it. */
  threadMemory?: ThreadMemory;
}

export interface GaugeFigures {
  uptimeSeconds: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** JavaScript heap reserved, and memory held outside it by JS objects (buffers, SQLite statements): process.memoryUsage(). */
  heapTotalBytes?: number;
  externalBytes?: number;
  stores: Record<string, { db: number; wal: number }>;
  push: Record<string, { depth: number; retrying: number; leased: number; oldestAgeMs: number | null; tokens: number }>;
  code: CodeFigures;
  live: { streams: number; subscriptions: number; delivered: number; lagMs: number };
  /** After-hook queues by environment, and this process's runs since start. */
  hooks?: { queues: Record<string, { queued: number; oldestMs: number; dead: number }>; ran: number; failed: number; waits: number };
  /** Load shedding, disk and store reachability (operations.ts). */
  operations?: OperationsFigures;
  version: string;
}

const STATUS_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/** A label value escaped as the format asks (backslash, double quote, newline). */
export function labelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function prometheusText(stats: RequestStats, g: GaugeFigures): string {
  const out: string[] = [];
  const metric = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

  metric("burrow_build_info", "gauge", "The running Burrow version.");
  out.push(`burrow_build_info{version="${labelValue(g.version)}"} 1`);
  metric("burrow_uptime_seconds", "gauge", "Seconds since this process started.");
  out.push(`burrow_uptime_seconds ${g.uptimeSeconds}`);

  metric("burrow_http_requests_total", "counter", "Requests answered, by area and status class.");
  AREAS.forEach((area, a) => {
    STATUS_CLASSES.forEach((cls, c) => {
      const n = stats.totals[a * 5 + c]!;
      if (n > 0) out.push(`burrow_http_requests_total{area="${area}",status="${cls}"} ${n}`);
    });
  });

  metric("burrow_http_request_duration_seconds", "histogram", "Time from a request's arrival to its response, by area.");
  AREAS.forEach((area, a) => {
    const base = a * (PROM_BOUNDS.length + 1);
    let cumulative = 0;
    PROM_BOUNDS.forEach((le, b) => {
      cumulative += stats.promBuckets[base + b]!;
      out.push(`burrow_http_request_duration_seconds_bucket{area="${area}",le="${le}"} ${cumulative}`);
    });
    cumulative += stats.promBuckets[base + PROM_BOUNDS.length]!;
    out.push(`burrow_http_request_duration_seconds_bucket{area="${area}",le="+Inf"} ${cumulative}`);
    out.push(`burrow_http_request_duration_seconds_sum{area="${area}"} ${stats.promSum[a]!.toFixed(6)}`);
    out.push(`burrow_http_request_duration_seconds_count{area="${area}"} ${cumulative}`);
  });

  metric("burrow_store_bytes", "gauge", "Size of each database file and its write-ahead log.");
  for (const [store, s] of Object.entries(g.stores)) {
    out.push(`burrow_store_bytes{store="${labelValue(store)}",file="db"} ${s.db}`);
    out.push(`burrow_store_bytes{store="${labelValue(store)}",file="wal"} ${s.wal}`);
  }

  metric("burrow_push_queue_depth", "gauge", "Push deliveries waiting, by environment.");
  for (const [env, p] of Object.entries(g.push)) out.push(`burrow_push_queue_depth{env="${env}"} ${p.depth}`);
  metric("burrow_push_queue_retrying", "gauge", "Push deliveries waiting for a retry, by environment.");
  for (const [env, p] of Object.entries(g.push)) out.push(`burrow_push_queue_retrying{env="${env}"} ${p.retrying}`);
  metric("burrow_push_queue_oldest_seconds", "gauge", "Age of the oldest waiting push delivery, by environment (0 when none waits).");
  for (const [env, p] of Object.entries(g.push))
    out.push(`burrow_push_queue_oldest_seconds{env="${env}"} ${((p.oldestAgeMs ?? 0) / 1000).toFixed(3)}`);
  metric("burrow_push_tokens", "gauge", "Registered device tokens, by environment.");
  for (const [env, p] of Object.entries(g.push)) out.push(`burrow_push_tokens{env="${env}"} ${p.tokens}`);

  metric("burrow_code_running", "gauge", "1 when custom code's threads run in this process.");
  out.push(`burrow_code_running ${g.code.running ? 1 : 0}`);
  metric("burrow_code_bundles", "gauge", "Custom code bundles loaded (development and production versions).");
  out.push(`burrow_code_bundles ${g.code.bundles}`);
  metric("burrow_code_calls_total", "counter", "Custom code method calls since start.");
  out.push(`burrow_code_calls_total ${g.code.calls}`);
  metric("burrow_code_failures_total", "counter", "Custom code method calls that failed since start.");
  out.push(`burrow_code_failures_total ${g.code.failures}`);
  metric("burrow_code_calls_in_flight", "gauge", "Custom code method calls running now.");
  out.push(`burrow_code_calls_in_flight ${g.code.inFlight}`);
  if (g.code.threadMemory) {
    metric("burrow_code_thread_heap_bytes", "gauge", "JavaScript heap in use on the custom code threads, summed.");
    out.push(`burrow_code_thread_heap_bytes ${g.code.threadMemory.heapBytes}`);
    metric(
      "burrow_code_thread_external_bytes",
      "gauge",
      "Memory held outside the heap on the custom code threads (sandboxes' linear memory, reserved).",
    );
    out.push(`burrow_code_thread_external_bytes ${g.code.threadMemory.externalBytes}`);
    metric(
      "burrow_code_thread_collections_total",
      "counter",
      "Full collections the custom code threads ran themselves (each after their own heap grew by 2 MB).",
    );
    out.push(`burrow_code_thread_collections_total ${g.code.threadMemory.collections}`);
  }

  metric("burrow_live_streams", "gauge", "Live streams connected to this process.");
  out.push(`burrow_live_streams ${g.live.streams}`);
  metric("burrow_live_subscriptions", "gauge", "Subscriptions of the live streams connected to this process.");
  out.push(`burrow_live_subscriptions ${g.live.subscriptions}`);
  metric("burrow_live_events_total", "counter", "Live events handed to connections since start.");
  out.push(`burrow_live_events_total ${g.live.delivered}`);
  metric("burrow_live_lag_seconds", "gauge", "How long after it was written the newest change reached the connected streams.");
  out.push(`burrow_live_lag_seconds ${(g.live.lagMs / 1000).toFixed(3)}`);

  if (g.hooks) {
    metric("burrow_hooks_queued", "gauge", "Changes waiting for their after-hooks, by environment.");
    for (const [env, h] of Object.entries(g.hooks.queues)) out.push(`burrow_hooks_queued{env="${env}"} ${h.queued}`);
    metric("burrow_hooks_oldest_seconds", "gauge", "Age of the oldest change waiting for its after-hooks, by environment.");
    for (const [env, h] of Object.entries(g.hooks.queues))
      out.push(`burrow_hooks_oldest_seconds{env="${env}"} ${(h.oldestMs / 1000).toFixed(3)}`);
    metric("burrow_hooks_dead", "gauge", "Changes whose after-hook failed every try, by environment.");
    for (const [env, h] of Object.entries(g.hooks.queues)) out.push(`burrow_hooks_dead{env="${env}"} ${h.dead}`);
    metric("burrow_hooks_run_total", "counter", "After-hooks this process ran to the end since start.");
    out.push(`burrow_hooks_run_total ${g.hooks.ran}`);
    metric("burrow_hooks_failures_total", "counter", "After-hook tries that failed in this process since start.");
    out.push(`burrow_hooks_failures_total ${g.hooks.failed}`);
    metric("burrow_hooks_write_waits_total", "counter", "Client writes this process held back while the after-hook queue was far behind.");
    out.push(`burrow_hooks_write_waits_total ${g.hooks.waits}`);
  }

  if (g.operations) {
    const { shedding: sh, disk, store } = g.operations;
    metric("burrow_shed_requests_total", "counter", "Requests refused with 503 because the server was overloaded.");
    out.push(`burrow_shed_requests_total ${sh.shed}`);
    metric("burrow_admitted_requests_total", "counter", "Requests admitted by load shedding (when it is on).");
    out.push(`burrow_admitted_requests_total ${sh.admitted}`);
    metric("burrow_admit_fraction", "gauge", "Share of ordinary requests admitted now (1 when not overloaded).");
    out.push(`burrow_admit_fraction ${sh.admitFraction}`);
    metric("burrow_queue_seconds", "gauge", "How late the event loop runs now: the wait before a request's turn.");
    out.push(`burrow_queue_seconds ${(sh.queueMs / 1000).toFixed(4)}`);
    metric("burrow_requests_in_flight", "gauge", "Requests being answered now.");
    out.push(`burrow_requests_in_flight ${sh.inFlight}`);
    if (disk.freeBytes !== null) {
      metric("burrow_disk_free_bytes", "gauge", "Free space on the data directory's file system.");
      out.push(`burrow_disk_free_bytes ${disk.freeBytes}`);
    }
    metric("burrow_disk_full", "gauge", "1 while writes are refused because the data directory's disk is full.");
    out.push(`burrow_disk_full ${disk.full ? 1 : 0}`);
    metric("burrow_disk_full_refusals_total", "counter", "Writes refused (507) for a full disk since start.");
    out.push(`burrow_disk_full_refusals_total ${disk.refusedWrites}`);
    metric("burrow_store_reachable", "gauge", "1 when the last call to the store got through.");
    out.push(`burrow_store_reachable ${store.reachable ? 1 : 0}`);
    metric("burrow_store_unreachable_total", "counter", "Requests refused (503) because the store could not be reached, since start.");
    out.push(`burrow_store_unreachable_total ${store.failures}`);
  }

  metric("process_resident_memory_bytes", "gauge", "Resident memory of the process.");
  out.push(`process_resident_memory_bytes ${g.rssBytes}`);
  metric("burrow_heap_used_bytes", "gauge", "JavaScript heap in use.");
  out.push(`burrow_heap_used_bytes ${g.heapUsedBytes}`);
  if (g.heapTotalBytes !== undefined) {
    metric("burrow_heap_total_bytes", "gauge", "JavaScript heap reserved.");
    out.push(`burrow_heap_total_bytes ${g.heapTotalBytes}`);
  }
  if (g.externalBytes !== undefined) {
    metric("burrow_external_memory_bytes", "gauge", "Memory held outside the JavaScript heap by JavaScript objects (buffers).");
    out.push(`burrow_external_memory_bytes ${g.externalBytes}`);
  }
  return `${out.join("\n")}\n`;
}
