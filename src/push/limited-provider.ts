// A push provider behind its adaptive in-flight limit (in-flight-limit.ts): sends beyond the limit wait their
// turn in order (one whose turn comes after its `notAfter` is answered `not-sent`, unsent); every finished send is
// a round-trip sample. The provider's own bounds (APNs streams, the
// fetch providers' semaphores) stay as they are, at push.concurrency, above this limit.

import { InFlightLimit } from "./in-flight-limit.ts";
import type { DeliveryResult, PushMessage, PushProvider } from "./provider.ts";

export interface LimitedProvider extends PushProvider {
  readonly limit: InFlightLimit;
  /** Sends started and not yet answered. */
  readonly inFlight: number;
}

export function withInFlightLimit(provider: PushProvider, max: number, now: () => number = () => performance.now(), wallClock: () => number = Date.now): LimitedProvider {
  const limit = new InFlightLimit({ max });
  let inFlight = 0;
  let waiting: (() => void)[] = [];
  let head = 0;

  const run = async (message: PushMessage): Promise<DeliveryResult> => {
    const started = now();
    const depth = ++inFlight;
    let result: DeliveryResult;
    try {
      result = await provider.send(message);
    } catch (err) {
      result = { kind: "retry", reason: `push: ${(err as Error).message}` };
    }
    inFlight--;
    const finished = now();
    limit.sample(finished - started, depth, result.kind === "retry", finished);
    pump();
    return result;
  };

  /** Start as many waiting sends as the (possibly moved) limit leaves room for. */
  const pump = () => {
    while (head < waiting.length && inFlight < limit.limit) {
      const next = waiting[head]!;
      waiting[head++] = undefined as never;
      inFlight++; // held for the waiter, which takes it over (or gives it back)
      next();
    }
    if (head > 1024 && head * 2 > waiting.length) {
      waiting = waiting.slice(head);
      head = 0;
    }
  };

  return {
    platform: provider.platform,
    limit,
    get inFlight() {
      return inFlight;
    },
    async send(message: PushMessage): Promise<DeliveryResult> {
      if (inFlight < limit.limit && head === waiting.length) return run(message);
      await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight--; // the slot held for us; run() takes it again
      if (message.notAfter !== undefined && wallClock() > message.notAfter) {
        pump(); // our turn came too late: pass the slot on, unsent
        return { kind: "not-sent" };
      }
      return run(message);
    },
    close(): void {
      provider.close();
    },
  };
}
