// Liveness: GET /_health answers as long as the process serves and its databases answer.

import { Elysia } from "elysia";
import type { Services } from "../services.ts";
import { json } from "../respond.ts";
import { Health, errors } from "../schemas.ts";

export function healthRoutes(services: Services) {
  return new Elysia({ name: "health" }).get("/_health", async () => {
    await services.system.execute("SELECT 1");
    return json({ status: "ok", version: services.version, uptimeSeconds: Math.floor((Date.now() - services.startedAt) / 1000) });
  }, { detail: { tags: ["health"], summary: "Liveness: the process serves and its databases answer" }, response: { 200: Health, ...errors(500) } });
}
