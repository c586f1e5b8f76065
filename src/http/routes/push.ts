// The push API under /_push (docs/api/push.md): device tokens,
// sends into the durable queue, the expired-token list, and the legacy `*_universal` endpoints of the original
// iOS push client. Registering and removing tokens takes the public key; sending and reading expired tokens
// take the private key (OAuth 1.0) unless the environment's push.clientSend setting allows clients.

import { Elysia } from "elysia";
import { badRequest, unauthorized } from "../../errors.ts";
import type { ApiContext } from "../../request-context.ts";
import type { Target } from "../../push/queue.ts";
import { sendTarget, userOf } from "../../push/targets.ts";
import { type TokenType, normalizeToken, parseTokenType } from "../../push/tokens.ts";
import type { Burrow } from "../burrow.ts";
import { apiContextStep } from "../api-context.ts";
import type { BodyParsers } from "../parsers.ts";
import type { RequestInfo } from "../request-meta.ts";
import { json } from "../respond.ts";
import { isPlainObject as isObj } from "../../plain-object.ts";

const tag = (summary: string, description?: string) => ({ tags: ["push"], summary, description });

export function pushRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { push } = burrow;
  const requireSender = (ctx: ApiContext) => {
    if (ctx.principal.kind !== "app" && !push.pushSettings(ctx.env).clientSend)
      throw unauthorized(
        "sending push notifications and reading expired tokens need the private key (OAuth 1.0), or the setting push.clientSend",
      );
  };
  const register = async (ctx: ApiContext, rawType: string, rawToken: string, body: unknown, overwrite: boolean) => {
    const type = parseTokenType(rawType);
    const b = body === undefined ? {} : body;
    if (!isObj(b)) throw badRequest('send {"user": "<username>"} or nothing');
    const token = normalizeToken(type, type === "web" && b.subscription !== undefined ? b.subscription : rawToken);
    await push.tokens(ctx.env).register(type, token, userOf(b.user), overwrite);
  };
  const send = async (ctx: ApiContext, target: Target, payload: unknown) => {
    requireSender(ctx);
    if (payload === undefined) throw badRequest("payload is missing");
    return push.send(ctx.env, target, payload);
  };
  /** A user's device tokens are that user's: only its own signature or session, or the private key, reads them. */
  const tokensOf = async (ctx: ApiContext, users: string[]) => {
    if (users.length > 1000) throw badRequest("at most 1000 users per call");
    const p = ctx.principal;
    if (p.kind !== "app" && !(p.kind === "user" && users.every((u) => u === p.username)))
      throw unauthorized(
        "reading a user's device tokens needs that user's own MAC signature or session cookie, or the private key (OAuth 1.0)",
      );
    return push.tokens(ctx.env).ofUsers(users);
  };
  const bodyObject = (body: unknown): Record<string, unknown> => {
    if (!isObj(body)) throw badRequest("send a JSON object");
    return body;
  };

  return (
    new Elysia({ name: "push", prefix: "/_push" })
      .use(parsers)
      .derive(apiContextStep(burrow, info))
      .post(
        "/tokens/:type/:token",
        async ({ api, params, body }) => {
          await register(await api, params.type, params.token, body, false);
          return json({});
        },
        {
          parse: "datastore",
          detail: tag(
            "Register a device token",
            'Body {"user": "<username>"} links it to a user (an existing link stays). Types ios, androidgcm (or android), web (the token is the URL-encoded PushSubscription JSON, or send {"subscription": {...}}).',
          ),
        },
      )
      .put(
        "/tokens/:type/:token",
        async ({ api, params, body }) => {
          await register(await api, params.type, params.token, body, true);
          return json({});
        },
        { parse: "datastore", detail: tag("Register a device token, replacing its user link") },
      )
      .delete(
        "/tokens/:type/:token",
        async ({ api, params }) => {
          const ctx = await api;
          const type = parseTokenType(params.type);
          await push.tokens(ctx.env).remove(type, normalizeToken(type, params.token));
          return json({});
        },
        { detail: tag("Remove a device token") },
      )
      .get(
        "/tokens",
        async ({ api, request }) => {
          const ctx = await api;
          const found = await tokensOf(ctx, new URL(request.url).searchParams.getAll("user"));
          return json(Object.fromEntries(Object.entries(found).map(([u, list]) => [u, list.map(({ type, token }) => ({ type, token }))])));
        },
        {
          detail: tag(
            "The tokens of users",
            'GET /_push/tokens?user=a&user=b answers {"a": [{"type", "token"}], "b": []}. A user reads its own tokens (MAC-signed or with its session cookie); other users\' need the private key (OAuth 1.0).',
          ),
        },
      )
      .post(
        "/notifications",
        async ({ api, body }) => {
          const b = bodyObject(body);
          const ctx = await api;
          return json(await send(ctx, sendTarget(b), b.payload));
        },
        {
          parse: "datastore",
          detail: tag(
            "Send a notification",
            '{"payload": {...}} broadcasts; add "tokens": [{"type", "token"}] or "users": ["name"] to target. Answers {"queued": n} once every delivery is stored. Payloads up to 256 bytes reach every platform, up to 1024 bytes Android and the web; larger ones are 400.',
          ),
        },
      )
      .get(
        "/expired_tokens",
        async ({ api, request }) => {
          const ctx = await api;
          requireSender(ctx);
          const clear = new URL(request.url).searchParams.get("clear");
          if (clear !== null && clear !== "true" && clear !== "false") throw badRequest("clear must be true or false");
          return json(await push.tokens(ctx.env).expired(clear === "true"));
        },
        {
          detail: tag(
            "Tokens the providers refused",
            '[{"type", "token", "expired": <UTC ms>}]; clear=true empties the list after answering it.',
          ),
        },
      )
      // The original iOS SDK's push client (docs/api/push.md#legacy-universal-endpoints).
      .post(
        "/register_device_token_universal",
        async ({ api, body }) => {
          const b = bodyObject(body);
          const t = isObj(b.token) ? b.token : {};
          await register(await api, String(t.type ?? ""), String(t.token ?? ""), { user: b.userId }, b.overwrite === true);
          return json({});
        },
        { parse: "datastore", detail: tag("Legacy: register a token", '{"userId", "token": {"token", "type"}, "overwrite"}') },
      )
      .post(
        "/remove_token_universal",
        async ({ api, body }) => {
          const b = bodyObject(body);
          const ctx = await api;
          const type = parseTokenType(b.type);
          await push.tokens(ctx.env).remove(type, normalizeToken(type, b.token));
          return json({});
        },
        { parse: "datastore", detail: tag("Legacy: remove a token") },
      )
      .post(
        "/push_broadcast_universal",
        async ({ api, body }) => {
          const b = bodyObject(body);
          return json(await send(await api, { kind: "broadcast" }, b.kvPairs));
        },
        { parse: "datastore", detail: tag("Legacy: broadcast", '{"kvPairs": {...}}') },
      )
      .post(
        "/push_users_universal",
        async ({ api, body }) => {
          const b = bodyObject(body);
          return json(await send(await api, sendTarget(b, "tokens", "userIds"), b.kvPairs));
        },
        { parse: "datastore", detail: tag("Legacy: send to users", '{"kvPairs": {...}, "userIds": [...]}') },
      )
      .post(
        "/push_tokens_universal",
        async ({ api, body }) => {
          const b = bodyObject(body);
          return json(await send(await api, sendTarget(b), isObj(b.payload) ? b.payload.kvPairs : undefined));
        },
        { parse: "datastore", detail: tag("Legacy: send to tokens", '{"tokens": [{"token", "type"}], "payload": {"kvPairs": {...}}}') },
      )
      .get(
        "/get_tokens_for_users_universal",
        async ({ api, request }) => {
          const ctx = await api;
          const found = await tokensOf(
            ctx,
            (new URL(request.url).searchParams.get("userIds") ?? "").split(",").filter((u) => u !== ""),
          );
          const tokens = Object.fromEntries(
            Object.entries(found).map(([u, list]) => [
              u,
              list.map((t) => ({ token: t.token, type: t.type as TokenType, registered_milliseconds: t.registered })),
            ]),
          );
          return json({ tokens });
        },
        {
          detail: tag(
            "Legacy: the tokens of users",
            '?userIds=a,b answers {"tokens": {"a": [{"token", "type", "registered_milliseconds"}]}}',
          ),
        },
      )
  );
}
