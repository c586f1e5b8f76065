// Liveness: GET /_health answers as long as the process serves and its system database answers (one SELECT 1; the
// environment databases are not asked, so a health check stays as cheap as it is frequent).

import { Elysia } from "elysia";
import type { Burrow } from "../burrow.ts";
import { json } from "../respond.ts";
import { Health, errors } from "../schemas.ts";

export function healthRoutes(burrow: Burrow) {
  return new Elysia({ name: "health" }).get(
    "/_health",
    async () => {
      await burrow.system.execute("SELECT 1");
      return json({ status: "ok", version: burrow.version, uptimeSeconds: Math.floor((Date.now() - burrow.startedAt) / 1000) });
    },
    {
      detail: { tags: ["health"], summary: "Liveness: the process serves and its system database answers" },
      response: { 200: Health, ...errors(500, 503) },
    },
  );
}
