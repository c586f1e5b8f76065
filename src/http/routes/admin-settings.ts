// The admin API's settings routes (owners only, but the form's description): an environment's settings (secrets
// shown as set or not), changing them, both environments' API keys, a test mail through an environment's mail
// settings, and the settings form (types, limits, defaults of every setting), so the console draws settings the
// server knows without a copy of the spec of its own.

import { Elysia, t } from "elysia";
import { ApiError, badRequest } from "../../errors.ts";
import type { Burrow } from "../burrow.ts";
import { ENVIRONMENTS, isEnvName } from "../../system/environments.ts";
import { describeSettings, redactSettings } from "../../system/settings.ts";
import type { BodyParsers } from "../parsers.ts";
import { adminGuard } from "../admin-guard.ts";
import { adminDoc as admin, environmentOf } from "../admin-context.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

/** POST /mail/test: whose mail settings to use, and to whom. */
const MailTest = t.Object(
  {
    env: t.String({ enum: [...ENVIRONMENTS], description: "whose mail settings to use" }),
    to: t.String({ description: "one email address" }),
  },
  { additionalProperties: false },
);

export function adminSettingRoutes(burrow: Burrow, parsers: BodyParsers) {
  const spec = describeSettings();
  return new Elysia({ name: "admin-settings", prefix: "/_admin/api" })
    .use(parsers)
    .use(adminGuard(burrow))
    .get(
      "/settings/:env",
      ({ params }) => {
        return json(redactSettings(burrow.settings.get(environmentOf(params.env))));
      },
      {
        role: "owner",
        params: t.Object({ env: t.String({ description: "development or production" }) }),
        detail: admin("An environment's settings, secrets shown as {set: true|false} (owners only)"),
        response: { 200: S.AnyObject, ...S.errors(401, 403, 404) },
      },
    )
    .put(
      "/settings/:env",
      async ({ params, body }) => {
        const env = environmentOf(params.env);
        return json(redactSettings(await burrow.settings.update(env, body, burrow.push.validateSettings)));
      },
      {
        role: "owner",
        parse: "admin",
        params: t.Object({ env: t.String({ description: "development or production" }) }),
        body: S.AnyObject,
        detail: {
          ...admin(
            "Change an environment's settings (owners only)",
            "A partial settings document (app, smtp, cors, rateLimits, files, ...); unknown keys and wrong types are 400.",
          ),
          ...S.jsonBody(S.AnyObject, "a partial settings document"),
        },
        response: { 200: S.AnyObject, ...S.errors(400, 401, 403, 404) },
      },
    )
    .get(
      "/keys",
      () => {
        return json(burrow.keys.set);
      },
      {
        role: "owner",
        detail: admin("Both environments' public and private API keys (owners only)"),
        response: { 200: S.Keys, ...S.errors(401, 403) },
      },
    )
    .post(
      "/mail/test",
      async ({ admin, body }) => {
        if (!isEnvName(body.env)) throw badRequest("env must be development or production");
        const env = body.env;
        // A subject of its own, so a failure's full (redacted) SMTP error can be found in the outbox record.
        const subject = `${(burrow.settings.get(env).app as { name: string }).name}: test mail ${crypto.randomUUID().slice(0, 8)}`;
        const text = `This is a test mail from Burrow's ${env} environment, sent by ${admin.email} at ${new Date().toISOString()}.\nIt arrived, so the mail settings work.\n`;
        try {
          const sent = await burrow.mailer.send(env, { to: body.to, subject, text });
          return json({ sent: true, via: sent.via });
        } catch (e) {
          if (!(e instanceof ApiError) || e.status !== 502) throw e;
          const failed = (await burrow.mailer.outbox({ env, limit: 50 })).find((m) => m.subject === subject && m.error);
          throw new ApiError(502, `the test mail could not be sent: ${failed?.error ?? e.message}`);
        }
      },
      {
        role: "owner",
        parse: "admin",
        body: MailTest,
        detail: {
          ...admin(
            "Send a test mail with an environment's mail settings (owners only)",
            "Through SMTP when a host is set, else into the outbox. An SMTP failure is 502 with the SMTP server's error (passwords removed).",
          ),
          ...S.jsonBody(MailTest),
        },
        response: { 200: t.Object({ sent: t.Boolean(), via: t.String({ enum: ["smtp", "outbox"] }) }), ...S.errors(400, 401, 403, 502) },
      },
    )
    .get("/settings-spec", () => json(spec), {
      role: "viewer",
      detail: admin(
        "Every setting with its type, limits and per-environment defaults",
        "Leaves are {type, secret?, url?, min?, max?, oneOf?, default: {development, production}} (secrets have no default shown); other members are sections.",
      ),
      response: { 200: S.AnyObject, ...S.errors(401, 403) },
    });
}
