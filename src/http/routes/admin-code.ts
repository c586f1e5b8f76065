// The admin API's "test a call" of custom code (the console's code screen): call a method of development or of a
// production version as a server-side caller (the private key's principal) with chosen parameters and body, and
// see its status, headers, body and time. Upload, source and logs are PUT/GET /_admin/api/code and /logs.

import { Elysia } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import type { ApiContext } from "../../request-context.ts";
import { callMethod, methodOf } from "../method-call.ts";
import type { Services } from "../services.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";
import { adminDataContext } from "../admin-context.ts";

const VERBS = ["GET", "POST", "PUT", "DELETE"] as const;
type Verb = (typeof VERBS)[number];
const MEMBERS = ["env", "method", "verb", "params", "body", "version"];
/** A method's answer is shown as text up to this size (the rest is cut with a note). */
const MAX_SHOWN = 256 * 1024;

export function adminCodeRoutes(services: Services, parsers: BodyParsers) {
  return new Elysia({ name: "admin-code", prefix: "/_admin/api/code" })
    .use(parsers)
    .use(adminGuard(services))
    .post("/call", async ({ request, body }) => {
      if (!isObj(body)) throw badRequest('send {"env", "method", "verb", "params", "body"}');
      for (const k of Object.keys(body)) if (!MEMBERS.includes(k)) throw badRequest(`unknown member "${k.slice(0, 32)}"; members: ${MEMBERS.join(", ")}`);
      const env = typeof body.env === "string" ? body.env : "development";
      const verb = (body.verb ?? "POST") as Verb;
      if (!VERBS.includes(verb)) throw badRequest(`verb must be one of ${VERBS.join(", ")}`);
      if (typeof body.method !== "string" || !/^[a-z][a-z0-9_]{0,63}$/.test(body.method)) throw badRequest("method must be a method name");
      const params = body.params ?? {};
      if (!isObj(params) || !Object.values(params).every((v) => typeof v === "string")) throw badRequest("params must be an object of strings");
      if (body.body !== undefined && typeof body.body !== "string") throw badRequest("body must be a string (the raw request body)");
      if (body.version !== undefined && (typeof body.version !== "number" || !Number.isSafeInteger(body.version) || body.version < 1)) throw badRequest("version must be a positive integer");
      const url = new URL(request.url);
      const ctx: ApiContext = { ...adminDataContext(services, env, body.version === undefined ? null : String(body.version), url.origin), principal: { kind: "app" } };
      const method = methodOf(services, ctx, body.method);
      if (!method) throw notFound(`there is no method "${body.method}" in ${ctx.env}${ctx.env === "production" ? ` version ${ctx.version}` : ""}`);
      const target = new URL(`/${body.method}`, url.origin);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v as string);
      const hasBody = verb === "POST" || verb === "PUT";
      const headers: Record<string, string> = hasBody ? { "content-type": "application/json" } : {};
      const call = new Request(target.href, { method: verb, body: hasBody ? ((body.body as string | undefined) ?? "") : null, headers });
      const started = performance.now();
      const answer = await callMethod(services, ctx, call, method, verb);
      const text = await answer.text();
      return json({
        status: answer.status,
        headers: Object.fromEntries(answer.headers),
        body: text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}\n… (${text.length} characters in all)` : text,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
    }, {
      parse: "admin",
      detail: {
        tags: ["admin"],
        summary: "Call a custom code method as a server-side caller",
        description: "{\"env\": \"development\"|\"production\", \"method\", \"verb\": GET|POST|PUT|DELETE, \"params\": {name: value}, \"body\": \"<raw body>\", \"version\"?: N}. Answers {status, headers, body, ms}; the method's own errors are its answer, not this route's.",
        security: [{ adminBearer: [] }],
        ...S.jsonBody(S.AnyObject),
      },
    });
}
