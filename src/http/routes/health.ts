// Liveness: GET /_health answers as long as the process serves and its databases answer.

import { Routes } from "../router.ts";
import type { Services } from "../../services.ts";
import { json } from "../respond.ts";

export function healthRoutes(services: Services) {
  return new Routes().get("/_health", async () => {
    await services.system.execute("SELECT 1");
    return json({ status: "ok", version: services.version, uptimeSeconds: Math.floor((Date.now() - services.startedAt) / 1000) });
  });
}
