// Stored files of binary fields: GET (and HEAD) /_files/<env>/<id>/<name>, the URLs written into the fields. Like
// every other route, it first picks up a configuration changed on another node when a look is due.

import { Elysia } from "elysia";
import { notFound } from "../../errors.ts";
import type { Burrow } from "../burrow.ts";
import { isEnvName } from "../../system/environments.ts";
import { ErrorBody } from "../schemas.ts";
import { FILE_ANSWER_HEADERS } from "../../files/store.ts";

export function fileRoutes(burrow: Burrow) {
  return new Elysia({ name: "files" }).get(
    "/_files/:env/:id/:name",
    async ({ request, params, set }) => {
      // Refusals too carry the files' headers (Elysia merges set.headers into the error's answer).
      Object.assign(set.headers, FILE_ANSWER_HEADERS);
      if (!isEnvName(params.env) || !/^[0-9a-f]{32}$/.test(params.id) || params.name === null) throw notFound("file not found");
      // Where files are (settings files.store) may have been changed on another node.
      const due = burrow.refreshIfDue();
      if (due) await due;
      return burrow.files.serve(params.env, burrow.envDbs[params.env], `${params.env}/${params.id}/${params.name}`, request);
    },
    {
      detail: {
        tags: ["files"],
        summary: "A stored file of a binary field (the URL written into the field)",
        description:
          "Answers the bytes with the recorded Content-Type and ETag; honours Range (206), If-None-Match (304) and HEAD. Images (not SVG), audio, video, PDF and plain text are offered inline, every other type as an attachment; every answer carries X-Content-Type-Options: nosniff and Content-Security-Policy: default-src 'none'; sandbox. With an S3 store it redirects to a presigned URL.",
        responses: {
          200: { description: "the file" },
          206: { description: "the requested range" },
          304: { description: "not modified" },
          404: { description: "no such file", content: { "application/json": { schema: ErrorBody } } },
        },
      },
    },
  );
}
