// OpenAPI descriptions of the second-factor routes of user schemas (src/http/routes/users-mfa.ts), in the words
// and shapes of the other user routes (src/http/openapi-docs.ts).

import { doc, empty, fail } from "./openapi-docs.ts";

const SIGNED = "Signed by the user (MAC or bearer token, or the session cookie).";
const answer = (description: string, properties: Record<string, unknown>) => ({
  description,
  content: { "application/json": { schema: { type: "object", properties } } },
});

export const mfaDocs = {
  status: doc(
    "users",
    "The signed-in user's second factor",
    `${SIGNED} On a schema without a user block this path reads the object of key "mfa".`,
    [],
    {
      200: answer("whether TOTP is off, pending (not confirmed yet) or on, and how many recovery codes are unused", {
        totp: { type: "string", enum: ["off", "pending", "on"] },
        recovery_codes_left: { type: "integer" },
      }),
      401: fail("not signed in to this schema"),
      404: fail("not a user schema"),
      429: fail("too many requests"),
    },
  ),
  enrol: doc(
    "users",
    "Start TOTP enrolment: a new secret",
    `${SIGNED} Answers a new base32 secret and its otpauth:// URL (for a QR code); the factor stays pending until confirmed, and a new POST replaces a pending one. RFC 6238: SHA-1, 6 digits, 30-second steps. Example: curl -X POST -H "X-Service-API-Key: $KEY" -H "Authorization: Bearer $ACCESS" $URL/user/mfa/totp`,
    [],
    {
      200: answer("the secret and its otpauth URL", { secret: { type: "string" }, otpauth_url: { type: "string" } }),
      401: fail("not signed in to this schema"),
      404: fail("not a user schema"),
      409: fail("TOTP is already on"),
      429: fail("too many requests"),
    },
  ),
  confirm: doc(
    "users",
    "Turn TOTP on with a first code",
    `${SIGNED} Body {"code": "123456"}, a current code of the pending secret. Answers ten recovery codes, shown this once; each signs in once in place of a code. From now on a password login answers 401 mfa_required with an mfa_token (accessToken grant_type=mfa completes it). Example: curl -H "X-Service-API-Key: $KEY" -H "Authorization: Bearer $ACCESS" -H "Content-Type: application/json" -d '{"code":"123456"}' $URL/user/mfa/totp/confirm`,
    [],
    {
      200: answer("the recovery codes", { recovery_codes: { type: "array", items: { type: "string" } } }),
      400: fail("no code"),
      401: fail("not signed in, or a wrong code"),
      404: fail("not a user schema"),
      409: fail("nothing pending, or TOTP already on"),
      429: fail("too many requests"),
    },
    "the code",
  ),
  disable: doc(
    "users",
    "Turn TOTP off",
    `${SIGNED} Body {"code": "…"}: a current code (or an unused recovery code); a pending enrolment is dropped without one. Wrong codes count against the failed-login limit.`,
    [],
    {
      200: empty,
      400: fail("no code"),
      401: fail("not signed in, or a wrong or already used code"),
      404: fail("not a user schema"),
      409: fail("TOTP is off"),
      429: fail("too many attempts; Retry-After"),
    },
    "the code",
  ),
};
