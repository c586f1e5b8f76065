// Replay protection for signed requests: a signature seen once within its timestamp window is refused the
// second time. In-process for one node; the interface lets a shared store take over for several nodes.

export interface NonceCache {
  /** Record `key` until `expiresAt` (ms); false when it was already recorded and has not expired. */
  firstUse(key: string, expiresAt: number): boolean;
}

export class MemoryNonceCache implements NonceCache {
  private readonly seen = new Map<string, number>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  firstUse(key: string, expiresAt: number): boolean {
    const now = this.now();
    if (now >= this.nextSweep) {
      // Entries only arrive after a valid signature, so the map holds at most one window of real traffic.
      for (const [k, exp] of this.seen) if (exp <= now) this.seen.delete(k);
      this.nextSweep = now + 10_000;
    }
    const prev = this.seen.get(key);
    if (prev !== undefined && prev > now) return false;
    this.seen.set(key, expiresAt);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
