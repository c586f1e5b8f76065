// A push provider behind adaptive in-flight limits (in-flight-limit.ts), one per destination: APNs and FCM are one
// service each, Web Push is one per push service (the subscription endpoint's origin: Google's, Mozilla's and
// Apple's answer at different round trips, and a broadcast meets them in clusters). Sends beyond a destination's
// limit wait their turn in order (one whose turn comes after its `notAfter` is answered `not-sent`, unsent); every
// finished send is a round-trip sample. The provider's own bounds (APNs streams, the fetch providers' semaphores)
// stay as they are, at push.concurrency, above these limits.

import { InFlightLimit } from "./in-flight-limit.ts";
import type { DeliveryResult, PushMessage, PushProvider } from "./provider.ts";

export interface LimitedProvider extends PushProvider {
  /** The limit of each destination seen (key "" when the provider is one destination). */
  readonly limits: ReadonlyMap<string, InFlightLimit>;
  /** Sends started and not yet answered, all destinations. */
  readonly inFlight: number;
}

/** Destinations tracked at once; past this, idle ones are forgotten (their limits start over when seen again). */
export const MAX_DESTINATIONS = 64;

interface Gate {
  limit: InFlightLimit;
  inFlight: number;
  waiting: (() => void)[];
  head: number;
}

/** The push service a Web Push subscription (JSON text) belongs to: its endpoint's origin. */
export function webPushDestination(token: string): string {
  try {
    const endpoint = (JSON.parse(token) as { endpoint?: unknown }).endpoint;
    return typeof endpoint === "string" ? new URL(endpoint).origin : "";
  } catch {
    return "";
  }
}

export function withInFlightLimit(
  provider: PushProvider,
  max: number,
  opts: { destinationOf?: (message: PushMessage) => string; now?: () => number; wallClock?: () => number } = {},
): LimitedProvider {
  const now = opts.now ?? (() => performance.now());
  const wallClock = opts.wallClock ?? Date.now;
  const gates = new Map<string, Gate>();
  const limits = new Map<string, InFlightLimit>();
  let inFlight = 0;

  const gateOf = (key: string): Gate => {
    let g = gates.get(key);
    if (g) return g;
    if (gates.size >= MAX_DESTINATIONS) {
      for (const [k, old] of gates) {
        if (old.inFlight === 0 && old.head === old.waiting.length) {
          gates.delete(k);
          limits.delete(k);
        }
      }
    }
    g = { limit: new InFlightLimit({ max }), inFlight: 0, waiting: [], head: 0 };
    gates.set(key, g);
    limits.set(key, g.limit);
    return g;
  };

  /** Start as many of a gate's waiting sends as its (possibly moved) limit leaves room for. */
  const pump = (g: Gate) => {
    while (g.head < g.waiting.length && g.inFlight < g.limit.limit) {
      const next = g.waiting[g.head]!;
      g.waiting[g.head++] = undefined as never;
      g.inFlight++; // held for the waiter, which takes it over (or gives it back)
      next();
    }
    if (g.head > 1024 && g.head * 2 > g.waiting.length) {
      g.waiting = g.waiting.slice(g.head);
      g.head = 0;
    }
  };

  const run = async (g: Gate, message: PushMessage): Promise<DeliveryResult> => {
    const started = now();
    const depth = ++g.inFlight;
    inFlight++;
    let result: DeliveryResult;
    try {
      result = await provider.send(message);
    } catch (err) {
      result = { kind: "retry", reason: `push: ${(err as Error).message}` };
    }
    g.inFlight--;
    inFlight--;
    const finished = now();
    g.limit.sample(finished - started, depth, result.kind === "retry", finished);
    pump(g);
    return result;
  };

  return {
    platform: provider.platform,
    limits,
    get inFlight() {
      return inFlight;
    },
    async send(message: PushMessage): Promise<DeliveryResult> {
      const g = gateOf(opts.destinationOf?.(message) ?? "");
      if (g.inFlight < g.limit.limit && g.head === g.waiting.length) return run(g, message);
      await new Promise<void>((resolve) => g.waiting.push(resolve));
      g.inFlight--; // the slot held for us; run() takes it again
      if (message.notAfter !== undefined && wallClock() > message.notAfter) {
        pump(g); // our turn came too late: pass the slot on, unsent
        return { kind: "not-sent" };
      }
      return run(g, message);
    },
    close(): void {
      provider.close();
    },
  };
}
