// Push for both environments: registering tokens, accepting sends into the durable queue, and one worker per
// environment that leases due deliveries, hands them to the platform's provider (built from settings, rebuilt
// when they change), and writes every outcome back. A retry waits with exponential backoff and jitter (or the
// provider's Retry-After); permanent failures are never retried.

import type { Client } from "@libsql/core/api";
import type { Logger } from "../log.ts";
import type { EnvName } from "../system/environments.ts";
import { ENVIRONMENTS } from "../system/environments.ts";
import type { Settings } from "../system/settings.ts";
import { checkPayload, platformsFor, shapeFor } from "./payload.ts";
import type { DeliveryResult, PushPlatform, PushProvider } from "./provider.ts";
import { type PushSettings, checkPushSettings, providerFor } from "./providers/from-settings.ts";
import { generateVapidKeys } from "./providers/web-push.ts";
import { type Leased, type Outcome, PushQueue, type Target } from "./queue.ts";
import { TokenStore } from "./token-store.ts";
import { PLATFORM_OF, type TokenType } from "./tokens.ts";

const TYPES_OF: Record<PushPlatform, TokenType> = { ios: "ios", android: "androidgcm", web: "web" };
const NOT_CONFIGURED: Record<PushPlatform, string> = { ios: "APNs is not configured (settings push.apns)", android: "FCM is not configured (settings push.fcm.serviceAccount)", web: "Web Push is not configured" };
export const MAX_ATTEMPTS = 10;
const IDLE_POLL_MS = 250;

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
    case "retry":
      return attempts >= MAX_ATTEMPTS ? { kind: "failed", reason: `gave up after ${attempts} attempts: ${r.reason}` } : { kind: "retry", reason: r.reason, due: now + retryDelay(attempts, r.afterMs) };
  }
}

interface EnvPush {
  tokens: TokenStore;
  queue: PushQueue;
  providers: Map<PushPlatform, { key: string; provider: PushProvider | null; error?: string }>;
  wake?: () => void;
}

export class PushService {
  private readonly envs = new Map<EnvName, EnvPush>();

  constructor(
    dbs: Record<EnvName, Client>,
    private readonly settings: Settings,
    private readonly log: Logger,
  ) {
    for (const env of ENVIRONMENTS) this.envs.set(env, { tokens: new TokenStore(dbs[env]), queue: new PushQueue(dbs[env]), providers: new Map() });
  }

  tokens(env: EnvName): TokenStore {
    return this.envs.get(env)!.tokens;
  }

  queue(env: EnvName): PushQueue {
    return this.envs.get(env)!.queue;
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
    this.envs.get(env)!.wake?.();
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
    const key = JSON.stringify(platform === "ios" ? p.apns : platform === "android" ? [p.fcm, p.concurrency] : [p.web, p.concurrency]);
    const cached = e.providers.get(platform);
    if (cached && cached.key === key) return cached;
    cached?.provider?.close();
    let made: { key: string; provider: PushProvider | null; error?: string };
    try {
      made = { key, provider: providerFor(platform, p) };
    } catch (err) {
      // Settings saved before a check existed, or changed underneath: fail the deliveries with the reason.
      made = { key, provider: null, error: `the ${platform} push settings do not work: ${(err as Error).message}` };
    }
    e.providers.set(platform, made);
    return made;
  }

  /** One pass over due deliveries of an environment; answers how many were handled. */
  async drain(env: EnvName, limit?: number): Promise<number> {
    const e = this.envs.get(env)!;
    const batch = await e.queue.lease(limit ?? this.pushSettings(env).concurrency);
    if (batch.length === 0) return 0;
    const payloads = await e.queue.payloads([...new Set(batch.map((d) => d.notification))]);
    // Each platform's provider once per batch (settings compared and VAPID keys made once, not per delivery).
    const providers = new Map<PushPlatform, { provider: PushProvider | null; error?: string }>();
    for (const platform of new Set(batch.map((d) => d.platform))) providers.set(platform, await this.provider(env, platform));
    const settled = await Promise.all(
      batch.map(async (d: Leased) => {
        const { provider, error } = providers.get(d.platform)!;
        const payload = payloads.get(d.notification);
        if (!provider || !payload) return { d, outcome: { kind: "failed", reason: provider ? "the notification is gone" : (error ?? NOT_CONFIGURED[d.platform]) } as Outcome };
        const id = `${d.notification.toString(16).padStart(16, "0")}${d.id.toString(16).padStart(16, "0")}`;
        const result = await provider.send({ id, token: d.token, payload: shapeFor(PLATFORM_OF[d.type], payload) });
        return { d, outcome: outcomeOf(result, d.attempts) };
      }),
    );
    await e.queue.settle(settled);
    return batch.length;
  }

  /** Start one worker per environment; the returned function stops them (in-flight sends finish). */
  start(): () => Promise<void> {
    let running = true;
    const loops = ENVIRONMENTS.map(async (env) => {
      const e = this.envs.get(env)!;
      await e.queue.releaseLeases();
      while (running) {
        let handled = 0;
        try {
          handled = await this.drain(env);
        } catch (err) {
          this.log.error("push worker failed", { env, message: (err as Error).message });
        }
        if (handled === 0 && running) await new Promise<void>((resolve) => {
          const timer = setTimeout(() => (e.wake = undefined, resolve()), IDLE_POLL_MS);
          e.wake = () => (clearTimeout(timer), e.wake = undefined, resolve());
        });
      }
    });
    return async () => {
      running = false;
      for (const e of this.envs.values()) e.wake?.();
      await Promise.all(loops);
      for (const e of this.envs.values()) for (const p of e.providers.values()) p.provider?.close();
    };
  }
}
