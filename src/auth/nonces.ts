// Replay protection for signed requests: a signature seen once within its timestamp window is refused the
// second time. In-process for one node; the interface lets a shared store take over for several nodes.

export interface NonceCache {
  /**
   * Record `key` until `expiresAt` (ms); false when it was already recorded and has not expired. `expiresAt`
   * must follow from the key (the signed timestamp plus the window), so a replay names the same expiry.
   */
  firstUse(key: string, expiresAt: number): boolean;
}

const SLICE_MS = 30_000;
/** Most entries kept at once (about 16 bytes each); past it the slice that expires first is dropped early. */
export const MAX_NONCES = 4_000_000;

/** 52 bits of a key: 32 of CRC-32 and 20 of xxHash32, two cheap hashes that return numbers (no BigInt). */
export function nonceHash(key: string): number {
  return Bun.hash.crc32(key) * 0x100000 + (Bun.hash.xxHash32(key) & 0xfffff);
}

/**
 * Keys are kept as 52-bit hashes in one Set per 30-second slice of expiry time: no object per entry for the
 * garbage collector to walk, a lookup touches the one slice its expiry names, and expiry drops whole slices.
 * A false "replayed" needs two live keys of the same slice to share 52 bits: about 1 in 10^4 with a million
 * keys in one slice, and the client then just signs again.
 */
export class MemoryNonceCache implements NonceCache {
  private readonly slices = new Map<number, Set<number>>();
  private count = 0;
  private sweptAt = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxEntries = MAX_NONCES,
  ) {}

  firstUse(key: string, expiresAt: number): boolean {
    const now = this.now();
    // Past its expiry the signature is outside its window and refused anyway; nothing to record.
    if (expiresAt <= now) return false;
    if (now - this.sweptAt >= 1000) this.sweep(now);
    const slice = Math.floor(expiresAt / SLICE_MS);
    let set = this.slices.get(slice);
    if (!set) this.slices.set(slice, (set = new Set()));
    const h = nonceHash(key);
    if (set.has(h)) return false;
    set.add(h);
    if (++this.count > this.maxEntries) this.dropSlice(Math.min(...this.slices.keys()));
    return true;
  }

  /** Drop the slices whose whole range has expired (at most once a second, not per request). */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const slice of [...this.slices.keys()]) if ((slice + 1) * SLICE_MS <= now) this.dropSlice(slice);
  }

  private dropSlice(slice: number): void {
    this.count -= this.slices.get(slice)?.size ?? 0;
    this.slices.delete(slice);
  }

  get size(): number {
    return this.count;
  }
}
