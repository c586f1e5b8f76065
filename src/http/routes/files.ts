// Stored files of binary fields: GET (and HEAD) /_files/<env>/<id>/<name>, the URLs written into the fields.

import { notFound } from "../../errors.ts";
import type { Services } from "../../services.ts";
import { isEnvName } from "../../system/environments.ts";
import { Routes } from "../router.ts";

export function fileRoutes(services: Services) {
  return new Routes().get("/_files/:env/:id/:name", ({ request, params }) => {
    if (!isEnvName(params.env) || !/^[0-9a-f]{32}$/.test(params.id)) throw notFound("file not found");
    return services.files.serve(params.env, services.envDbs[params.env], `${params.env}/${params.id}/${params.name}`, request);
  });
}
