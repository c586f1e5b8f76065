// Stored files of binary fields: GET (and HEAD) /_files/<env>/<id>/<name>, the URLs written into the fields.

import { Elysia } from "elysia";
import { notFound } from "../../errors.ts";
import type { Services } from "../../services.ts";
import { isEnvName } from "../../system/environments.ts";

export function fileRoutes(services: Services) {
  return new Elysia({ name: "files" }).get("/_files/:env/:id/:name", ({ request, params }) => {
    if (!isEnvName(params.env) || !/^[0-9a-f]{32}$/.test(params.id) || params.name === null) throw notFound("file not found");
    return services.files.serve(params.env, services.envDbs[params.env], `${params.env}/${params.id}/${params.name}`, request);
  });
}
