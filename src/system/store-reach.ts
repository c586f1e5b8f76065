// The store's reachability in burrow.ops (operations.ts), kept by the code that sees it: every request to a libSQL
// server tells followStore how it ended, and a request refused with 503 is noted by http/edge.ts (storeAway). Each
// change is logged once, not each failed call, so an outage is two lines in the log however long it lasts.

import type { StoreReach } from "../db/open-store.ts";
import { storeUnreachable } from "../db/store-unreachable.ts";
import type { Logger } from "../log.ts";
import type { Operations } from "./operations.ts";

/** Notes that a call to the store could not reach it (`reason` is short and never holds a URL or token). */
export function storeAway(ops: Operations, reason: string): void {
  ops.store.reachable = false;
  ops.store.lastFailureAt = Date.now();
  ops.store.lastError = reason;
}

/** Reachable again on any answer but 502/503/504; away on a failure storeUnreachable names. */
export function followStore(ops: Operations, log: Pick<Logger, "warn">): StoreReach {
  const away = (reason: string) => {
    if (ops.store.reachable) log.warn("the data store cannot be reached; requests that need it get 503 until it answers", { reason });
    storeAway(ops, reason);
  };
  return {
    answered: (status) => {
      if (status >= 502 && status <= 504) away(`HTTP ${status}`);
      else if (!ops.store.reachable) {
        ops.store.reachable = true;
        log.warn("the data store answers again");
      }
    },
    failed: (e) => {
      const reason = storeUnreachable(e);
      if (reason) away(reason);
    },
  };
}
