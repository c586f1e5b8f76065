// OpenAPI descriptions of the datastore and user routes. Their bodies are defined by the app's own schemas, so
// they are described in prose and with the headers and query operators every such route shares; the routes
// attach these as their `detail`.

import type { DocumentDecoration } from "elysia";
import { ErrorBody, TokenParams, TokenResponse } from "./schemas.ts";
import { SESSION_COOKIE } from "../auth/session-cookie.ts";

type Param = { name: string; in: "header" | "query"; description: string; required?: boolean; schema: { type: "string" } };
const header = (name: string, description: string, required = false): Param => ({
  name,
  in: "header",
  description,
  required,
  schema: { type: "string" },
});

const API_HEADERS = [
  header("X-Service-API-Key", "the environment's public key (not needed with an OAuth 1.0 signature)"),
  header("Accept", "application/vnd.service+json; version=N: 0 is development, N >= 1 a production API version"),
];
const READ_HEADERS = [
  header(
    "X-Service-Select",
    "comma-separated fields to return (the key always comes); dotted paths reach into expanded relationships, <path>.* all of one",
  ),
  header("X-Service-Expand", "relationship expansion depth, 0 to 3 (also the _expand query parameter)"),
];

const object = {
  description: "the object as JSON: its key and every field that has a value (NULL fields are omitted), createddate, lastmoddate, sm_owner",
  content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
};
const objects = {
  description: "a JSON array of objects",
  content: { "application/json": { schema: { type: "array", items: { type: "object", additionalProperties: true } } } },
};
export const empty = { description: "done: {}", content: { "application/json": { schema: { type: "object" } } } };
export const fail = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });
const FAILS = {
  400: fail("bad input, with the reason"),
  401: fail("no valid key, signature or permission"),
  404: fail("no such schema or object"),
};

const QUERY_PROSE = `Conditions are query parameters: \`field=value\` (equality), \`field[op]=value\` with op one of ne, lt, lte, gt,
gte, null (true/false), empty (true/false), in and nin (comma-separated), near (lat,lon[,radius]: sorted by
distance; each answered geopoint carries distance beside lat and lon) and within (lat,lon,radius or a box lat1,lon1,lat2,lon2);
distances and radii are radians of a great circle (km = radians × 6367.5). Conditions are ANDed;
one OR block is written \`[or1].field=…\`, with AND groups inside it as \`[or1].[and1].field=…\`. Headers:
X-Service-OrderBy (\`field:asc,other:desc\`), Range (\`objects=0-19\`: a 206 with Content-Range when it is a strict part),
X-Service-Select and X-Service-Expand. Only objects the caller may read are returned or counted.`;

export const doc = (
  tag: string,
  summary: string,
  description: string,
  extra: Param[],
  responses: Record<number, unknown>,
  body?: string,
): DocumentDecoration => ({
  tags: [tag],
  summary,
  description,
  security: [{ apiKey: [] }, { mac: [] }, { oauth1: [] }, { apiKey: [], sessionCookie: [] }, { oauth1: [], sessionCookie: [] }],
  parameters: [...API_HEADERS, ...extra],
  ...(body
    ? {
        requestBody: {
          required: true,
          description: body,
          content: { "application/json": { schema: { oneOf: [{ type: "object" as const }, { type: "array" as const, items: {} }] } } },
        },
      }
    : {}),
  responses: responses as DocumentDecoration["responses"],
});

export const objectDocs = {
  list: doc(
    "datastore",
    "Query objects of a schema",
    QUERY_PROSE,
    [
      ...READ_HEADERS,
      header("X-Service-OrderBy", "field:asc or field:desc, comma-separated"),
      header("Range", "objects=<first>-<last> (or <first>-)"),
    ],
    { 200: objects, 206: objects, ...FAILS },
  ),
  create: doc(
    "datastore",
    "Create an object, or a batch",
    "A JSON object creates one (201, answered whole); an array of up to 1000 creates a batch ({succeeded: [keys], failed: [keys or indexes]}). With X-Service-Relations (`field=schema&field.sub=schema`), nested objects are created or updated in one transaction (nested upsert). Binary fields take the upload format (Content-Type, Content-Disposition, base64). In development, unknown schemas and fields are inferred.",
    [header("X-Service-Relations", "the schemas of nested objects, as field=schema pairs joined with &")],
    {
      200: { description: "a batch's outcome, or an upsert that changed an existing object" },
      201: object,
      ...FAILS,
      409: fail("the key exists"),
      413: fail("the body is larger than the limit"),
    },
    "the object (or an array of objects); fields as the schema defines them",
  ),
  removeWhere: doc(
    "datastore",
    "Delete the objects that match conditions",
    "Takes the conditions of a query (at least one; [near] is refused). ?<key>=<id> deletes one object and is 404 when it does not exist.",
    [],
    { 200: empty, ...FAILS },
  ),
  get: doc(
    "datastore",
    "Read one object by key",
    "X-Service-Select and X-Service-Expand (or _expand) shape the object as they shape lists; HEAD answers the headers only.",
    READ_HEADERS,
    { 200: object, ...FAILS },
  ),
  update: doc(
    "datastore",
    "Update some fields of an object",
    "Only the fields sent change; `field[inc]: n` adds n atomically; null clears a field; X-Service-Relations as for create. Answers the whole object.",
    [header("X-Service-Relations", "the schemas of nested objects")],
    { 200: object, ...FAILS },
    "the fields to change",
  ),
  remove: doc("datastore", "Delete an object by key", "Its stored files go with it; relationships pointing to it are not changed.", [], {
    200: empty,
    ...FAILS,
  }),
  createRelated: doc(
    "datastore",
    "Create related objects and append their keys",
    "The body is an object (one-to-one) or an array of objects created in the relationship's schema; their keys are appended to the parent's field in one transaction.",
    [],
    { 200: { description: "{succeeded, failed}" }, ...FAILS },
    "the related object(s)",
  ),
  append: doc(
    "datastore",
    "Append values to an array or relationship field",
    "The body is an array of values (keys for a relationship); appends are atomic.",
    [],
    { 200: object, ...FAILS },
    "an array of values",
  ),
  callMethod: doc(
    "custom code",
    "Call a custom code method (any verb)",
    "When the first path segment names a custom code method of the API version, GET, POST, PUT and DELETE call it: GET and DELETE pass the method's declared URL parameters, PUT and POST the raw body (JSON or text; forms are refused). The method chooses the status, headers and body (JSON, text or bytes). PUT on a schema is 405.",
    [],
    {
      200: { description: "the method's answer" },
      405: fail("a schema, not a method"),
      500: fail("the method failed or hit a limit (time, memory, stack)"),
    },
  ),
  pull: doc(
    "datastore",
    "Remove values from an array or relationship field",
    "Values are comma-separated, each percent-encoded. X-Service-CascadeDelete: true also deletes the related objects the caller may delete.",
    [header("X-Service-CascadeDelete", "true: delete the pulled related objects too")],
    { 200: empty, ...FAILS },
  ),
};

const TOKEN_PROSE = "On a schema with a user block. Parameters come as a form, as JSON, or (GET) in the query string.";
const tokens = (description: string) => ({ description, content: { "application/json": { schema: TokenResponse } } });
const tokenParams: Pick<DocumentDecoration, "requestBody"> = {
  requestBody: {
    required: true,
    content: {
      "application/x-www-form-urlencoded": { schema: TokenParams as object },
      "application/json": { schema: TokenParams as object },
    },
  },
};
const LOGIN = doc(
  "users",
  "Log in: exchange credentials for an OAuth 2.0 token pair (MAC or bearer)",
  `${TOKEN_PROSE} grant_type=password (the schema's login field and password), email_code (username and a mailed code), mfa (mfa_token and a TOTP or recovery code) or passkey; token_type=mac (default) or bearer. Rate-limited per IP and per account. Examples: curl -H "X-Service-API-Key: $KEY" -d "username=ann&password=secret&token_type=bearer" $URL/user/accessToken; with a mailed code -d "grant_type=email_code&username=ann&code=123456"; after mfa_required -d "grant_type=mfa&mfa_token=$MFA_TOKEN&code=654321"; with a passkey --data-urlencode grant_type=passkey --data-urlencode "assertion=$ASSERTION" --data-urlencode challenge_id=$ID.`,
  [],
  {
    200: tokens("the token pair and the user object"),
    400: fail("bad parameters"),
    401: fail("invalid credentials (or a temporary password that must be reset); email_not_verified; mfa_required with mfa_token"),
    404: fail("not a user schema"),
    429: fail("too many attempts; Retry-After"),
  },
);
export const userDocs = {
  accessTokenGet: LOGIN,
  accessToken: { ...LOGIN, ...tokenParams },
  refreshToken: {
    ...doc(
      "users",
      "Rotate the token pair with the refresh token",
      `${TOKEN_PROSE} Reusing a rotated refresh token revokes its whole family.`,
      [],
      {
        200: tokens("a new token pair"),
        400: fail("bad parameters"),
        401: fail("unknown, expired or reused refresh token"),
        404: fail("not a user schema"),
      },
    ),
    ...tokenParams,
  },
  login: doc(
    "users",
    "Legacy session login: a session cookie for the login field and password",
    `The login of the original Java/Android SDK in OAuth 1.0 mode: GET with the schema's login field and password (and new_password after a temporary password) in the query, OAuth 1.0-signed or with the public key. Checks the password as accessToken does (same rate limits) and answers the user object with \`Set-Cookie: ${SESSION_COOKIE}=…; Path=/; Expires=…; Max-Age=3600; HttpOnly; SameSite=Lax\` (Secure before HttpOnly over https). Later calls that send the cookie together with the API key or an OAuth 1.0 signature act as that user; logout ends the session. Any cookie on this call is ignored.`,
    [
      { name: "username", in: "query", description: "the login field (the schema's key)", required: true, schema: { type: "string" } },
      { name: "password", in: "query", description: "the password field", required: true, schema: { type: "string" } },
    ],
    {
      200: object,
      400: fail("bad parameters"),
      401: fail("Invalid username or password (or a temporary password that must be reset)"),
      404: fail("not a user schema"),
      429: fail("too many attempts; Retry-After"),
    },
  ),
  logout: doc(
    "users",
    "End the caller's session",
    "MAC-signed or with the session cookie; revokes the token pair or the cookie session (then the cookie is replaced by an expired `session_burrow=logged:out`, no session).",
    [],
    { 200: empty, 401: fail("not signed in"), 404: fail("not a user schema") },
  ),
  loggedInUser: doc(
    "users",
    "The signed-in user's object",
    "MAC-signed or with the session cookie; X-Service-Select and X-Service-Expand are not applied.",
    [],
    { 200: object, 401: fail("not signed in"), 404: fail("not a user schema") },
  ),
  forgotPassword: doc(
    "users",
    "Mail a temporary password",
    'Body: {"<loginField>": "…"}. The mail goes to the user\'s email field; the temporary password is valid 24 hours and must be replaced with resetPassword.',
    [],
    {
      200: empty,
      400: fail("a body that is not an object"),
      401: fail("not enabled for the schema, no such user or no email address"),
      404: fail("not a user schema"),
      429: fail("too many requests"),
      502: fail("the SMTP server refused the mail"),
    },
    "the login field",
  ),
  requestCode: doc(
    "users",
    "Mail a sign-in code",
    'Body {"username": "…"}. A 6-digit code valid 10 minutes, used once with accessToken grant_type=email_code; five wrong codes void it. The answer is the same whoever the username names (at most 5 mails per user an hour). Example: curl -H "X-Service-API-Key: $KEY" -H "Content-Type: application/json" -d \'{"username":"ann"}\' $URL/user/requestCode',
    [],
    {
      200: empty,
      400: fail("a bad body, or no email field on the schema"),
      404: fail("not a user schema"),
      429: fail("too many requests"),
    },
    "the username",
  ),
  requestVerification: doc(
    "users",
    "Mail a link and code that confirm the email address",
    'Body {"username": "…"}, on a schema with user.verifyEmail. The answer is the same whoever the username names (at most 5 mails per user an hour). Example: curl -H "X-Service-API-Key: $KEY" -H "Content-Type: application/json" -d \'{"username":"ann"}\' $URL/user/requestVerification',
    [],
    {
      200: empty,
      400: fail("a bad body, or the schema does not verify emails"),
      404: fail("not a user schema"),
      429: fail("too many requests"),
    },
    "the username",
  ),
  verifyEmail: doc(
    "users",
    "Confirm the email address with the mailed code",
    'Body {"username": "…", "code": "123456"}: the user with emailverified true. Counts against the failed-login limit. Example: curl -H "X-Service-API-Key: $KEY" -H "Content-Type: application/json" -d \'{"username":"ann","code":"123456"}\' $URL/user/verifyEmail',
    [],
    {
      200: { description: "the user object" },
      400: fail("a bad body"),
      401: fail("a wrong, expired or used code"),
      404: fail("not a user schema"),
      429: fail("too many attempts; Retry-After"),
    },
    "the username and code",
  ),
  resetPassword: doc(
    "users",
    "Set a new password",
    'MAC-signed or with the session cookie, body {"old": {"password": "…"}, "new": {"password": "…"}}.',
    [],
    { 200: empty, 400: fail("bad parameters"), 401: fail("not signed in or wrong old password"), 404: fail("not a user schema") },
    "old and new password",
  ),
};
