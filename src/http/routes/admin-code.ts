// The admin API's custom code routes (the console's code screen): upload development's code, read the code of
// development or of a production version, remove development's, and "test a call": call a method as a server-side
// caller (the private key's principal) with chosen parameters and body, and see its status, headers, body and
// time. Its log lines are GET /_admin/api/logs.

import { Elysia, t } from "elysia";
import { badRequest, notFound } from "../../errors.ts";
import { MAX_BUNDLE_BYTES } from "../../code/bundle.ts";
import { CodeError } from "../../code/code-error.ts";
import { readText } from "../body.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";
import type { ApiContext } from "../../request-context.ts";
import { callMethod, methodOf } from "../method-call.ts";
import type { Burrow } from "../burrow.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";
import { adminDataContext, adminDoc as admin, versionParam } from "../admin-context.ts";

const VERBS = ["GET", "POST", "PUT", "DELETE"] as const;
type Verb = (typeof VERBS)[number];
const MEMBERS = ["env", "method", "verb", "params", "body", "version"];
/** A method's answer is shown as text up to this size (the rest is cut with a note). */
const MAX_SHOWN = 256 * 1024;

export function adminCodeRoutes(burrow: Burrow, parsers: BodyParsers) {
  const { catalog } = burrow;
  return new Elysia({ name: "admin-code", prefix: "/_admin/api" })
    .use(parsers)
    .use(adminGuard(burrow))
    .put(
      "/code",
      async ({ request }) => {
        const url = new URL(request.url);
        const lang = url.searchParams.get("lang") ?? (/typescript/i.test(request.headers.get("content-type") ?? "") ? "ts" : "auto");
        if (lang !== "js" && lang !== "ts" && lang !== "auto") throw badRequest("lang must be js, ts or auto");
        const source = await readText(request, MAX_BUNDLE_BYTES);
        try {
          return json(await burrow.code.upload(source, lang));
        } catch (e) {
          if (e instanceof CodeError) return json({ error: e.message, ...(e.line !== undefined ? { line: e.line } : {}) }, 400);
          throw e;
        }
      },
      {
        role: "editor",
        parse: "none",
        query: t.Object({
          lang: t.Optional(
            t.String({
              description:
                "js, ts or auto (default: JavaScript unless it only parses as TypeScript; Content-Type text/typescript means ts)",
            }),
          ),
        }),
        detail: {
          ...admin(
            "Upload development's custom code",
            "The body is one ES module (JavaScript or TypeScript) exporting `methods`. It is compiled and loaded before it is stored; a compile or load error is 400 with the line. A method may not have a schema's name.",
          ),
          requestBody: {
            required: true,
            content: { "application/javascript": { schema: { type: "string" } }, "text/typescript": { schema: { type: "string" } } },
          },
        },
        response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 413) },
      },
    )
    .get(
      "/code",
      ({ request }) => {
        const v = versionParam(new URL(request.url));
        if (v !== 0 && !catalog.versions().includes(v)) throw notFound(`API version ${v} is not deployed`);
        const code = v === 0 ? burrow.code.development() : burrow.code.production(v);
        if (!code)
          throw notFound(
            v === 0 ? "development has no custom code; PUT /_admin/api/code uploads it" : `API version ${v} has no custom code`,
          );
        return json(code);
      },
      {
        role: "viewer",
        query: S.SchemaVersionQuery,
        detail: admin("Custom code of development or of a production version: source, methods, updated"),
        response: { 200: S.AnyObject, ...S.errors(400, 401, 404) },
      },
    )
    .delete(
      "/code",
      async () => {
        if (!(await burrow.code.remove())) throw notFound("development has no custom code");
        return json({});
      },
      {
        role: "editor",
        detail: admin("Remove development's custom code (production versions keep theirs)"),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404) },
      },
    )
    .post(
      "/code/call",
      async ({ request, body }) => {
        if (!isObj(body)) throw badRequest('send {"env", "method", "verb", "params", "body"}');
        for (const k of Object.keys(body))
          if (!MEMBERS.includes(k)) throw badRequest(`unknown member "${k.slice(0, 32)}"; members: ${MEMBERS.join(", ")}`);
        const env = typeof body.env === "string" ? body.env : "development";
        const verb = (body.verb ?? "POST") as Verb;
        if (!VERBS.includes(verb)) throw badRequest(`verb must be one of ${VERBS.join(", ")}`);
        if (typeof body.method !== "string" || !/^[a-z][a-z0-9_]{0,63}$/.test(body.method))
          throw badRequest("method must be a method name");
        const params = body.params ?? {};
        if (!isObj(params) || !Object.values(params).every((v) => typeof v === "string"))
          throw badRequest("params must be an object of strings");
        if (body.body !== undefined && typeof body.body !== "string") throw badRequest("body must be a string (the raw request body)");
        if (body.version !== undefined && (typeof body.version !== "number" || !Number.isSafeInteger(body.version) || body.version < 1))
          throw badRequest("version must be a positive integer");
        const url = new URL(request.url);
        const ctx: ApiContext = {
          ...adminDataContext(burrow, env, body.version === undefined ? null : String(body.version), url.origin),
          principal: { kind: "app" },
        };
        const method = methodOf(burrow, ctx, body.method);
        if (!method)
          throw notFound(`there is no method "${body.method}" in ${ctx.env}${ctx.env === "production" ? ` version ${ctx.version}` : ""}`);
        const target = new URL(`/${body.method}`, url.origin);
        for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v as string);
        const hasBody = verb === "POST" || verb === "PUT";
        const headers: Record<string, string> = hasBody ? { "content-type": "application/json" } : {};
        const call = new Request(target.href, { method: verb, body: hasBody ? ((body.body as string | undefined) ?? "") : null, headers });
        const started = performance.now();
        const answer = await callMethod(burrow, ctx, call, method, verb);
        const text = await answer.text();
        return json({
          status: answer.status,
          headers: Object.fromEntries(answer.headers),
          body: text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}\n… (${text.length} characters in all)` : text,
          ms: Math.round((performance.now() - started) * 10) / 10,
        });
      },
      {
        role: "editor",
        parse: "admin",
        detail: {
          tags: ["admin"],
          summary: "Call a custom code method as a server-side caller",
          description:
            '{"env": "development"|"production", "method", "verb": GET|POST|PUT|DELETE, "params": {name: value}, "body": "<raw body>", "version"?: N}. Answers {status, headers, body, ms}; the method\'s own errors are its answer, not this route\'s.',
          security: [{ adminBearer: [] }],
          ...S.jsonBody(S.AnyObject),
        },
      },
    );
}
