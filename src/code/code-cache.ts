// Custom code's key/value cache: the CodeCache interface (per environment, TTL in milliseconds) and an
// in-memory implementation bounded in entries and bytes, evicting the least recently used. A second node can
// put a shared implementation behind the same interface.

import { badRequest } from "../errors.ts";
import type { EnvName } from "../request-context.ts";

export const MAX_KEY_BYTES = 1024;
export const MAX_VALUE_BYTES = 16 * 1024;
/** The longest TTL (also what ttl <= 0 means). */
export const MAX_TTL_MS = 24 * 60 * 60 * 1000;

export interface CodeCache {
  get(env: EnvName, key: string): Promise<string | null>;
  set(env: EnvName, key: string, value: string, ttlMs: number): Promise<void>;
  delete(env: EnvName, key: string): Promise<boolean>;
}

/** Refuse keys and values outside the limits (400s the guest sees as rejected promises). */
export function checkEntry(key: unknown, value?: unknown): void {
  if (typeof key !== "string" || key.length === 0) throw badRequest("cache: the key must be a non-empty string");
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw badRequest(`cache: keys are at most ${MAX_KEY_BYTES} bytes`);
  if (value === undefined) return;
  if (typeof value !== "string") throw badRequest("cache: values are strings (JSON.stringify objects)");
  if (Buffer.byteLength(value) > MAX_VALUE_BYTES) throw badRequest(`cache: values are at most ${MAX_VALUE_BYTES} bytes`);
}

interface Entry {
  value: string;
  expires: number;
  bytes: number;
}

export class MemoryCodeCache implements CodeCache {
  private envs = new Map<EnvName, { entries: Map<string, Entry>; bytes: number }>();

  constructor(
    private readonly maxEntries = 100_000,
    private readonly maxBytes = 64 * 1024 * 1024,
    private readonly now: () => number = Date.now,
  ) {}

  private space(env: EnvName) {
    let s = this.envs.get(env);
    if (!s) this.envs.set(env, (s = { entries: new Map(), bytes: 0 }));
    return s;
  }

  async get(env: EnvName, key: string): Promise<string | null> {
    checkEntry(key);
    const s = this.space(env);
    const e = s.entries.get(key);
    if (!e) return null;
    s.entries.delete(key);
    if (e.expires <= this.now()) {
      s.bytes -= e.bytes;
      return null;
    }
    s.entries.set(key, e); // most recently used last
    return e.value;
  }

  async set(env: EnvName, key: string, value: string, ttlMs: number): Promise<void> {
    checkEntry(key, value);
    if (typeof ttlMs !== "number" || Number.isNaN(ttlMs)) throw badRequest("cache: ttlMs must be a number of milliseconds");
    const ttl = ttlMs <= 0 || ttlMs > MAX_TTL_MS ? MAX_TTL_MS : ttlMs;
    const s = this.space(env);
    const old = s.entries.get(key);
    if (old) {
      s.entries.delete(key);
      s.bytes -= old.bytes;
    }
    const bytes = key.length * 2 + value.length * 2 + 64;
    s.entries.set(key, { value, expires: this.now() + ttl, bytes });
    s.bytes += bytes;
    for (const [k, e] of s.entries) {
      if (s.entries.size <= this.maxEntries && s.bytes <= this.maxBytes) break;
      s.entries.delete(k);
      s.bytes -= e.bytes;
    }
  }

  async delete(env: EnvName, key: string): Promise<boolean> {
    checkEntry(key);
    const s = this.space(env);
    const e = s.entries.get(key);
    if (!e) return false;
    s.entries.delete(key);
    s.bytes -= e.bytes;
    return e.expires > this.now();
  }
}
