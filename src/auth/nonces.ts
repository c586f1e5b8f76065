// Replay protection for signed requests: a signature seen once within its timestamp window is refused the
// second time. In-process for one node; the interface lets a shared store take over for several nodes.

export interface NonceCache {
  /** Record `key` until `expiresAt` (ms); false when it was already recorded and has not expired. */
  firstUse(key: string, expiresAt: number): boolean;
}

const BUCKET_MS = 30_000;
/** Most entries kept at once (about 16 bytes each); past it the oldest bucket is dropped early. */
export const MAX_NONCES = 4_000_000;

/**
 * Keys are kept as 52-bit hashes in one Set per 30-second slice of expiry time: no object per entry for the
 * garbage collector to walk, and expiry drops whole slices. A false "replayed" needs two of the live keys to
 * share 52 bits: about 1 in 10^4 over a window of a million requests, and the client then just signs again.
 */
export class MemoryNonceCache implements NonceCache {
  private readonly buckets = new Map<number, Set<number>>();
  private count = 0;

  constructor(private readonly now: () => number = Date.now) {}

  firstUse(key: string, expiresAt: number): boolean {
    const now = this.now();
    const h = Number(Bun.hash(key) & 0xfffffffffffffn);
    for (const [slice, set] of this.buckets) {
      if ((slice + 1) * BUCKET_MS <= now) {
        this.count -= set.size;
        this.buckets.delete(slice);
      } else if (set.has(h)) return false;
    }
    const slice = Math.floor(expiresAt / BUCKET_MS);
    let set = this.buckets.get(slice);
    if (!set) this.buckets.set(slice, (set = new Set()));
    set.add(h);
    if (++this.count > MAX_NONCES) {
      const oldest = Math.min(...this.buckets.keys());
      this.count -= this.buckets.get(oldest)!.size;
      this.buckets.delete(oldest);
    }
    return true;
  }

  get size(): number {
    return this.count;
  }
}
