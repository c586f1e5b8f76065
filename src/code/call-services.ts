// The services one method call may use (data, push, log, http, cache, config, live, mail), served on the main
// thread for the call's environment and API version: a Dispatch the runner hands to the guest for that call only.

import { badRequest } from "../errors.ts";
import { checkChannel } from "../live/channels.ts";
import type { Datastore } from "../datastore/datastore.ts";
import type { publicOnlyLookup } from "../net/public-address.ts";
import type { PushService } from "../push/push-service.ts";
import type { ApiContext } from "../request-context.ts";
import { LOG_LEVELS, type LogLevel, type LogStore } from "../system/logs.ts";
import type { Settings } from "../system/settings.ts";
import type { CodeCache } from "./code-cache.ts";
import type { Dispatch, ServiceOps } from "./sandbox.ts";
import { DATA_OPS, dataService } from "./services/data-service.ts";
import { HTTP_OPS, type HttpSettings, httpCall } from "./services/http-service.ts";
import { MAIL_OPS, type MailDeps, mailCall } from "./services/mail-service.ts";
import { PUSH_OPS, pushCall } from "./services/push-ops.ts";

/** What the guest's `services` object offers (the bootstrap builds it from this). */
export const SERVICE_OPS: ServiceOps = {
  data: DATA_OPS,
  push: PUSH_OPS,
  log: LOG_LEVELS,
  http: HTTP_OPS,
  cache: ["get", "set", "delete"],
  config: ["get"],
  live: ["publish"],
  mail: MAIL_OPS,
};

export interface ServiceDeps {
  data: Datastore;
  push: PushService;
  settings: Settings;
  logs: LogStore;
  cache: CodeCache;
  /** Live data's channel messages (src/live/live.ts). */
  live: { publish(env: ApiContext["env"], channel: string, data: unknown): Promise<void> };
  /** The mail service's sender (the Mailer) and the limiter counting code.mail.perHour. */
  mail: Omit<MailDeps, "settings">;
  /** Replaces the public-only DNS lookup of the http service (tests). */
  httpLookup?: ReturnType<typeof publicOnlyLookup>;
}

interface CodeSettings {
  http: HttpSettings;
  config: Record<string, string>;
}

/** The services of one call; `ctx` already has the system principal (custom code ignores permissions). */
export function callServices(deps: ServiceDeps, ctx: ApiContext, deadline: number): Dispatch {
  const env = ctx.env;
  let data: ReturnType<typeof dataService> | null = null;
  return async (service, op, args) => {
    switch (service) {
      case "data":
        data ??= dataService(deps.data, ctx);
        return data(op, args);
      case "push":
        return pushCall(deps.push, env, op, args);
      case "log": {
        if (!(LOG_LEVELS as readonly string[]).includes(op)) break;
        const [message, details] = args;
        deps.logs.append(
          env,
          "code",
          op as LogLevel,
          typeof message === "string" ? message : (JSON.stringify(message) ?? String(message)),
          details,
        );
        return undefined;
      }
      case "http":
        return httpCall(op, args, { settings: code(deps, ctx).http, deadline, lookup: deps.httpLookup });
      case "cache": {
        const [key, value, ttl] = args;
        if (op === "get") return deps.cache.get(env, key as string);
        if (op === "set")
          return deps.cache.set(env, key as string, value as string, ttl === undefined || ttl === null ? 0 : (ttl as number));
        if (op === "delete") return deps.cache.delete(env, key as string);
        break;
      }
      case "live": {
        if (op !== "publish") break;
        const [channel, payload] = args;
        await deps.live.publish(env, checkChannel(channel), payload);
        return undefined;
      }
      case "mail":
        return mailCall({ ...deps.mail, settings: deps.settings }, env, op, args);
      case "config": {
        if (op !== "get") break;
        const [key] = args;
        if (typeof key !== "string") throw badRequest("config.get: the name is a string");
        const vars = code(deps, ctx).config;
        return Object.hasOwn(vars, key) ? vars[key] : null;
      }
    }
    throw badRequest(`there is no service operation ${String(service)}.${String(op)}`);
  };
}

function code(deps: ServiceDeps, ctx: ApiContext): CodeSettings {
  return deps.settings.get(ctx.env).code as CodeSettings;
}
