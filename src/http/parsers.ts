// Named body parsers of the Elysia app (a route picks one with `parse: "<name>"`). Each reads the body once
// through readText, which enforces the size limit (413) whether or not a length was declared, so signature
// checks can see the same text; malformed JSON is a 400 with the parser's message.

import { Elysia } from "elysia";
import type { Burrow } from "./burrow.ts";
import { parseJson, readJsonBody, readText } from "./body.ts";
import { objectBody, requestParams } from "./params.ts";

/** Admin bodies (schema definitions, settings) may be larger than API objects are allowed to be. */
const ADMIN_BODY_LIMIT = 4 * 1024 * 1024;

/** The parsers as a plugin: each route group uses it, so its routes may name them (and their types know them). */
export function bodyParsers(burrow: Burrow) {
  const limit = burrow.config.bodyLimit;
  return (
    new Elysia({ name: "burrow-body-parsers" })
      /** Datastore writes: JSON whatever the content type says; forms are refused. */
      .parser("datastore", ({ request }) => readJsonBody(request, limit))
      /** POST /<name>: the text, decoded by the route (a custom code method takes it raw, the datastore as JSON). */
      .parser("raw", ({ request }) => readText(request, limit))
      /** Token endpoints: string parameters from a form or a JSON object. */
      .parser("params", ({ request }) => requestParams(request, limit))
      /** Password endpoints: a JSON object or a form. */
      .parser("object", ({ request }) => objectBody(request, limit))
      /** The admin API: JSON. */
      .parser("admin", async ({ request }) => parseJson(await readText(request, ADMIN_BODY_LIMIT)))
  );
}

export type BodyParsers = ReturnType<typeof bodyParsers>;
