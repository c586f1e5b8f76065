// Which area of the API a request belonged to, for the request figures and the structured log: from the route
// Elysia matched (its pattern), and a mark custom code calls leave, since they share /<name> with the datastore.

import type { Area } from "../system/request-stats.ts";

/** Requests answered by a custom code method (marked by callMethod). */
export const codeCalls = new WeakSet<Request>();

/** The area of a request; `route` is the matched pattern ("/:schema/:id"), empty when no route matched. */
export function areaOf(route: string | undefined, request: Request): Area {
  const path = route || new URL(request.url).pathname;
  if (path.charCodeAt(1) === 95 /* "_" */) {
    if (path.startsWith("/_admin")) return "admin";
    if (path.startsWith("/_push")) return "push";
    if (path.startsWith("/_files")) return "files";
    if (path === "/_health" || path.startsWith("/_status") || path === "/_metrics") return "system";
    return "other";
  }
  if (codeCalls.has(request)) return "code";
  if (!route) return "other";
  // User and social endpoints are /:schema/<name>; the datastore's second segment is always a parameter.
  return route.length > 9 && route.startsWith("/:schema/") && route.charCodeAt(9) !== 58 /* ":" */ ? "users" : "data";
}
