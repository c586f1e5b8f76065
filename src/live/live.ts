// Live data for the HTTP layer and custom code (docs/api/live.md): create a stream for a caller, change its
// subscriptions and channels (as that caller only), connect it (a hub per environment feeds it), publish channel
// messages, and the upkeep: prune the change log past its retention, drop streams idle for ten minutes.

import type { Client } from "@libsql/core/api";
import { ApiError, badRequest, unauthorized } from "../errors.ts";
import type { Logger } from "../log.ts";
import { OutageLog } from "../db/store-unreachable.ts";
import type { ApiContext, EnvName, Principal } from "../request-context.ts";
import type { SchemaSet } from "../schema/compiled.ts";
import { pruneChanges } from "./change-feed.ts";
import { checkJoinable, lastMessageId, messageData, readMessages, writeMessage } from "./channels.ts";
import { type Attached, LiveHub } from "./hub.ts";
import type { Sink } from "./sinks.ts";
import {
  type StoredStream,
  STREAM_IDLE_MS,
  createStream,
  deleteStream,
  loadStream,
  sessionLives,
  sweepStreams,
  touchStreams,
  updateStreamState,
} from "./stream-store.ts";
import { checkSubscriptionName, compileSubscription, specOf } from "./subscription.ts";

export interface LiveSettings {
  retentionHours: number;
  streamsPerIp: number;
  subscriptionsPerStream: number;
  channelsPerStream: number;
  bufferBytes: number;
}

export interface LiveDeps {
  envDbs: Record<EnvName, Client>;
  /** The schemas an API version of an environment sees now; undefined when not deployed. */
  schemas(env: EnvName, version: number): SchemaSet | undefined;
  /** The environment's newest schemas. */
  current(env: EnvName): SchemaSet | undefined;
  settings(env: EnvName): LiveSettings;
  log: Logger;
  /** Several nodes share the store: read the log and channel messages every `pollMs` (default 100). */
  remote: boolean;
  pollMs?: number;
}

const ENVS: EnvName[] = ["development", "production"];
const MESSAGE_POLL_MS = 100;

const samePrincipal = (a: Principal, b: Principal) =>
  a.kind === b.kind && (a.kind !== "user" || (b.kind === "user" && a.schema === b.schema && a.username === b.username));

export class Live {
  readonly hubs: Record<EnvName, LiveHub>;
  private readonly messagePositions = new Map<EnvName, number>();
  private messageTimer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: LiveDeps) {
    const pollMs = deps.pollMs ?? (deps.remote ? 100 : 50);
    const hub = (env: EnvName) =>
      new LiveHub({
        env,
        db: deps.envDbs[env],
        schemas: (v) => deps.schemas(env, v),
        current: () => deps.current(env),
        log: deps.log,
        pollMs,
      });
    this.hubs = { development: hub("development"), production: hub("production") };
  }

  /** A stream acting as the caller of `ctx`; its events start with the next change. */
  async createStream(ctx: ApiContext): Promise<{ stream: string; token: string; expires_in: number }> {
    const s = await createStream(ctx.db, ctx.env, ctx.principal, ctx.version, ctx.fileBase());
    return { stream: s.id, token: s.token, expires_in: STREAM_IDLE_MS / 1000 };
  }

  /** The stream `id` of `ctx`'s environment, if `ctx`'s caller is the stream's; 401 otherwise (also for another environment's). */
  private async ownStream(ctx: ApiContext, id: string): Promise<StoredStream> {
    const s = await loadStream(ctx.db, id, null);
    if (!s || s.env !== ctx.env)
      throw unauthorized("no such stream in this environment (streams expire ten minutes after their last connection)");
    if (!samePrincipal(s.principal, ctx.principal)) throw unauthorized("a stream's subscriptions are changed by its own caller only");
    return s;
  }

  private async change(ctx: ApiContext, id: string, fn: Parameters<typeof updateStreamState>[2]): Promise<void> {
    const done = await updateStreamState(ctx.db, id, fn);
    if (done === null) throw unauthorized("no such stream in this environment (streams expire ten minutes after their last connection)");
    this.hubs[ctx.env].nudge();
  }

  async putSubscription(ctx: ApiContext, id: string, name: string, body: unknown): Promise<void> {
    checkSubscriptionName(name);
    const stream = await this.ownStream(ctx, id);
    const spec = specOf(body);
    const schemas = this.deps.schemas(ctx.env, stream.version);
    if (!schemas) throw new ApiError(404, `API version ${stream.version} is not deployed`);
    // Compiled now for its refusals; the hub compiles it again for the stream.
    compileSubscription({ ...ctx, version: stream.version, schemas, principal: stream.principal }, name, spec);
    const limit = this.deps.settings(ctx.env).subscriptionsPerStream;
    await this.change(ctx, id, (state) => {
      if (!(name in state.subscriptions) && Object.keys(state.subscriptions).length >= limit)
        throw new ApiError(429, `a stream holds at most ${limit} subscriptions (setting live.subscriptionsPerStream)`);
      return { ...state, subscriptions: { ...state.subscriptions, [name]: spec } };
    });
  }

  async deleteSubscription(ctx: ApiContext, id: string, name: string): Promise<void> {
    checkSubscriptionName(name);
    await this.ownStream(ctx, id);
    await this.change(ctx, id, (state) => {
      const { [name]: _gone, ...rest } = state.subscriptions;
      return { ...state, subscriptions: rest };
    });
  }

  async joinChannel(ctx: ApiContext, id: string, channel: string): Promise<void> {
    checkJoinable(channel);
    await this.ownStream(ctx, id);
    const limit = this.deps.settings(ctx.env).channelsPerStream;
    await this.change(ctx, id, (state) => {
      if (state.channels.includes(channel)) return state;
      if (state.channels.length >= limit)
        throw new ApiError(429, `a stream joins at most ${limit} channels (setting live.channelsPerStream)`);
      return { ...state, channels: [...state.channels, channel] };
    });
  }

  async leaveChannel(ctx: ApiContext, id: string, channel: string): Promise<void> {
    checkJoinable(channel);
    await this.ownStream(ctx, id);
    await this.change(ctx, id, (state) => ({ ...state, channels: state.channels.filter((c) => c !== channel) }));
  }

  /**
   * The stream to connect, or the refusal: 401 for a wrong token (or an expired stream), 429 past the per-IP limit.
   * `after` is the client's last event id (Last-Event-ID or ?after=).
   */
  async open(env: EnvName, id: string, token: string, ip: string | null): Promise<{ stream: StoredStream; bufferBytes: number }> {
    const db = this.deps.envDbs[env];
    const stream = await loadStream(db, id, token);
    if (!stream) throw unauthorized("invalid stream or token (streams expire ten minutes after their last connection)");
    if (stream.principal.kind === "user" && !(await sessionLives(db, stream.principal.family))) {
      await deleteStream(db, id);
      throw unauthorized("the stream's session ended (logout, expiry, revocation, new password or deleted user); create a new stream");
    }
    const settings = this.deps.settings(env);
    if (this.hubs[env].connectionsFrom(ip) >= settings.streamsPerIp)
      throw new ApiError(429, `at most ${settings.streamsPerIp} open streams per client address (setting live.streamsPerIp)`, {
        headers: { "retry-after": "10" },
      });
    return { stream, bufferBytes: settings.bufferBytes };
  }

  /** Feed a connection; resolves once it is live (or ended). */
  connect(stream: StoredStream, sink: Sink, after: number | null, ip: string | null): Promise<Attached | null> {
    if (this.deps.remote) this.startMessages();
    return this.hubs[stream.env].attach(stream, sink, after, ip);
  }

  /** The connection of `sink` is gone: its stream keeps its subscriptions for ten minutes from now. */
  disconnect(stream: StoredStream, sink: Sink): void {
    this.hubs[stream.env].disconnect(stream.id, sink);
    touchStreams(this.deps.envDbs[stream.env], [stream.id]).catch((e) =>
      this.deps.log.warn("keeping a live stream failed", { error: String(e) }),
    );
  }

  /** Custom code's live.publish: to this node's streams, or through the shared table to every node's. */
  async publish(env: EnvName, channel: string, data: unknown): Promise<void> {
    const text = messageData(data);
    if (this.deps.remote) await writeMessage(this.deps.envDbs[env], channel, text);
    else this.hubs[env].publish(channel, text);
  }

  private startMessages(): void {
    if (this.messageTimer) return;
    const poll = async () => {
      for (const env of ENVS) {
        const hub = this.hubs[env];
        const db = this.deps.envDbs[env];
        if (hub.connected === 0) {
          this.messagePositions.delete(env);
          continue;
        }
        let at = this.messagePositions.get(env);
        if (at === undefined) this.messagePositions.set(env, (at = await lastMessageId(db)));
        for (const m of await readMessages(db, at)) {
          hub.publish(m.channel, m.data);
          this.messagePositions.set(env, m.id);
        }
      }
    };
    let busy = false;
    const quiet = new OutageLog();
    this.messageTimer = setInterval(() => {
      if (busy) return;
      busy = true;
      poll()
        .then(
          () => quiet.ok(),
          (e) => {
            if (quiet.shouldLog(e)) this.deps.log.warn("reading live messages failed", { error: String(e) });
          },
        )
        .finally(() => {
          busy = false;
        });
    }, MESSAGE_POLL_MS);
    this.messageTimer.unref?.();
  }

  /** One upkeep round (the maintenance lease holder runs it): prune the log, drop idle streams. */
  async maintain(now = Date.now()): Promise<void> {
    for (const env of ENVS) {
      const db = this.deps.envDbs[env];
      const hours = this.deps.settings(env).retentionHours;
      while ((await pruneChanges(db, now - hours * 3600_000, 10_000)) === 10_000);
      await sweepStreams(db, now);
    }
  }

  /** (time, events delivered) every 5 s over the last minute, for the rate. */
  private readonly samples: [number, number][] = [];
  private sampler: ReturnType<typeof setInterval> | null = null;

  /**
   * Figures for the status page and /_metrics: open streams and their subscriptions on this node, events handed to
   * connections since start and per second over the last minute, and how long after a write its events went out.
   */
  figures(now = Date.now()): { streams: number; subscriptions: number; delivered: number; eventsPerSecond: number; lagMs: number } {
    let streams = 0;
    let subscriptions = 0;
    let delivered = 0;
    let lagMs = 0;
    for (const env of ENVS) {
      const h = this.hubs[env];
      streams += h.connected;
      subscriptions += h.subscriptions;
      delivered += h.delivered;
      if (h.connected) lagMs = Math.max(lagMs, h.lagMs);
    }
    if (!this.sampler) {
      this.sampler = setInterval(() => this.samples.push([Date.now(), this.figures().delivered]), 5000);
      this.sampler.unref?.();
    }
    while (this.samples.length && this.samples[0]![0] < now - 60_000) this.samples.shift();
    const first = this.samples[0];
    const eventsPerSecond = first && now > first[0] ? Math.round(((delivered - first[1]) / ((now - first[0]) / 1000)) * 10) / 10 : 0;
    return { streams, subscriptions, delivered, eventsPerSecond, lagMs };
  }

  close(): void {
    if (this.messageTimer) clearInterval(this.messageTimer);
    if (this.sampler) clearInterval(this.sampler);
    for (const env of ENVS) this.hubs[env].stop();
  }
}

/** The client's last event id from Last-Event-ID or ?after= (null: none); 400 when it is not an id. */
export function resumeAfter(header: string | null, param: string | null): number | null {
  const v = header ?? param;
  if (v === null || v === "") return null;
  if (!/^\d{1,16}$/.test(v)) throw badRequest("Last-Event-ID (or after) must be an event id");
  return Number(v);
}
