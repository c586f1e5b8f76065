// The admin console at /_admin/ (docs/api/admin.md#console-and-reference-pages): its index page and hashed chunks (src/http/page-files.ts).
// Everything it shows comes from the admin JSON API under /_admin/api.

import { Elysia } from "elysia";
import type { Burrow } from "../burrow.ts";
import { pageFile, pageIndex } from "../page-files.ts";

const doc = (summary: string) => ({ detail: { tags: ["console"], summary } });

export function consoleRoutes(burrow: Burrow) {
  // Previews of image fields come from the files origin when there is one (--files-url).
  const images = burrow.config.filesUrl;
  return new Elysia({ name: "console" })
    .get(
      "/_admin/",
      ({ request }) => pageIndex("console", "/_admin", request, images),
      doc("The admin console's page (/_admin redirects here)"),
    )
    .get(
      "/_admin/:file",
      ({ params, request }) => pageFile("console", params.file, request),
      doc("A file of the admin console (hashed, cached for a year)"),
    );
}
