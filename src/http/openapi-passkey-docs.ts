// OpenAPI descriptions of the passkey routes of user schemas (src/http/routes/users-passkeys.ts), in the words and
// shapes of the other user routes (src/http/openapi-docs.ts).

import { doc, empty, fail } from "./openapi-docs.ts";

const SIGNED = "Signed by the user (MAC or bearer token, or the session cookie).";
const options = (description: string) => ({
  description,
  content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
});
const passkey = {
  type: "object",
  properties: {
    id: { type: "string", description: "the credential id (base64url)" },
    name: { type: "string" },
    created: { type: "string", format: "date-time" },
    lastUsed: { type: ["string", "null"], format: "date-time" },
  },
};
const NOT_USER = fail("not a user schema");
const LIMITED = fail("too many requests; Retry-After");

export const passkeyDocs = {
  registerOptions: doc(
    "users",
    "Start registering a passkey: the creation options",
    `${SIGNED} Answers the PublicKeyCredentialCreationOptions (JSON) for navigator.credentials.create: the relying party (auth.passkeys.rpId, else the request's host; its name is app.name), a challenge valid 5 minutes and once, the user's passkeys in excludeCredentials, resident key and user verification required. No body. Example: curl -X POST -H "X-Service-API-Key: $KEY" -H "Authorization: Bearer $ACCESS" $URL/user/passkeys/registerOptions`,
    [],
    {
      200: options("the creation options"),
      400: fail("the user already holds 20 passkeys"),
      401: fail("not signed in to this schema"),
      404: NOT_USER,
      429: LIMITED,
    },
  ),
  register: doc(
    "users",
    "Finish registering a passkey",
    `${SIGNED} Body: the browser's registration response (PublicKeyCredential as JSON: id, rawId, type, response.clientDataJSON and attestationObject), optionally with "name", a label of at most 64 characters (default "Passkey"). Checked against the stored challenge, the relying party id and the allowed origins (auth.passkeys.origins, else the request's origin).`,
    [],
    {
      201: { description: "the passkey", content: { "application/json": { schema: passkey } } },
      400: fail("a bad body, an unknown, used or expired challenge, or a response that does not verify (with the reason)"),
      401: fail("not signed in to this schema"),
      404: NOT_USER,
      409: fail("this passkey is already registered"),
      429: LIMITED,
    },
    "the registration response, and an optional name",
  ),
  loginOptions: doc(
    "users",
    "Start a passkey login: the request options",
    'With the API key. Body {} (a discoverable passkey: allowCredentials is empty) or {"username": "…"} (allowCredentials lists its passkeys; a username with none, or unknown, gets one decoy credential, so the answer looks the same). Answers the PublicKeyCredentialRequestOptions (JSON) for navigator.credentials.get and a challenge_id for accessToken grant_type=passkey; the challenge is valid 5 minutes and once. Example: curl -H "X-Service-API-Key: $KEY" -H "Content-Type: application/json" -d \'{"username":"ann"}\' $URL/user/passkeys/loginOptions',
    [],
    {
      200: options("the request options and challenge_id"),
      400: fail("a bad body"),
      404: NOT_USER,
      429: LIMITED,
    },
    "{} or the username",
  ),
  list: doc(
    "users",
    "The signed-in user's passkeys",
    `${SIGNED} Answers {"passkeys": [{id, name, created, lastUsed}]}, oldest first; never the keys. On a schema without a user block this path reads the object of key "passkeys".`,
    [],
    {
      200: {
        description: "the passkeys",
        content: { "application/json": { schema: { type: "object", properties: { passkeys: { type: "array", items: passkey } } } } },
      },
      401: fail("not signed in to this schema"),
      404: NOT_USER,
      429: LIMITED,
    },
  ),
  remove: doc("users", "Remove one of the signed-in user's passkeys", `${SIGNED} The passkey stops signing in at once.`, [], {
    200: empty,
    401: fail("not signed in to this schema"),
    404: fail("not a user schema, or the user has no passkey of that id"),
    429: LIMITED,
  }),
};
