// Push for both environments: registering tokens, accepting sends into the durable queue, and one worker per
// environment that leases due deliveries, hands them to the platform's provider (built from settings, rebuilt
// when they change), and writes every outcome back. A retry waits with exponential backoff and jitter (or the
// provider's Retry-After); permanent failures are never retried.

import type { Client } from "@libsql/core/api";
import type { Logger } from "../log.ts";
import { OutageLog } from "../db/store-unreachable.ts";
import type { EnvName } from "../system/environments.ts";
import { ENVIRONMENTS } from "../system/environments.ts";
import type { Settings } from "../system/settings.ts";
import type { InFlightLimit } from "./in-flight-limit.ts";
import { type LimitedProvider, webPushDestination, withInFlightLimit } from "./limited-provider.ts";
import { checkPayload, platformsFor, shapeFor } from "./payload.ts";
import type { DeliveryResult, PushPlatform, PushProvider } from "./provider.ts";
import { type PushSettings, checkPushSettings, providerFor } from "./providers/from-settings.ts";
import { generateVapidKeys } from "./providers/web-push.ts";
import { type Leased, type Outcome, PushQueue, type Target } from "./queue.ts";
import { TokenStore } from "./token-store.ts";
import { PLATFORM_OF, type TokenType } from "./tokens.ts";

const TYPES_OF: Record<PushPlatform, TokenType> = { ios: "ios", android: "androidgcm", web: "web" };
const NOT_CONFIGURED: Record<PushPlatform, string> = {
  ios: "APNs is not configured (settings push.apns)",
  android: "FCM is not configured (settings push.fcm.serviceAccount)",
  web: "Web Push is not configured",
};
export const MAX_ATTEMPTS = 10;
const IDLE_POLL_MS = 250;
/** Rows leased per statement batch. */
const CHUNK = 100;
/** Outcomes recorded per transaction: fewer means fewer deliveries resent after a crash (sent, not yet recorded). */
const SETTLE_CHUNK = 25;
/** Sends started between turns of the event loop. */
const SLICE = 8;
/** Longest an outcome waits to be recorded. */
const SETTLE_MS = 50;
/**
 * A send waiting for its provider's in-flight limit is not started later than this before its row's lease runs
 * out (it goes back to the queue instead), so it is over before another worker may take the row: longer than a
 * provider's 10 s timeout for one send (FCM looks again after fetching an access token); a shared store's lease is
 * 15 s.
 */
const SEND_MARGIN_MS = 12_000;
/** How often a busy worker reports its in-flight limits. */
const REPORT_MS = 1000;

/** Backoff before attempt n+1: 1 s, 2 s, 4 s ... capped at 1 hour, ±20% jitter; a provider's Retry-After wins. */
export function retryDelay(attempts: number, afterMs?: number, random = Math.random): number {
  if (afterMs !== undefined && afterMs >= 0) return Math.min(afterMs, 3_600_000);
  const base = Math.min(1000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** What the queue records for a provider's answer on the given attempt. */
export function outcomeOf(r: DeliveryResult, attempts: number, now = Date.now()): Outcome {
  switch (r.kind) {
    case "sent":
      return { kind: "sent" };
    case "invalid-token":
      return { kind: "expired", reason: r.reason };
    case "failed":
      return { kind: "failed", reason: r.reason };
    case "not-sent":
      return { kind: "requeue" };
    case "retry":
      return attempts >= MAX_ATTEMPTS
        ? { kind: "failed", reason: `gave up after ${attempts} attempts: ${r.reason}` }
        : { kind: "retry", reason: r.reason, due: now + retryDelay(attempts, r.afterMs) };
  }
}

type Settled = { d: Leased; outcome: Outcome };
/** Per platform: sends allowed in flight now, and the shortest round trip seen (ms; null before the first). */
export type InFlightLimits = Record<
  string,
  {
    limit: number;
    shortestRoundTripMs: number | null;
    destinations?: { destination: string; limit: number; shortestRoundTripMs: number | null }[];
  }
>;
/** Web Push services listed one by one in the limits' report. */
const REPORTED_DESTINATIONS = 10;
interface Prepared {
  payloads: Map<number, Record<string, unknown>>;
  providers: Map<PushPlatform, { provider: PushProvider | null; error?: string }>;
}

interface EnvPush {
  tokens: TokenStore;
  queue: PushQueue;
  providers: Map<PushPlatform, { key: string; provider: LimitedProvider | null; error?: string }>;
  wake?: () => void;
}

export class PushService {
  private readonly envs = new Map<EnvName, EnvPush>();
  /** Called after a send is queued (delivery on another thread is woken through it). */
  onQueued: ((env: EnvName) => void) | null = null;
  /** Called with the providers' in-flight limits while delivering (at most every REPORT_MS) and when the queue runs dry. */
  onLimits: ((env: EnvName, limits: InFlightLimits) => void) | null = null;
  private readonly reportedLimits = new Map<EnvName, InFlightLimits>();

  constructor(
    dbs: Record<EnvName, Client>,
    private readonly settings: Settings,
    readonly log: Logger,
    /** Other nodes deliver from the same store. */
    shared = false,
  ) {
    for (const env of ENVIRONMENTS)
      this.envs.set(env, { tokens: new TokenStore(dbs[env]), queue: new PushQueue(dbs[env], shared), providers: new Map() });
  }

  /** Wake this process's worker of an environment (something was queued). */
  wake(env: EnvName): void {
    this.envs.get(env)!.wake?.();
  }

  tokens(env: EnvName): TokenStore {
    return this.envs.get(env)!.tokens;
  }

  queue(env: EnvName): PushQueue {
    return this.envs.get(env)!.queue;
  }

  /** Whether a delivery waits in either environment's queue. */
  async hasWork(): Promise<boolean> {
    for (const e of this.envs.values()) if (await e.queue.waiting()) return true;
    return false;
  }

  pushSettings(env: EnvName): PushSettings {
    return this.settings.get(env).push as PushSettings;
  }

  /** The settings hook of PUT /_admin/api/settings: refuse push settings that could not work (400). */
  readonly validateSettings = (_env: EnvName, doc: Record<string, unknown>): void => checkPushSettings(doc.push as PushSettings);

  /** Check a payload and queue it for the target; answers how many deliveries were queued. */
  async send(env: EnvName, target: Target, payload: unknown): Promise<{ queued: number }> {
    const checked = checkPayload(payload);
    const types = platformsFor(checked.bytes).map((p) => TYPES_OF[p]);
    const { id, queued } = await this.queue(env).enqueue(target, checked.payload, types);
    this.log.info(`push notification ${id} queued`, { env, target: target.kind, queued, bytes: checked.bytes });
    this.wake(env);
    this.onQueued?.(env);
    return { queued };
  }

  /** The provider of a platform for current settings (rebuilt when they change); VAPID keys are made on first use. */
  private async provider(env: EnvName, platform: PushPlatform): Promise<{ provider: PushProvider | null; error?: string }> {
    let p = this.pushSettings(env);
    if (platform === "web" && !p.web.vapidPublicKey) {
      const keys = generateVapidKeys();
      await this.settings.update(env, { push: { web: { vapidPublicKey: keys.publicKey, vapidPrivateKey: keys.privateKey } } });
      this.log.info("push: generated VAPID keys", { env });
      p = this.pushSettings(env);
    }
    const e = this.envs.get(env)!;
    const key = JSON.stringify([platform === "ios" ? p.apns : platform === "android" ? p.fcm : p.web, p.concurrency]);
    const cached = e.providers.get(platform);
    if (cached && cached.key === key) return cached;
    cached?.provider?.close();
    let made: { key: string; provider: LimitedProvider | null; error?: string };
    try {
      const provider = providerFor(platform, p);
      made = {
        key,
        provider:
          provider &&
          withInFlightLimit(provider, p.concurrency, platform === "web" ? { destinationOf: (m) => webPushDestination(m.token) } : {}),
      };
    } catch (err) {
      // Settings saved before a check existed, or changed underneath: fail the deliveries with the reason.
      made = { key, provider: null, error: `the ${platform} push settings do not work: ${(err as Error).message}` };
    }
    e.providers.set(platform, made);
    return made;
  }

  /**
   * Each provider's adaptive in-flight limit and shortest round trip (ms) in this thread now; for Web Push the
   * sum and the shortest over its push services, each also listed (up to REPORTED_DESTINATIONS).
   */
  inFlightLimits(env: EnvName): InFlightLimits {
    const out: InFlightLimits = {};
    const view = (l: InFlightLimit) => ({
      limit: Math.round(l.limit),
      shortestRoundTripMs: Number.isFinite(l.noLoadMs) ? Number(l.noLoadMs.toFixed(2)) : null,
    });
    for (const [platform, { provider }] of this.envs.get(env)!.providers) {
      const limits = provider?.limits;
      if (!limits || limits.size === 0) continue;
      if (limits.size === 1 && limits.has("")) {
        out[platform] = view(limits.get("")!);
        continue;
      }
      const each = [...limits].map(([destination, l]) => ({ destination, ...view(l) }));
      const rtts = each.map((d) => d.shortestRoundTripMs).filter((x): x is number => x !== null);
      out[platform] = {
        limit: each.reduce((a, d) => a + d.limit, 0),
        shortestRoundTripMs: rtts.length ? Math.min(...rtts) : null,
        destinations: each.slice(0, REPORTED_DESTINATIONS),
      };
    }
    return out;
  }

  /** The limits where deliveries run: as the delivery thread last reported them, else this thread's own. */
  deliveryLimits(env: EnvName): InFlightLimits {
    return this.reportedLimits.get(env) ?? this.inFlightLimits(env);
  }

  /** The delivery thread's report of its limits (delivery-host.ts). */
  reportLimits(env: EnvName, limits: InFlightLimits): void {
    this.reportedLimits.set(env, limits);
  }

  /** Payloads and providers for a leased chunk (payloads cached by notification, providers once per platform). */
  private async prepare(env: EnvName, batch: readonly Leased[], payloads: Map<number, Record<string, unknown>>): Promise<Prepared> {
    const missing = [...new Set(batch.map((d) => d.notification))].filter((n) => !payloads.has(n));
    if (missing.length) {
      if (payloads.size > 1000) payloads.clear();
      for (const [id, payload] of await this.queue(env).payloads(missing)) payloads.set(id, payload);
    }
    const providers = new Map<PushPlatform, { provider: PushProvider | null; error?: string }>();
    for (const platform of new Set(batch.map((d) => d.platform))) providers.set(platform, await this.provider(env, platform));
    return { payloads, providers };
  }

  /** Deliver one leased row; answers its outcome (never throws: anything thrown is a retry). */
  private async deliver(d: Leased, { payloads, providers }: Prepared): Promise<Settled> {
    const { provider, error } = providers.get(d.platform)!;
    const payload = payloads.get(d.notification);
    if (!provider || !payload)
      return { d, outcome: { kind: "failed", reason: provider ? "the notification is gone" : (error ?? NOT_CONFIGURED[d.platform]) } };
    const id = `${d.notification.toString(16).padStart(16, "0")}${d.id.toString(16).padStart(16, "0")}`;
    try {
      const result = await provider.send({
        id,
        token: d.token,
        payload: shapeFor(PLATFORM_OF[d.type], payload),
        notAfter: d.leaseUntil - SEND_MARGIN_MS,
      });
      return { d, outcome: outcomeOf(result, d.attempts) };
    } catch (err) {
      return { d, outcome: outcomeOf({ kind: "retry", reason: `push: ${(err as Error).message}` }, d.attempts) };
    }
  }

  /**
   * Pick up settings another thread or process saved (the configuration epoch moved); answers whether they
   * changed. Runs before every lease: the worker of the delivery thread keeps its own copy of the settings, and a
   * lease can take a send queued just after new push settings were saved before the wake-up of that send arrives
   * (the idle poll), so without this look it would deliver with the settings of before: no credentials, and the
   * deliveries fail as "not configured", never to be retried.
   */
  private async refreshSettings(env: EnvName): Promise<boolean> {
    const quiet = this.outageLog(`settings ${env}`);
    try {
      const changed = await this.settings.refresh();
      quiet.ok();
      return changed;
    } catch (err) {
      if (quiet.shouldLog(err)) this.log.warn("push worker could not look for changed settings", { env, message: (err as Error).message });
      return false;
    }
  }

  /** While the store is away, each of the worker's failures is logged once, not each poll (store-unreachable.ts). */
  readonly #outageLogs = new Map<string, OutageLog>();
  private outageLog(task: string): OutageLog {
    let l = this.#outageLogs.get(task);
    if (!l) this.#outageLogs.set(task, (l = new OutageLog()));
    return l;
  }

  /** One pass over due deliveries of an environment (lease, send all, record); answers how many were handled. */
  async drain(env: EnvName, limit?: number): Promise<number> {
    const e = this.envs.get(env)!;
    await this.refreshSettings(env);
    const batch = await e.queue.lease(limit ?? this.pushSettings(env).concurrency);
    if (batch.length === 0) return 0;
    const prepared = await this.prepare(env, batch, new Map());
    await e.queue.settle(await Promise.all(batch.map((d) => this.deliver(d, prepared))));
    return batch.length;
  }

  /**
   * The worker of one environment, a pipeline: it keeps up to 3 x `push.concurrency` deliveries leased, leasing
   * more in chunks as sends finish (a slow endpoint holds one slot, never a whole batch), records outcomes in
   * chunks (every SETTLE_CHUNK outcomes or SETTLE_MS), and starts sends SLICE at a time with a turn of the event loop
   * in between, so API requests are served while a broadcast is going out. When stopped it leases nothing
   * more, lets the sends in flight finish and records them.
   */
  private async work(env: EnvName, running: () => boolean): Promise<void> {
    const e = this.envs.get(env)!;
    const payloads = new Map<number, Record<string, unknown>>();
    let inFlight = 0;
    let done: Settled[] = [];
    let lastSettle = Date.now();
    let nextLeaseAt = 0;
    let wakeLoop: (() => void) | null = null;
    let handled = 0;
    let reportedAt = 0;
    await e.queue.releaseLeases();
    for (;;) {
      // Up to push.concurrency sends in flight to each of the three providers (their adaptive limits keep it lower
      // when round trips stretch); the rows past a provider's limit wait in its queue, unsent.
      const limit = 3 * Math.max(1, this.pushSettings(env).concurrency);
      const settleAt = Math.min(SETTLE_CHUNK, limit);
      if (done.length >= settleAt || (done.length > 0 && (inFlight === 0 || !running() || Date.now() - lastSettle >= SETTLE_MS))) {
        const outcomes = done;
        done = [];
        try {
          await e.queue.settle(outcomes);
        } catch (err) {
          // The rows stay leased; after the lease they are due again (a resend keeps its collapse id).
          this.log.error("push worker could not record outcomes", { env, count: outcomes.length, message: (err as Error).message });
        }
        lastSettle = Date.now();
        continue;
      }
      const room = limit - inFlight;
      if (running() && Date.now() >= nextLeaseAt && room >= Math.min(CHUNK, limit)) {
        // Settings saved elsewhere before these rows were queued apply to them (the limit and chunk size too).
        if (await this.refreshSettings(env)) continue;
        const want = Math.min(CHUNK, room);
        let batch: Leased[] = [];
        const quiet = this.outageLog(`lease ${env}`);
        try {
          batch = await e.queue.lease(want);
          quiet.ok();
          if (batch.length) {
            const prepared = await this.prepare(env, batch, payloads);
            for (let i = 0; i < batch.length; i++) {
              inFlight++;
              void this.deliver(batch[i]!, prepared).then((r) => {
                inFlight--;
                handled++;
                done.push(r);
                if (this.onLimits && Date.now() - reportedAt >= REPORT_MS) {
                  reportedAt = Date.now();
                  this.onLimits(env, this.inFlightLimits(env));
                }
                wakeLoop?.();
              });
              if ((i + 1) % SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
            }
          }
        } catch (err) {
          if (quiet.shouldLog(err)) this.log.error("push worker failed", { env, message: (err as Error).message });
        }
        // Nothing more due now: look again after a pause (a send or a stop wakes the worker sooner).
        if (batch.length < want) nextLeaseAt = Date.now() + IDLE_POLL_MS;
        if (batch.length > 0) continue;
      }
      if (!running() && inFlight === 0) return;
      if (handled > 0 && inFlight === 0 && done.length === 0) {
        // The queue ran dry: say how much went out and where each provider's in-flight limit settled.
        const limits = this.inFlightLimits(env);
        this.log.info("push deliveries drained", { env, handled, inFlightLimits: limits });
        this.onLimits?.(env, limits);
        handled = 0;
      }
      await new Promise<void>((resolve) => {
        const wait = inFlight > 0 || done.length > 0 ? SETTLE_MS : Math.max(1, nextLeaseAt - Date.now());
        const finish = () => {
          clearTimeout(timer);
          wakeLoop = null;
          e.wake = undefined;
          resolve();
        };
        const timer = setTimeout(finish, wait);
        wakeLoop = finish;
        e.wake = () => {
          nextLeaseAt = 0;
          finish();
        };
      });
    }
  }

  /** Start one worker per environment; the returned function stops them (in-flight sends finish and are recorded). */
  start(): () => Promise<void> {
    let running = true;
    const loops = ENVIRONMENTS.map((env) => this.work(env, () => running));
    return async () => {
      running = false;
      for (const e of this.envs.values()) e.wake?.();
      await Promise.all(loops);
      for (const e of this.envs.values()) for (const p of e.providers.values()) p.provider?.close();
    };
  }
}
