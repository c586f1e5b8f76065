// The links mailed to users: GET /_auth/verify?env=&schema=&username=&code=[&version=] confirms an email address
// when it is opened in a browser (no API key: the code is the proof). Answers a short plain-text page; refusals
// (wrong, expired or used codes) are plain text too, with their status.

import { Elysia } from "elysia";
import { ApiError, badRequest } from "../../errors.ts";
import type { Burrow } from "../burrow.ts";
import { adminDataContext } from "../admin-context.ts";
import { clientIp } from "../origin.ts";
import type { RequestInfo } from "../request-meta.ts";

const page = (status: number, text: string) =>
  new Response(`${text}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" },
  });

export function authLinkRoutes(burrow: Burrow, info: RequestInfo) {
  return new Elysia({ name: "auth-links" }).get(
    "/_auth/verify",
    async ({ request }) => {
      const q = new URL(request.url).searchParams;
      try {
        const env = q.get("env");
        const schema = q.get("schema");
        if (!env || !schema) throw badRequest("this link is incomplete; ask for a new verification mail");
        // The server's context of that environment (and production version), without its console marks.
        const { auth: _a, origin: _o, ...ctx } = adminDataContext(burrow, env, q.get("version"), new URL(request.url).origin);
        const s = burrow.accounts.userSchema(ctx, schema);
        await burrow.emailAccounts.verifyEmail(
          { ...ctx, principal: { kind: "anonymous" } },
          s,
          { username: q.get("username") ?? "", code: q.get("code") ?? "" },
          clientIp(request, info, burrow.config.trustedProxy),
        );
        return page(200, "Your email address is confirmed. You can close this page.");
      } catch (e) {
        if (e instanceof ApiError) return page(e.status, `This link did not confirm an email address: ${e.message}`);
        throw e;
      }
    },
    {
      detail: {
        tags: ["users"],
        summary: "Confirm an email address from the mailed link",
        description:
          "Opened from the verification mail (no API key: the code proves it). Query env, schema, username, code (and version in production). Plain text.",
      },
    },
  );
}
