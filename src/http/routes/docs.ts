// The API reference at /_admin/docs/: a page of the server's own (static/docs/, src/http/page-files.ts) that reads
// the OpenAPI description from /_admin/api/openapi.json. Public, like the description: both describe the API's
// shape and hold no data. The routes are handler functions, so on a listening server Bun's native router serves
// these static paths itself; the datastore's `/:schema/:id` would otherwise claim /_admin/docs (answering 405).

import { Elysia } from "elysia";
import { pageFile, pageIndex } from "../page-files.ts";

const doc = (summary: string) => ({ detail: { tags: ["console"], summary } });

export function docsRoutes() {
  return new Elysia({ name: "docs" })
    .get(
      "/_admin/docs/",
      ({ request }) => pageIndex("docs", "/_admin/docs", request),
      doc("The API reference page (/_admin/docs redirects here)"),
    )
    .get(
      "/_admin/docs/:file",
      ({ params, request }) => pageFile("docs", params.file, request),
      doc("A file of the API reference page (hashed, cached for a year)"),
    );
}
