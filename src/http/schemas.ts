// Request and response shapes of the routes whose shapes are fixed, as Elysia `t` schemas: they validate input
// where a route declares them as body/query, and they describe responses in the OpenAPI document. Datastore
// bodies are defined by the app's own schemas, so those routes are described in prose (openapi-docs.ts).

import { type DocumentDecoration, type TSchema, t } from "elysia";
import { MAX_API_VERSION } from "./accept.ts";

/** An integer; plain t.Integer would be documented as "integer or integer-looking string" (Elysia coerces those). */
const int = (opts: { description?: string; minimum?: number; maximum?: number } = {}) => t.Number({ multipleOf: 1, ...opts });

/** A JSON request body for the document (routes with a named parser declare their content type here). */
export function jsonBody(schema: TSchema, description?: string): Pick<DocumentDecoration, "requestBody"> {
  const content = { "application/json": { schema: schema as object } };
  return { requestBody: description === undefined ? { required: true, content } : { required: true, description, content } };
}

export const ErrorBody = t.Object(
  {
    error: t.String({ description: "what went wrong, precise enough to act on" }),
    error_description: t.Optional(t.String({ description: "token endpoints: details of an OAuth error code" })),
  },
  { description: "every failure: the status says the class, `error` the cause" },
);

/** The error responses a route can give, each with the one error body. */
export function errors(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
}

/** A JSON object whose members are defined elsewhere (a datastore object, a settings document). */
export const AnyObject = t.Object({}, { additionalProperties: true });

export const Health = t.Object({ status: t.Literal("ok"), version: t.String(), uptimeSeconds: int() });

export const AdminLogin = t.Object({ email: t.String({ format: "email" }), password: t.String() });
export const AdminSession = t.Object({
  token: t.String({ description: "send as Authorization: Bearer <token>" }),
  expires_in: int({ description: "seconds" }),
});

const KeyPair = t.Object({ publicKey: t.String(), privateKey: t.String() });
export const Keys = t.Object({ development: KeyPair, production: KeyPair });

export const SchemaVersionQuery = t.Object({
  version: t.Optional(t.String({ pattern: "^\\d{1,7}$", description: "0 or absent: development; N: production API version N" })),
});
export const SchemaPutQuery = t.Object({
  ...SchemaVersionQuery.properties,
  force: t.Optional(t.String({ description: "true: allow destructive changes (dropping or retyping fields)" })),
  dryRun: t.Optional(t.String({ description: "true: answer the plan without changing anything" })),
});

export const DeployRequest = t.Optional(
  t.Object(
    {
      version: t.Optional(
        int({ minimum: 1, maximum: MAX_API_VERSION, description: "the production version to create (default: the next one)" }),
      ),
      force: t.Optional(t.Boolean({ description: "deploy even when the plan has destructive changes" })),
      dryRun: t.Optional(t.Boolean({ description: "answer the plan without deploying" })),
    },
    { additionalProperties: false },
  ),
);
export const DeployResult = t.Object(
  {
    version: int(),
    changes: t.Array(t.String()),
    warnings: t.Array(t.String({ description: "one line per production schema whose update or delete is open" })),
  },
  { additionalProperties: true },
);
export const DeployHistory = t.Array(
  t.Object({
    version: int(),
    created: int(),
    admin: t.Union([t.String(), t.Null()]),
    schemas: t.Array(t.String()),
    methods: t.Array(t.String({ description: "custom code methods in this version" })),
    changes: t.Array(t.String()),
  }),
);

export const Status = t.Object({
  version: t.String(),
  startedAt: t.String({ format: "date-time" }),
  uptimeSeconds: int(),
  environments: t.Record(t.String(), AnyObject),
  requests: t.Optional(
    t.Record(t.String(), AnyObject, {
      description: "per area over the last hour: requests, rate (per second), serverErrors, clientErrors, errorRate, p50, p95, p99 (ms)",
    }),
  ),
  series: t.Optional(
    t.Array(AnyObject, { description: "per minute of the last hour: t, and per area (areas order) requests, serverErrors, p95" }),
  ),
  areas: t.Optional(t.Array(t.String())),
  stores: t.Optional(AnyObject),
  push: t.Optional(AnyObject),
  code: t.Optional(AnyObject),
  process: t.Optional(AnyObject),
  lastBackup: t.Optional(t.Union([AnyObject, t.Null()])),
});

export const OutboxQuery = t.Object({
  env: t.Optional(t.String({ description: "development or production" })),
  limit: t.Optional(t.String({ pattern: "^\\d{1,4}$" })),
});

/** The OAuth 2.0 MAC token response of accessToken and refreshToken (the user object travels with it). */
export const TokenResponse = t.Object(
  {
    access_token: t.String(),
    mac_key: t.Optional(t.String({ description: "MAC tokens only" })),
    mac_algorithm: t.Optional(t.Literal("hmac-sha-1", { description: "MAC tokens only" })),
    token_type: t.Union([t.Literal("mac"), t.Literal("bearer")]),
    expires_in: int({ description: "seconds" }),
    refresh_token: t.String(),
  },
  { additionalProperties: true },
);
/** accessToken / refreshToken parameters, sent as a form or JSON (GET: the query string). */
export const TokenParams = t.Record(t.String(), t.String(), {
  description:
    "grant_type (password, email_code, mfa, passkey) with its parameters (the login field and password; username and code; mfa_token and code; the passkey assertion), or refresh_token; token_type=mac (default) or bearer",
});
