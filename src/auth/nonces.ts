// Replay protection for signed requests: a signature seen once within its timestamp window is refused the
// second time. In-process for one node; the interface lets a shared store take over for several nodes.

export interface NonceCache {
  /**
   * Record `key` until `expiresAt` (ms); false when it was already recorded and has not expired. `expiresAt`
   * must follow from the key (the signed timestamp plus the window), so a replay names the same expiry.
   */
  firstUse(key: string, expiresAt: number): boolean | Promise<boolean>;
}

const SLICE_MS = 30_000;
/** Most entries kept at once (8 bytes each, tables at most half full); past it the earliest slice goes. */
const MAX_NONCES = 4_000_000;

// A per-process seed: nobody can prepare keys that collide with another client's without knowing it.
const SEED = crypto.getRandomValues(new Uint32Array(2));

/**
 * 52 bits of a key as a number (no BigInt): two seeded 32-bit multiply-xor lanes over the UTF-16 code units,
 * each finished with murmur3's mixer, 32 bits of one and 20 of the other. Plain JavaScript, so no call into
 * native code and no UTF-8 copy of the key.
 */
export function nonceHash(key: string): number {
  let a = SEED[0]! ^ key.length;
  let b = SEED[1]! ^ Math.imul(key.length, 0x9e3779b1);
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x9e3779b1);
    a = (a << 13) | (a >>> 19);
    b = Math.imul(b ^ c, 0x85ebca77);
    b = (b << 17) | (b >>> 15);
  }
  return (fmix32(a) >>> 0) * 0x100000 + (fmix32(b) & 0xfffff);
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Where probing for `v` starts: its 20-bit lane mixed with its 32-bit one, so both spread the cells. */
const firstCell = (v: number, mask: number) => ((v % 0x100000) ^ Math.floor(v / 0x100000)) & mask;

/** An open-addressing set of 52-bit hashes in one Float64Array (0 marks a free cell, so a hash of 0 is stored as 2^52). */
class HashTable {
  private cells = new Float64Array(1024);
  size = 0;

  /** Adds `h`; false when it was already there. */
  add(h: number): boolean {
    const v = h === 0 ? 2 ** 52 : h;
    const mask = this.cells.length - 1;
    let i = firstCell(v, mask);
    let cell = this.cells[i]!;
    while (cell !== 0) {
      if (cell === v) return false;
      i = (i + 1) & mask;
      cell = this.cells[i]!;
    }
    this.cells[i] = v;
    if (++this.size * 2 > this.cells.length) this.grow();
    return true;
  }

  private grow(): void {
    const old = this.cells;
    const cells = new Float64Array(old.length * 2);
    const mask = cells.length - 1;
    for (const v of old) {
      if (v === 0) continue;
      let i = firstCell(v, mask);
      while (cells[i] !== 0) i = (i + 1) & mask;
      cells[i] = v;
    }
    this.cells = cells;
  }
}

/**
 * Keys are kept as 52-bit hashes in one flat table per 30-second slice of expiry time: nothing per entry for
 * the garbage collector to walk, a lookup touches the one slice its expiry names, and expiry drops whole
 * slices. A false "replayed" needs two live keys of the same slice to share 52 bits: about 1 in 10^4 with a
 * million keys in one slice, and the client then just signs again.
 */
export class MemoryNonceCache implements NonceCache {
  private readonly slices = new Map<number, HashTable>();
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
    let table = this.slices.get(slice);
    if (!table) this.slices.set(slice, (table = new HashTable()));
    if (!table.add(nonceHash(key))) return false;
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
