// The status page at /_status (docs/api/admin.md#status-metrics-and-health): its page and chunks, and /_status/data, the figures it charts
// (the same as GET /_admin/api/status). Public unless --status-admin-only, which asks for an admin's bearer token
// (any role) on the figures; the page then signs in through the console's token in the same tab.

import { Elysia } from "elysia";
import { ApiError } from "../../errors.ts";
import type { Burrow } from "../burrow.ts";
import { pageFile, pageIndex } from "../page-files.ts";
import { json } from "../respond.ts";
import { statusFigures } from "../status-figures.ts";
import { bearerToken } from "../admin-context.ts";

const doc = (summary: string, description?: string) => ({ detail: { tags: ["health"], summary, description } });

const SHARED_MS = 1000;

export function statusRoutes(burrow: Burrow) {
  // One computation per view serves every caller for a second: the page is public, and the queue figures scan the queue.
  const latest: Record<"admin" | "public", { at: number; value: Promise<Record<string, unknown>> } | null> = { admin: null, public: null };
  return new Elysia({ name: "status" })
    .get("/_status/", ({ request }) => pageIndex("status", "/_status", request), doc("The status page (/_status redirects here)"))
    .get(
      "/_status/data",
      async ({ request }) => {
        const token = bearerToken(request);
        const admin = token !== null && (await burrow.admins.authenticate(token)) !== null;
        if (burrow.config.statusAdminOnly && !admin)
          throw new ApiError(401, "the status page needs an admin: sign in to the console (/_admin/) in this tab first", {
            headers: { "www-authenticate": 'Bearer realm="burrow-admin"' },
          });
        const view = admin ? "admin" : "public";
        let current = latest[view];
        if (!current || Date.now() - current.at > SHARED_MS)
          current = latest[view] = { at: Date.now(), value: statusFigures(burrow, new URL(request.url).origin, false, admin) };
        const mine = current;
        mine.value.catch(() => latest[view] === mine && (latest[view] = null));
        return json(await mine.value, 200, { "cache-control": "no-store" });
      },
      doc(
        "The status page's figures",
        "Version, uptime, requests per area over the last hour (rate, p50/p95/p99, errors) with a per-minute series, store and WAL sizes, push queues, custom code, memory: public unless the server runs with --status-admin-only. Schema names and object counts (`environments`) only with an admin's bearer token (the console's, in the same tab).",
      ),
    )
    .get(
      "/_status/:file",
      ({ params, request }) => pageFile("status", params.file, request),
      doc("A file of the status page (hashed, cached for a year)"),
    );
}
