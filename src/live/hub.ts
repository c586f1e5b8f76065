// The live streams connected to this node for one environment, fed from the change log (docs/decisions/live.md):
// the hub tails the log in id order and hands each change to the subscriptions of its schema (an index, so a write
// costs nothing for streams that do not watch it), ends the streams of sessions that ended, applies state changes
// of streams, and delivers channel messages. A connecting stream first replays what it missed from the log, with
// its state as it was at each id, while the hub buffers newer changes for it; then it joins the live feed.

import type { Client } from "@libsql/core/api";
import type { Logger } from "../log.ts";
import { OutageLog } from "../db/store-unreachable.ts";
import type { ApiContext, EnvName } from "../request-context.ts";
import type { SchemaSet } from "../schema/compiled.ts";
import { type Change, type StreamFilter, canResume, logBounds, readChanges, readChangesFor } from "./change-feed.ts";
import { PreparedChange, type RoleMembers, eventOf, ownerLookups } from "./dispatch.ts";
import type { Sink } from "./sinks.ts";
import { type StoredStream, type StreamState, stateAt, statesAfter, touchStreams } from "./stream-store.ts";
import { type CompiledSubscription, compileSubscription } from "./subscription.ts";
import { loadRoles, loadOwnerFields } from "./lookups.ts";
import { SchemaSubs } from "./schema-subs.ts";

const PAGE = 500;
const HEARTBEAT_MS = 15_000;
const TOUCH_MS = 60_000;

export interface HubDeps {
  env: EnvName;
  db: Client;
  /** The schemas an API version sees now (0: development); undefined when it is not deployed. */
  schemas(version: number): SchemaSet | undefined;
  /** The environment's newest schemas (development's, or production's latest version): where roles are defined. */
  current(): SchemaSet | undefined;
  log: Logger;
  /** How often the log is read while streams are connected (a nudge reads it at once). */
  pollMs: number;
}

export interface Attached {
  readonly stored: StoredStream;
  readonly ctx: ApiContext;
  readonly sink: Sink;
  readonly ip: string | null;
  subs: Map<string, CompiledSubscription>;
  channels: Set<string>;
  /** Changes that arrived while the stream replays; null once it is live. */
  buffered: PreparedChange[] | null;
}

export class LiveHub {
  /** Every change up to this id has been handed to the connected streams. */
  position = 0;
  private started = false;
  private readonly streams = new Map<string, Attached>();
  private readonly bySchema = new Map<string, SchemaSubs>();
  private readonly replaying = new Set<Attached>();
  private roles: RoleMembers | null = null;
  private running = false;
  private again = false;
  private timers: ReturnType<typeof setInterval>[] = [];
  /** Events handed to connections since start (the status page turns it into a rate). */
  delivered = 0;
  /** How long after it was written the newest change was handed on (ms). */
  lagMs = 0;

  constructor(private readonly deps: HubDeps) {}

  get connected(): number {
    return this.streams.size;
  }

  get subscriptions(): number {
    let n = 0;
    for (const a of this.streams.values()) n += a.subs.size;
    return n;
  }

  private readonly perIp = new Map<string | null, number>();

  /** Streams connected per client IP (the per-IP limit). */
  connectionsFrom(ip: string | null): number {
    return this.perIp.get(ip) ?? 0;
  }

  isConnected(id: string): boolean {
    return this.streams.has(id);
  }

  /** Read the log now (after a write on this node, or a stream's new state). */
  nudge(): void {
    if (this.started) void this.tick();
  }

  private async start(): Promise<void> {
    if (this.started) return;
    this.position = (await logBounds(this.deps.db)).latest;
    if (this.started) return;
    this.started = true;
    // Once started, the hub tails the log until the server stops (also while no stream is connected), so what it
    // caches (role members) follows every change.
    this.roles = null;
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref?.();
      this.timers.push(t);
    };
    every(this.deps.pollMs, () => void this.tick());
    every(HEARTBEAT_MS, () => {
      for (const a of this.streams.values()) if (a.buffered === null) a.sink.position(this.position);
    });
    every(TOUCH_MS, () => {
      touchStreams(this.deps.db, [...this.streams.keys()]).catch((e) =>
        this.deps.log.warn("keeping live streams failed", { error: String(e) }),
      );
    });
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.started = false;
    for (const a of [...this.streams.values()]) a.sink.close();
  }

  /**
   * Connect a stream: `ready`, then what it missed after `after` (default: since it was created), then live. A gap the
   * log no longer holds (or an id from before a restore) gets `reset` instead of a replay.
   */
  async attach(stored: StoredStream, sink: Sink, after: number | null, ip: string | null): Promise<Attached | null> {
    await this.start();
    const schemas = this.deps.schemas(stored.version);
    if (!schemas) {
      sink.send(null, "end", JSON.stringify({ reason: `API version ${stored.version} is no longer deployed` }));
      sink.close();
      return null;
    }
    const ctx: ApiContext = {
      env: this.deps.env,
      version: stored.version,
      db: this.deps.db,
      schemas,
      infer: false,
      principal: stored.principal,
      fileBase: () => stored.fileBase,
    };
    const a: Attached = { stored, ctx, sink, ip, subs: new Map(), channels: new Set(), buffered: [] };
    // A reconnect the old connection has not noticed yet: the new one takes its place.
    const previous = this.streams.get(stored.id);
    this.streams.set(stored.id, a);
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
    if (previous) {
      this.forget(previous);
      previous.sink.close();
    }
    this.replaying.add(a);
    const upTo = this.position;
    sink.send(null, "ready", JSON.stringify({ stream: stored.id }));
    let from = Math.max(after ?? stored.fromId, stored.fromId);
    try {
      if (!canResume(from, await logBounds(this.deps.db))) {
        sink.send(upTo, "reset", JSON.stringify({ reason: "the change log no longer holds every change since your last id; reload" }));
        this.setState(a, stored.state);
        from = upTo;
      } else this.setState(a, await stateAt(this.deps.db, stored.id, from, stored));
      // Only what this stream can need: the schemas of any state it has in the range, its own rows, resets.
      const states = [
        { subscriptions: Object.fromEntries([...a.subs].map(([n, s]) => [n, s.spec])) },
        ...(await statesAfter(this.deps.db, stored.id, from, upTo)),
      ];
      const filter: StreamFilter = {
        schemas: [...new Set(states.flatMap((st) => Object.values(st.subscriptions).map((s) => s.schema)))],
        stream: stored.id,
        family: stored.principal.kind === "user" ? stored.principal.family : null,
      };
      for (;;) {
        const rows = await readChangesFor(this.deps.db, from, PAGE, upTo, filter);
        for (const row of rows) await this.replay(a, new PreparedChange(row));
        if (rows.length < PAGE || sink.closed) break;
        from = rows[rows.length - 1]!.id;
      }
      while (a.buffered!.length && !sink.closed) await this.replay(a, a.buffered!.shift()!);
    } catch (e) {
      this.deps.log.warn("replaying a live stream failed", { error: String(e) });
      sink.close();
    }
    this.replaying.delete(a);
    if (sink.closed || this.streams.get(stored.id) !== a) {
      this.detach(a);
      return null;
    }
    a.buffered = null;
    for (const sub of a.subs.values()) this.index(sub, a);
    sink.position(this.position);
    return a;
  }

  /** The connection of `sink` went away: detach its stream if that is still its connection. */
  disconnect(id: string, sink: Sink): void {
    const a = this.streams.get(id);
    if (a?.sink === sink) this.detach(a);
  }

  /** The stream's connection went away (or was replaced); its subscriptions stay stored for a reconnect. */
  detach(a: Attached): void {
    if (this.streams.get(a.stored.id) !== a) return;
    this.streams.delete(a.stored.id);
    this.forget(a);
  }

  /** Drop a connection's subscriptions and count (its stream's entry is already gone or taken by another). */
  private forget(a: Attached): void {
    this.replaying.delete(a);
    const left = (this.perIp.get(a.ip) ?? 1) - 1;
    if (left > 0) this.perIp.set(a.ip, left);
    else this.perIp.delete(a.ip);
    if (a.buffered === null) for (const sub of a.subs.values()) this.unindex(sub);
  }

  /** Deliver a channel message to the streams here that receive the channel. */
  publish(channel: string, data: string): number {
    let n = 0;
    const payload = `{"channel":${JSON.stringify(channel)},"data":${data}}`;
    for (const a of this.streams.values()) {
      const p = a.stored.principal;
      if (a.channels.has(channel) || (p.kind === "user" && channel === `user:${p.username}`))
        if (a.sink.send(null, "message", payload)) n++;
    }
    this.delivered += n;
    return n;
  }

  private index(sub: CompiledSubscription, a: Attached): void {
    let m = this.bySchema.get(sub.schema.name);
    if (!m) this.bySchema.set(sub.schema.name, (m = new SchemaSubs()));
    m.add(sub, a);
  }

  private unindex(sub: CompiledSubscription): void {
    const m = this.bySchema.get(sub.schema.name);
    m?.delete(sub);
    if (m?.size === 0) this.bySchema.delete(sub.schema.name);
  }

  /** Compile a stream's state; a subscription that no longer compiles (its schema or field went) is reported and left out. */
  private setState(a: Attached, state: StreamState): void {
    const live = a.buffered === null;
    if (live) for (const sub of a.subs.values()) this.unindex(sub);
    a.subs = new Map();
    const schemas = this.deps.schemas(a.stored.version);
    for (const [name, spec] of Object.entries(state.subscriptions)) {
      try {
        a.subs.set(name, compileSubscription({ ...a.ctx, schemas: schemas ?? a.ctx.schemas }, name, spec));
      } catch (e) {
        a.sink.send(null, "error", JSON.stringify({ subscription: name, error: (e as Error).message }));
      }
    }
    a.channels = new Set(state.channels);
    if (live) for (const sub of a.subs.values()) this.index(sub, a);
  }

  /** While the store is away the tail keeps polling; its failure is logged once (store-unreachable.ts). */
  private readonly tailLog = new OutageLog();

  private async tick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        for (;;) {
          const rows = await readChanges(this.deps.db, this.position, PAGE);
          for (const row of rows) await this.dispatch(row);
          if (rows.length < PAGE) break;
        }
      } while (this.again && this.started);
      this.tailLog.ok();
    } catch (e) {
      if (this.tailLog.shouldLog(e)) this.deps.log.warn("reading the change log failed", { env: this.deps.env, error: String(e) });
    } finally {
      this.running = false;
    }
  }

  /** Hand one change to every stream it concerns; synchronous after its lookups, so `position` moves with it. */
  private async dispatch(row: Change): Promise<void> {
    const p = new PreparedChange(row);
    const indexed = row.schema === null ? undefined : this.bySchema.get(row.schema);
    const subs = indexed?.candidates(p.object(0), p.object(1));
    if (subs?.length)
      await this.lookups(
        p,
        subs.map(([sub]) => sub),
      );
    if (row.schema === "aclrole") this.roles = null;
    switch (row.kind) {
      case "create":
      case "update":
      case "delete":
        if (subs)
          for (const [sub, a] of subs) {
            const ev = eventOf(sub, p, this.roles);
            if (ev && a.sink.send(row.id, ev.kind, ev.data)) this.delivered++;
          }
        break;
      default: {
        const targets = row.kind === "reset" ? [...this.streams.values()] : [...this.streams.values()].filter((a) => concerns(a, row));
        for (const a of targets) if (a.buffered === null) this.control(a, p);
      }
    }
    for (const a of this.replaying) a.buffered!.push(p);
    this.position = row.id;
    this.lagMs = Math.max(0, Date.now() - row.at);
  }

  /** One change for a stream that is replaying: its lookups, then what the live feed would have done. */
  private async replay(a: Attached, p: PreparedChange): Promise<void> {
    // A replay waits for the client to read (it may be thousands of events); the live feed never does.
    for (let wait = a.sink.room(); wait; wait = a.sink.room()) await wait;
    const row = p.change;
    if (row.kind === "create" || row.kind === "update" || row.kind === "delete") {
      const subs = [...a.subs.values()].filter((s) => s.schema.name === row.schema);
      if (subs.length === 0) return;
      await this.lookups(p, subs);
      for (const sub of subs) {
        const ev = eventOf(sub, p, this.roles);
        if (ev && a.sink.send(row.id, ev.kind, ev.data)) this.delivered++;
      }
    } else if (row.kind === "reset" || concerns(a, row)) this.control(a, p);
  }

  /** Session ends, state changes and resets for one stream. */
  private control(a: Attached, p: PreparedChange): void {
    const row = p.change;
    if (row.kind === "session") {
      a.sink.send(null, "end", JSON.stringify({ reason: "the session ended (logout, expiry, revocation, new password or deleted user)" }));
      a.sink.close();
    } else if (row.kind === "stream") this.setState(a, JSON.parse(row.after!) as StreamState);
    else if (row.kind === "reset") a.sink.send(row.id, "reset", JSON.stringify({ reason: "the data was restored from a backup; reload" }));
  }

  /** Fetch what the subscriptions' read rules need beyond the object: role members, owners' relationship fields. */
  private async lookups(p: PreparedChange, iterable: Iterable<CompiledSubscription>): Promise<void> {
    const subs = [...iterable];
    const owners = new Set<string>();
    let roles = false;
    for (const sub of subs) {
      if (sub.rule.kind === "role") roles = true;
      else ownerLookups(sub.rule, p, owners);
    }
    if (roles && this.roles === null) this.roles = await loadRoles(this.deps.db, this.deps.current()?.schemas.get("aclrole"));
    if (owners.size) await loadOwnerFields(this.deps.db, subsSchemas(subs), owners, p.ownerFields);
  }
}

/** Whether a session or stream row is about this stream. */
function concerns(a: Attached, row: Change): boolean {
  if (row.kind === "stream") return row.object === a.stored.id;
  if (row.kind === "session") return a.stored.principal.kind === "user" && a.stored.principal.family === row.object;
  return false;
}

function subsSchemas(subs: readonly CompiledSubscription[]): Map<string, { table: string; pk: string }> {
  const out = new Map<string, { table: string; pk: string }>();
  for (const sub of subs)
    if (sub.rule.kind === "ownerRelationship")
      for (const v of sub.rule.via) out.set(v.userSchema.name, { table: v.userSchema.table, pk: v.userSchema.pk });
  return out;
}
