// /_live (docs/api/live.md): create a stream (signed as any call), connect to it with its token (Server-Sent Events,
// or a WebSocket on the same URL), and change its subscriptions and channels (as the stream's caller). Connecting
// needs no API key, so that a browser's EventSource works as it is: the stream's id names its environment and its
// secret token proves the client holds it.

import { Elysia } from "elysia";
import { badRequest, unauthorized } from "../../errors.ts";
import { resumeAfter } from "../../live/live.ts";
import { SseSink, WsSink, type WsData } from "../../live/sinks.ts";
import { envOfStream } from "../../live/stream-store.ts";
import { rateKeyOfIp } from "../../net/ip.ts";
import { apiContextStep } from "../api-context.ts";
import type { Burrow } from "../burrow.ts";
import { clientIp } from "../origin.ts";
import type { BodyParsers } from "../parsers.ts";
import { checkPathParams } from "../path-params.ts";
import type { RequestInfo } from "../request-meta.ts";
import { json } from "../respond.ts";
import * as S from "../schemas.ts";

const tag = (summary: string, description = "") => ({ tags: ["live"], summary, description });

export function liveRoutes(burrow: Burrow, info: RequestInfo, parsers: BodyParsers) {
  const { live } = burrow;
  const ipOf = (request: Request) => {
    const ip = clientIp(request, info, burrow.config.trustedProxy);
    return ip === null ? null : rateKeyOfIp(ip);
  };

  return (
    new Elysia({ name: "live", prefix: "/_live" })
      .use(parsers)
      // Connecting comes before the group's context step: it carries the stream's token, not an API key.
      .get(
        "/streams/:id",
        async ({ request, params, server }) => {
          checkPathParams(params, request);
          const env = envOfStream(params.id);
          const url = new URL(request.url);
          const token = url.searchParams.get("token");
          if (env === null || !token)
            throw unauthorized("invalid stream or token: GET /_live/streams/<stream>?token=<token> from POST /_live/streams");
          const after = resumeAfter(request.headers.get("last-event-id"), url.searchParams.get("after"));
          const ip = ipOf(request);
          const { stream, bufferBytes } = await live.open(env, params.id, token, ip);
          if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
            const data: WsData = {
              open(ws) {
                const sink = new WsSink(ws, bufferBytes, () => live.disconnect(stream, sink));
                ws.data.sink = sink;
                void live.connect(stream, sink, after, ip);
              },
              close(ws) {
                ws.data.sink?.gone("closed");
              },
              drain(ws) {
                ws.data.sink?.drained();
              },
            };
            if (server?.upgrade(request, { data })) return;
            throw badRequest("the WebSocket upgrade failed");
          }
          const sink = new SseSink(bufferBytes, () => live.disconnect(stream, sink));
          request.signal.addEventListener("abort", () => sink.close(), { once: true });
          // The stream sends something every 15 s; no idle timeout applies to it.
          server?.timeout(request, 0);
          void live.connect(stream, sink, after, ip);
          return sink.response;
        },
        {
          detail: tag(
            "Connect to a stream",
            "Server-Sent Events (EventSource reconnects with Last-Event-ID), or a WebSocket with Upgrade: websocket carrying the same messages as {id, event, data}. ?token=<token> (no API key); ?after=<id> resumes like Last-Event-ID. Refusals: 400 (a bad Last-Event-ID), 401 (a wrong token, an expired stream or ended session), 429 (open streams per client address).",
          ),
        },
      )
      .derive(apiContextStep(burrow, info))
      .post("/streams", async ({ api }) => json(await live.createStream(await api), 201), {
        response: { 201: S.AnyObject, ...S.errors(401, 404) },
        detail: tag(
          "Create a stream",
          "Acts as the caller (API key, MAC signature, cookie session or OAuth 1.0) in its environment and version.",
        ),
      })
      .put(
        "/streams/:id/subscriptions/:name",
        async ({ api, params, body }) => {
          await live.putSubscription(await api, params.id, params.name, body);
          return json({});
        },
        {
          parse: "object",
          detail: tag("Add or replace a subscription", 'Body {"schema", "query", "select", "events"}; signed as the stream\'s caller.'),
        },
      )
      .delete(
        "/streams/:id/subscriptions/:name",
        async ({ api, params }) => {
          await live.deleteSubscription(await api, params.id, params.name);
          return json({});
        },
        { response: { 200: S.AnyObject, ...S.errors(400, 401) }, detail: tag("Remove a subscription") },
      )
      .put(
        "/streams/:id/channels/:channel",
        async ({ api, params }) => {
          await live.joinChannel(await api, params.id, params.channel);
          return json({});
        },
        { response: { 200: S.AnyObject, ...S.errors(400, 401, 429) }, detail: tag("Join a public:<name> channel") },
      )
      .delete(
        "/streams/:id/channels/:channel",
        async ({ api, params }) => {
          await live.leaveChannel(await api, params.id, params.channel);
          return json({});
        },
        { response: { 200: S.AnyObject, ...S.errors(400, 401) }, detail: tag("Leave a channel") },
      )
  );
}
